#!/usr/bin/env python3
"""nvrtc_same_sass.py -- does an NVRTC option change the code of fusec's kernels?

    tools/bench/nvrtc_same_sass.py --fusec BUILD/fusec [--option -minimal] FILE.fuse...

For each program: `fusec --target=nvrtc --emit=kernels` gives the source fusert
compiles; each kernel is compiled alone (-DFUSERT_KERNEL=<i>, as fusert's
per-kernel mode does) to sm_90 CUBIN with fusert's options (-default-device
--std=c++17), twice without the option and twice with it, through the NVRTC
library in this process.  The .text sections of the two CUBINs (the SASS of
every function) are compared byte for byte, and so are the whole CUBINs.
Prints every kernel whose code differs, then the counts, the sum of the
in-process compile times (best of two each) without and with the option, and
the median kernel's.  Exit status 1 when some kernel's code differs.  No GPU
is needed."""
import argparse
import ctypes
import ctypes.util
import os
import statistics
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvrtc_compile_times import kernel_names  # noqa: E402  (the same kernel list)


def load_nvrtc():
    cands = [ctypes.util.find_library("nvrtc")]
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            cands.append(os.path.join(root, "lib64", "libnvrtc.so"))
    for c in cands:
        if c:
            try:
                return ctypes.CDLL(c)
            except OSError:
                pass
    sys.exit("nvrtc_same_sass: cannot load libnvrtc (set CUDA_HOME)")


NV = load_nvrtc()


def compile_cubin(src, opts):
    """(CUBIN bytes, nvrtcCompileProgram ms)"""
    prog = ctypes.c_void_p()
    if NV.nvrtcCreateProgram(ctypes.byref(prog), src, b"m", 0, None, None) != 0:
        sys.exit("nvrtc_same_sass: nvrtcCreateProgram failed")
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    t0 = time.perf_counter()
    r = NV.nvrtcCompileProgram(prog, len(opts), arr)
    ms = (time.perf_counter() - t0) * 1e3
    if r != 0:
        n = ctypes.c_size_t()
        NV.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        log = ctypes.create_string_buffer(n.value)
        NV.nvrtcGetProgramLog(prog, log)
        sys.exit("nvrtc_same_sass: compile failed (%s):\n%s" % (" ".join(opts), log.value.decode()[-2000:]))
    n = ctypes.c_size_t()
    NV.nvrtcGetCUBINSize(prog, ctypes.byref(n))
    buf = ctypes.create_string_buffer(n.value)
    NV.nvrtcGetCUBIN(prog, buf)
    NV.nvrtcDestroyProgram(ctypes.byref(prog))
    return buf.raw, ms


def text_sections(elf):
    """{name: bytes} of the .text.* sections of an ELF64 image"""
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    secs = [struct.unpack_from("<IIQQQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    strtab = secs[shstrndx][4]
    out = {}
    for name_off, _typ, _flags, _addr, off, size in secs:
        name = elf[strtab + name_off: elf.index(b"\0", strtab + name_off)].decode()
        if name.startswith(".text."):
            out[name] = elf[off: off + size]
    if not out:
        sys.exit("nvrtc_same_sass: a CUBIN without .text sections")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fusec", required=True)
    ap.add_argument("--option", default="-minimal")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    base = ["--gpu-architecture=" + a.arch, "-default-device", "--std=c++17"]
    nk = differ = whole = 0
    t_off, t_on = [], []
    for f in a.files:
        c = subprocess.run([a.fusec, "--target=nvrtc", "--emit=c", f], capture_output=True, text=True)
        k = subprocess.run([a.fusec, "--target=nvrtc", "--emit=kernels", f], capture_output=True, text=True)
        if c.returncode or k.returncode:
            sys.exit("nvrtc_same_sass: fusec failed on %s:\n%s" % (f, (c.stderr or k.stderr)[-2000:]))
        names = kernel_names(c.stdout)
        src = k.stdout.encode()
        for i, name in enumerate(names):
            opts = base + ["-DFUSERT_KERNEL=%d" % i]
            off = [compile_cubin(src, opts) for _ in range(2)]
            on = [compile_cubin(src, opts + [a.option]) for _ in range(2)]
            t_off.append(min(t for _, t in off))
            t_on.append(min(t for _, t in on))
            nk += 1
            whole += off[0][0] == on[0][0]
            if text_sections(off[0][0]) != text_sections(on[0][0]):
                differ += 1
                print("code differs: %s: %s" % (f, name))
    if not nk:
        sys.exit("nvrtc_same_sass: no kernels")
    print("%d kernels, %d with other code under %s, %d whole CUBINs byte-identical; NVRTC ms "
          "(best of 2 each): sum %.0f -> %.0f, median kernel %.1f -> %.1f"
          % (nk, differ, a.option, whole, sum(t_off), sum(t_on), statistics.median(t_off),
             statistics.median(t_on)))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
