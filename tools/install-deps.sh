#!/usr/bin/env bash
# install-deps.sh -- install what building and testing fusec needs on Debian 12.
#
# Idempotent and fast when everything is there: it asks dpkg which packages are
# missing and only then runs `apt-get update` (once) and `apt-get install`.
# The CUDA toolkit is not a Debian package here: it is detected (nvcc on PATH or
# /usr/local/cuda) and reported, never installed.  Without it fusec still builds
# and its CPU tests run; the runtime and the generated .cu need it.
#
# Usage: tools/install-deps.sh [--check]    (--check: report only, exit 1 if missing)
set -euo pipefail

# flex/bison: the grammar; llvm-14-tools: lit and FileCheck; valgrind: the memcheck
# pass of tools/test.sh; pkg-config: checks fusert.pc; ninja-build: the depfile
# test runs with both CMake generators; clang-14 + libclang-rt-14-dev: the libFuzzer
# run (tests/fuzz/run.sh).
PKGS=(flex bison llvm-14-tools cmake gcc make python3 valgrind pkg-config ninja-build clang-14 libclang-rt-14-dev)

check_only=0
[[ "${1:-}" == "--check" ]] && check_only=1

missing=()
for p in "${PKGS[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

if ((${#missing[@]})); then
    if ((check_only)); then
        echo "install-deps: missing: ${missing[*]}" >&2
        exit 1
    fi
    SUDO=()
    if [[ $(id -u) -ne 0 ]]; then
        if command -v sudo >/dev/null 2>&1; then
            SUDO=(sudo)
        else
            echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2
            exit 1
        fi
    fi
    echo "install-deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${SUDO[@]}" apt-get update -qq
    "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    echo "install-deps: all packages present"
fi

# numpy, for the python3 on PATH (the one CMake and lit use): the CPU-emulator
# suite (tests/emu) and the interpreter tests that read .npy files with it.
# From PyPI, since Debian's python3-numpy serves only /usr/bin/python3.
if ! python3 -c "import numpy" >/dev/null 2>&1; then
    if ((check_only)); then
        echo "install-deps: missing: numpy for $(command -v python3)" >&2
        exit 1
    fi
    echo "install-deps: installing numpy for $(command -v python3)"
    python3 -m pip install -q --disable-pip-version-check numpy
fi

# The CUDA toolkit: detect only.
nvcc_path=$(command -v nvcc 2>/dev/null || true)
if [[ -z "$nvcc_path" && -x /usr/local/cuda/bin/nvcc ]]; then
    nvcc_path=/usr/local/cuda/bin/nvcc
    echo "install-deps: nvcc found at $nvcc_path but not on PATH;" \
         "add /usr/local/cuda/bin to PATH for the CUDA examples" >&2
fi
if [[ -n "$nvcc_path" ]]; then
    echo "install-deps: CUDA toolkit: $("$nvcc_path" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p' | head -n1) ($nvcc_path)"
else
    echo "install-deps: no CUDA toolkit found: building fusec without the runtime" \
         "(configure with -DFUSEC_BUILD_RUNTIME=OFF)" >&2
fi
