#!/bin/sh
# emu-build.sh X.cu OUT.so [extra g++ flags...]
# Builds a fusec-generated .cu (target cuda) for the CPU emulator: appends
# FZ_EMU_KERNEL(name), FZ_EMU_KERNEL_LB(name, launch bound) or
# FZ_EMU_KERNEL_CL(name, launch bound, cluster width) for each
# __global__ function (the typed launchers cudaLaunchKernel finds by
# address), rewrites the preamble's one-line inline PTX
#     asm("TEXT" : "=c"(out) : "c"(in), ...);
# as  fz_emu_asm_op("TEXT", out, in, ...);  and compiles with fz_emu.h
# force-included.  Extra flags (e.g. -fsanitize=address) go to g++.
# The .cu's header (X.h) must sit next to it.  CXX overrides g++.
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cu=$1
so=$2
shift 2
dir=$(cd "$(dirname "$cu")" && pwd)
wrap="${so%.so}.emu.cpp"
{
    printf '#line 1 "%s/%s"\n' "$dir" "$(basename "$cu")"
    sed -e '/^[[:space:]]*asm(/{
s/"[=+]*[a-z]"(\([A-Za-z_0-9]*\))/\1/g
s/^\([[:space:]]*\)asm(\("[^"]*"\) : \([A-Za-z_0-9]*\) : \(.*\));/\1fz_emu_asm_op(\2, \3, \4);/
}' "$cu"
    sed -n -e 's/^extern "C" __global__ void __launch_bounds__(\([0-9]*\)[, 0-9]*) FZ_CLUSTER(\([0-9]*\)) \([A-Za-z_][A-Za-z0-9_]*\)(.*/FZ_EMU_KERNEL_CL(\3, \1, \2)/p' \
        -e '/FZ_CLUSTER/!s/^extern "C" __global__ void __launch_bounds__(\([0-9]*\)[, 0-9]*) \([A-Za-z_][A-Za-z0-9_]*\)(.*/FZ_EMU_KERNEL_LB(\2, \1)/p' \
        -e 's/^extern "C" __global__ void \([A-Za-z_][A-Za-z0-9_]*\)(.*/FZ_EMU_KERNEL(\1)/p' "$cu"
} > "$wrap"
${CXX:-g++} -std=c++17 -O1 -fno-strict-aliasing -w -fPIC -shared -Wl,-Bsymbolic -Wl,-z,defs \
    -include "$here/fz_emu.h" -I "$here/include" -I "$root/runtime" -I "$dir" \
    "$@" "$wrap" -o "$so"
