#!/usr/bin/env bash
# demo.sh -- the main job from a fresh clone: install what is missing, build
# fusec, explain how softmax fuses, and translate it into CUDA + a C header.
#
#   tools/demo.sh [FILE.fuse]        (default: examples/softmax.fuse)
# Output: build/<name>.cu and build/<name>.h.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/common.sh

input=${1:-examples/softmax.fuse}
name=$(basename "$input" .fuse)

step "dependencies"
tools/install-deps.sh
step "configure and build (build/)"
cmake -S . -B build -DFUSEC_BUILD_RUNTIME="$FUSEC_RUNTIME" >/dev/null
cmake --build build -j"$JOBS" >/dev/null
step "how $input fuses: build/fusec --emit=fusion $input"
build/fusec --emit=fusion "$input"
step "translate: build/fusec $input -o build/$name.cu"
build/fusec "$input" -o "build/$name.cu"
step "the host API in build/$name.h"
awk '/^(fusert_status|size_t|int) / { on = 1 } on { print } /;/ { on = 0 }' "build/$name.h"
echo
echo "wrote build/$name.cu and build/$name.h (compile with nvcc, link with libfusert)"
