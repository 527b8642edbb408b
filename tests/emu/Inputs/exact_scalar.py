#!/usr/bin/env python3
"""exact_scalar.py --fusec FUSEC --workdir DIR [FLAGS...]

Runs every fn of scalar_value.fuse at fixed inputs (x = 1000, the scalars in
SCALARS and SCALARS_OF, y = [1.003]) through the interpreter (--emit=eval)
and through the generated CUDA on the CPU emulator (emu-build.sh); every
element must be bitwise equal to the interpreter's.  FLAGS go to fusec (e.g.
--no-fusion).  Prints one line per fn with both values, and "N of N exact"."""
import ctypes
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "scalar_value.fuse")
SCALARS = {"a": 1.003, "n": 999, "t": 999.9}
SCALARS_OF = {"f16_times_f32": {"a": 1.0003}}  # 1.003 would be exact enough in f16
N = 37  # more than one vector, and a tail


def to_bf16(f):
    u = np.asarray(f, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def as_f64(a, dt):
    if dt == "bf16":
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


def main():
    args = sys.argv[1:]
    fusec = args[args.index("--fusec") + 1]
    work = args[args.index("--workdir") + 1]
    flags = [a for i, a in enumerate(args)
             if a not in ("--fusec", "--workdir") and args[i - 1] not in ("--fusec", "--workdir")]
    os.makedirs(work, exist_ok=True)
    plan = json.loads(subprocess.run([fusec, "--emit=plan", SRC], check=True, capture_output=True,
                                     text=True).stdout)
    cu = os.path.join(work, "scalar_value.cu")
    subprocess.run([fusec, *flags, SRC, "-o", cu], check=True)
    so = os.path.join(work, "scalar_value.so")
    subprocess.run(["sh", os.path.join(HERE, "..", "emu-build.sh"), cu, so], check=True)
    lib = ctypes.CDLL(so)
    fns = plan["functions"]
    good = 0
    for fn in fns:
        name = fn["name"]
        tensors, scalars, evargs = [], [], []
        for p in fn["params"]:
            if p["scalar"]:
                v = SCALARS_OF.get(name, {}).get(p["name"], SCALARS[p["name"]])
                scalars.append(float(v))
                evargs += ["--input", "%s=%r" % (p["name"], v)]
                continue
            n = N if p["name"] == "x" else 1
            vals = np.full(n, 1000.0 if p["name"] == "x" else 1.003, np.float32)
            a = {"bf16": to_bf16(vals), "f16": vals.astype(np.float16), "f32": vals}[p["dtype"]]
            path = os.path.join(work, "%s_%s.npy" % (name, p["name"]))
            np.save(path, a)
            evargs += ["--input", "%s=%s" % (p["name"], path)]
            tensors.append(a)
        out = os.path.join(work, "ref_" + name)
        subprocess.run([fusec, "--emit=eval", "--fn", name, *evargs, "--output-dir", out, SRC], check=True)
        r = fn["results"][0]
        want = np.load(os.path.join(out, r["name"] + ".npy"))
        got = np.zeros_like(want)
        bufs = [t.ctypes.data for t in tensors + [got]]
        ptrs = (ctypes.c_void_p * len(bufs))(*bufs)
        sc = (ctypes.c_double * max(1, len(scalars)))(*(scalars or [0.0]))
        dims = (ctypes.c_int64 * len(fn["syms"]))(*[N if s == "N" else 1 for s in fn["syms"]])
        f = getattr(lib, name + "_packed")
        f.restype = ctypes.c_int
        st = f(ptrs, sc, dims, None)
        exact = st == 0 and got.tobytes() == want.tobytes()
        good += exact
        print("%s %s: interpreter %g, generated %g" % ("ok" if exact else "MISMATCH", name,
              as_f64(want, r["dtype"])[0], as_f64(got, r["dtype"])[0]))
    print("%d of %d exact" % (good, len(fns)))
    return 0 if good == len(fns) else 1


if __name__ == "__main__":
    sys.exit(main())
