#!/usr/bin/env bash
# tools/gpu/checks.sh BUILD_DIR [STEP...] -- the GPU checks and benchmarks,
# run on a machine with a GPU from a build made elsewhere, each step's logs
# written to $OUT (./gpu-out when OUT is unset) and a summary to stdout.
#
# Steps (default: tests difftest programs):
#   tests     tests/gpu through lit (tools/gpu/run.sh)
#   difftest  1000 random programs (50 files x 20 fns), interpreter vs the
#             fused cuda, nvrtc and --no-fusion builds (tests/fuzz/difftest.py)
#   programs  fuse-run over every example and lit program, both targets, at
#             the edge shapes (tools/gpu/lit_programs.py)
#   sanitize  tests/gpu under compute-sanitizer: memcheck over all of it,
#             racecheck, initcheck and synccheck over the reduction and row tests
#             (SAN_FILTER=. runs them over all of it too; SAN_TOOLS picks the
#             tools, default all four; T_SAN is each tool's time limit)
#   bench     the benchmark suite in f32, bf16 and f16 (tools/bench/bench.py),
#             small_bias_relu timed from C (tools/bench/small_bias_relu.c), and
#             the bare graph-launch floor beside it (tools/bench/graph_floor.cu)
#   scale     the suite's scaling (2^20, 2^24, 2^28) and launch sweep
#   points    fusec's symbolic build at chosen sweep points against torch eager
#             (POINT_CASES, default softmax_rows,layernorm_rows,rmsnorm;
#             POINT_SIZES, default 77,333,1024,20000,32000)
#   profile-points  Nsight Compute over fusec's kernels at those points
#   profile   Nsight Compute over fusec's and torch.compile's kernels for
#             PROFILE_CASES (default colsum,chain12,softmax_rows) in f32 and
#             softmax_rows in bf16: throughput, memory, occupancy, launch (csv)
#
#   build here:  cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release &&
#                cmake --build build-dev -j2 --target fusec fusert fusert_static fusert-cache nvrtc-check
#   (fusert_static and fusert-cache: tests/gpu/c-drivers.test installs the build
#   for its cmake flavour, and the install takes every installed target)
#   then run this script there with build-dev copied along (tools/gpu/run.sh
#   says where lit and FileCheck come from when that machine lacks them).
set -o pipefail
export PYTHONUNBUFFERED=1
B=${1:-build-dev}
shift
steps=${*:-tests difftest programs}
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
export FUSERT_CACHE_DIR=/tmp/fusec-gpu-checks-cache
t00=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t00 )) s] $*"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt"
for step in $steps; do
  case $step in
  tests)
    stamp "tests/gpu"
    timeout ${T_TESTS:-200} tools/gpu/run.sh "$B" -v -j 14 > "$OUT/gpu-tests.log" 2>&1
    echo "gpu tests rc=$?"; grep -E "^(PASS|FAIL|UNRES|UNSUP|XFAIL|XPASS)|Passed|Failed|Unsupported" "$OUT/gpu-tests.log"
    ;;
  difftest)
    stamp "difftest"
    timeout ${T_DIFF:-260} python3 tests/fuzz/difftest.py --fusec "$B/fusec" --runtime-lib "$B/runtime" \
        --seed ${DIFF_SEED:-2026} --files ${DIFF_FILES:-50} --fns 20 --jobs 15 --run-jobs 10 \
        > "$OUT/difftest.log" 2>&1
    echo "difftest rc=$?"; grep -E "MISMATCH|FAIL" "$OUT/difftest.log" | head -40; tail -2 "$OUT/difftest.log"
    ;;
  programs)
    stamp "lit programs"
    timeout ${T_PROG:-240} python3 tools/gpu/lit_programs.py "$B" --jobs 15 --log "$OUT/programs-detail.log" \
        > "$OUT/programs.log" 2>&1
    echo "programs rc=$?"; grep -vE "^ok  " "$OUT/programs.log" | head -60
    ;;
  sanitize)
    stamp "compute-sanitizer"
    {
      for tool in ${SAN_TOOLS:-memcheck racecheck initcheck synccheck}; do
        filter=""
        [ $tool != memcheck ] && filter="--filter=${SAN_FILTER:-sum_abs|colsum|softmax|layernorm|rmsnorm|logsumexp|l2norm|determinism|regressions|runtime-launch}"
        echo "== $tool"
        FUSEC_GPU_SANITIZER=$tool timeout ${T_SAN:-150} tools/gpu/run.sh "$B" -v -j 14 $filter 2>&1
        echo "== $tool rc=$?"
      done
    } > "$OUT/sanitizer.log" 2>&1
    grep -E "^== |^(PASS|FAIL|UNRES)|ERROR SUMMARY: [1-9]|Passed|Failed" "$OUT/sanitizer.log"
    ;;
  bench)
    stamp "bench"
    timeout ${T_BENCH:-260} python3 tools/bench/bench.py --fusec "$B/fusec" --runtime-lib "$B/runtime" \
        --reps 30 --dtypes f32,bf16,f16 --json "$OUT/bench.json" > "$OUT/bench.md" 2> "$OUT/bench.err"
    echo "bench rc=$?"; cat "$OUT/bench.md"; grep -i "fail\|error" "$OUT/bench.err" | head
    stamp "small_bias_relu from C"
    d=$(mktemp -d)
    rt=$(cd "$B/runtime" && pwd); cu=$(dirname "$(dirname "$(command -v nvcc)")")
    for tg in cuda nvrtc; do
      ext=cu; [ $tg = nvrtc ] && ext=c
      mkdir -p "$d/$tg"
      "$B/fusec" --target=$tg -D N=64 -D M=1024 examples/bias_relu.fuse -o "$d/$tg/bias_relu.$ext" &&
      gcc -O2 -c -I"$d/$tg" -Iruntime -I"$cu/include" tools/bench/small_bias_relu.c -o "$d/$tg/main.o" &&
      if [ $tg = cuda ]; then
        nvcc -O2 -Iruntime "$d/$tg/bias_relu.cu" "$d/$tg/main.o" -o "$d/small_$tg" -L"$rt" -lfusert -Xlinker -rpath="$rt"
      else
        gcc -O2 -std=c11 -c -I"$d/$tg" -Iruntime "$d/$tg/bias_relu.c" -o "$d/$tg/k.o" &&
        gcc "$d/$tg/main.o" "$d/$tg/k.o" -o "$d/small_$tg" -L"$rt" -lfusert -Wl,-rpath,"$rt" -L"$cu/lib64" -lcudart -lm
      fi &&
      echo "small_bias_relu, $tg target:" && "$d/small_$tg"
    done 2>&1 | tee "$OUT/small.log"
    # the floor under graph replay on this machine: a bare one-kernel graph
    nvcc -O2 -arch=native tools/bench/graph_floor.cu -o "$d/graph_floor" && "$d/graph_floor" 2>&1 | tee -a "$OUT/small.log"
    ;;
  scale)
    stamp "bench --scale --sweep"
    timeout ${T_SCALE:-300} python3 tools/bench/bench.py --fusec "$B/fusec" --runtime-lib "$B/runtime" \
        --reps 20 --cases bias_relu --dtypes f32 --scale --sweep --json "$OUT/scale.json" \
        > "$OUT/scale.md" 2> "$OUT/scale.err"
    echo "scale rc=$?"; cat "$OUT/scale.md"
    ;;
  points)
    stamp "bench --sweep at chosen points"
    timeout ${T_POINTS:-200} python3 tools/bench/bench.py --fusec "$B/fusec" --runtime-lib "$B/runtime" \
        --reps 20 --sweep --sweep-cases ${POINT_CASES:-softmax_rows,layernorm_rows,rmsnorm} \
        --sweep-sizes ${POINT_SIZES:-77,333,1024,20000,32000} --cases "" --dtypes f32 \
        --json "$OUT/points.json" > "$OUT/points.md" 2> "$OUT/points.err"
    echo "points rc=$?"; grep '^|' "$OUT/points.md"
    ;;
  profile-points)
    stamp "ncu at the sweep points"
    timeout ${T_PROF:-240} ncu --clock-control none --target-processes all \
        -k "regex:^(softmax|layernorm|rmsnorm|colsum)" --launch-count ${PROF_LAUNCHES:-60} \
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
        --section LaunchStats --section WarpStateStats --csv --page details \
        python3 tools/bench/bench.py --fusec "$B/fusec" --runtime-lib "$B/runtime" --reps 2 --sweep \
        --sweep-cases ${POINT_CASES:-softmax_rows,layernorm_rows,rmsnorm} \
        --sweep-sizes ${POINT_SIZES:-77,333,1024,20000,32000} --cases "" --dtypes f32 \
        > "$OUT/ncu-points.csv" 2> "$OUT/ncu-points.err"
    echo "ncu rc=$?"; wc -l "$OUT/ncu-points.csv"; grep -v "^==PROF==" "$OUT/ncu-points.err" | tail -5
    ;;
  profile)
    stamp "ncu"
    timeout ${T_PROF:-240} ncu --clock-control none --target-processes all \
        -k "regex:^(colsum|chain12|softmax_rows|sum_abs|bias_relu|layernorm_rows|rmsnorm|triton)" \
        --launch-count ${PROF_LAUNCHES:-200} --section SpeedOfLight --section MemoryWorkloadAnalysis \
        --section Occupancy --section LaunchStats --csv --page details \
        python3 tools/bench/bench.py --fusec "$B/fusec" --runtime-lib "$B/runtime" --reps 2 \
        --cases ${PROFILE_CASES:-colsum,chain12,softmax_rows} --dtypes ${PROFILE_DTYPES:-f32,bf16} \
        --skip fusec_nvrtc,nofusion,jax > "$OUT/ncu.csv" 2> "$OUT/ncu.err"
    echo "ncu rc=$?"; wc -l "$OUT/ncu.csv"; grep -v "^==PROF==" "$OUT/ncu.err" | tail -5
    ;;
  *) echo "unknown step $step"; exit 2 ;;
  esac
done
stamp "done"
