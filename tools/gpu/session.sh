#!/usr/bin/env bash
# tools/gpu/session.sh [BUILD_DIR] -- everything that needs the GPU, in one
# call of the lent H200 (about 5 minutes): the benchmark suite in every
# dtype, the GPU lit tests (tests/gpu) and a differential test of 240
# random programs.  Results go to $OUT (the device tool's folder), or
# ./gpu-out when OUT is unset.
#   build here:  cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release &&
#                cmake --build build-dev -j2 --target fusec fusert fusert_static nvrtc-check
#   (fusert_static: tests/gpu/c-drivers.test installs the build for its cmake flavour)
#   then run it there with build-dev (and .gpu, see tools/gpu/run.sh) carried.
set -o pipefail
export PYTHONUNBUFFERED=1
B=${1:-build-dev}
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt"
timeout 230 python3 tools/bench/bench.py --fusec "$B/fusec" --runtime-lib "$B/runtime" --reps 30 \
    --dtypes f32,bf16,f16 --json "$OUT/bench.json" > "$OUT/bench.md" 2> "$OUT/bench.err"
echo "bench rc=$?"; cat "$OUT/bench.md"
timeout 130 tools/gpu/run.sh "$B" -v -j 14 > "$OUT/gpu-tests.log" 2>&1
echo "gpu tests rc=$?"; grep -E "^(PASS|FAIL|UNRES)|Passed|Failed" "$OUT/gpu-tests.log"
timeout 150 python3 tests/fuzz/difftest.py --fusec "$B/fusec" --runtime-lib "$B/runtime" \
    --seed 11 --files 12 --fns 20 --jobs 14 > "$OUT/difftest.log" 2>&1
echo "difftest rc=$?"; grep -E "progress|passed|MISMATCH|FAIL" "$OUT/difftest.log" | tail -15
