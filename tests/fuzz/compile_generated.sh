#!/usr/bin/env bash
# tests/fuzz/compile_generated.sh FUSEC OUTDIR SEED FILES FNS [FUSEC FLAGS...]
# Generates FILES x FNS random well-typed programs (gen_programs.py) and,
# for each file, with FLAGS on every fusec call (e.g. --atomic-reduce):
# fusec must accept it (fused and --no-fusion); the cuda
# target must compile with nvcc -arch=sm_90 (spills are listed as NOTE lines); the nvrtc
# target's C must compile with gcc -Wall -Wextra -Werror and agree with its
# embedded source on every kernel index (check_kernel_guards.py); its kernels
# must compile through NVRTC (nvrtc-check) when that tool is built.
# Prints one line per failure and a closing "N passed, N failed" line.
set -u
fusec=$1; out=$2; seed=$3; files=$4; fns=$5
shift 5
flags="$*"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
nvrtc_check="$(dirname "$fusec")/nvrtc-check"
rm -rf "$out"; mkdir -p "$out"
python3 "$here/gen_programs.py" --seed "$seed" --files "$files" --fns "$fns" --out "$out"
pass=0; fail=0
one() {  # one file; echoes FAIL lines
  local f=$1 b=${1%.fuse}
  "$fusec" $flags --target=cuda "$f" -o "$b.cu" 2>"$b.err" || { echo "FAIL fusec cuda: $f"; cat "$b.err"; return 1; }
  "$fusec" $flags --target=cuda --no-fusion "$f" -o "$b.nf.cu" 2>>"$b.err" || { echo "FAIL fusec --no-fusion: $f"; return 1; }
  "$fusec" $flags --target=nvrtc "$f" -o "$b.c" 2>>"$b.err" || { echo "FAIL fusec nvrtc: $f"; return 1; }
  # how many kernels take the atomic combine (with --atomic-reduce)
  echo "ATOMIC $("$fusec" $flags --emit=plan "$f" 2>/dev/null | grep -o '"combine": "atomic"' | wc -l)"
  # per-kernel compile: every K_INDEX names one guarded kernel, alike in all places
  python3 "$root/tests/codegen/Inputs/check_kernel_guards.py" "$b.c" >"$b.guards" 2>&1 || { echo "FAIL kernel guards: $f"; cat "$b.guards"; return 1; }
  gcc -std=c11 -Wall -Wextra -Werror -c "$b.c" -I "$root/runtime" -I "$(dirname "$f")" -o "$b.o" 2>"$b.gcc" || { echo "FAIL gcc: $f"; head -20 "$b.gcc"; return 1; }
  if command -v nvcc >/dev/null; then
    nvcc -arch=sm_90 -c "$b.cu" -I "$root/runtime" -I "$(dirname "$f")" -o "$b.cu.o" -Xptxas -v >"$b.ptxas" 2>&1 || { echo "FAIL nvcc: $f"; grep -m5 error "$b.ptxas"; return 1; }
    # Spills are reported, not failed, here: random programs stack several
    # sin/cos whose rarely taken slow path is a real call, and the caller-
    # saved registers around it show as a few bytes of spill.  The examples
    # and lit programs are held to zero spills by tests/codegen.
    if grep "spill" "$b.ptxas" | grep -qv " 0 bytes spill stores, 0 bytes spill loads"; then
      echo "NOTE spills: $f: $(grep -B2 'bytes spill' "$b.ptxas" | grep -v ' 0 bytes spill' | grep -o "'[^']*'" | tr '\n' ' ')"
    fi
  fi
  if [ -x "$nvrtc_check" ]; then
    "$fusec" $flags --target=nvrtc --emit=kernels "$f" -o "$b.kernels.cu" 2>/dev/null && "$nvrtc_check" -minimal "$b.kernels.cu" >"$b.nvrtc" 2>&1 || { echo "FAIL nvrtc: $f"; head -20 "$b.nvrtc"; return 1; }
  fi
  return 0
}
export -f one; export fusec root nvrtc_check flags
results=$(ls "$out"/*.fuse | xargs -P 2 -I{} bash -c 'one {} && echo "PASSFILE {}"')
echo "$results" | grep -v "^PASSFILE" | grep -v "^ATOMIC" || true
pass=$(echo "$results" | grep -c "^PASSFILE")
fail=$((files - pass))
echo "programs: $((files * fns)) in $files files${flags:+, fusec $flags}"
case " $flags " in
  *" --atomic-reduce "*)
    echo "atomic combine: $(echo "$results" | awk '/^ATOMIC/ {n += $2} END {print n + 0}') kernels" ;;
esac
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
