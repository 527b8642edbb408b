# common.sh -- shared by tools/demo.sh and tools/test.sh (sourced, not run).
# Puts the CUDA toolkit on PATH when it is installed but not there, and decides
# whether the runtime can be built (it needs the toolkit's NVRTC and driver API).

if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
    export PATH="/usr/local/cuda/bin:$PATH"
fi
if command -v nvcc >/dev/null 2>&1; then
    FUSEC_RUNTIME=ON
else
    FUSEC_RUNTIME=OFF
fi
# Two cores is the CI machine; override with JOBS=N.
JOBS=${JOBS:-2}

step() { printf '\n==> %s\n' "$*"; }
