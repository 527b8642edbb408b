#!/usr/bin/env python3
"""difftest.py -- differential testing of generated code on the GPU.

    difftest.py --fusec build/fusec --runtime-lib build/runtime \
        --seed S --files F --fns K [--jobs J] [--workdir DIR]

Generates F x K random programs (gen_programs.py) and, for every fn, with
random dims (odd sizes, ones and zeros included) and random inputs, compares:
  * the float64 interpreter (`fusec --emit=eval`) against the fused CUDA
    target, the fused NVRTC target, the `--no-fusion` CUDA target, and the
    `--atomic-reduce` CUDA target (`atomic`: full and split column
    reductions combined with atomics, not bitwise reproducible, held to the
    same tolerances);
  * the fused CUDA target against the `--no-fusion` one and the NVRTC one.
Every output buffer is poisoned with NaN first.  Tolerances
(tools/fusec_tolerance.py, CHAIN: by the loosest of the result's dtype and the
fn's float params' dtypes, on |got - want| <= tol * |want| + tol * scale,
scale = the largest finite |want| of that result) are looser than
fuse-run's because a random fn chains up to a dozen ops, and while a fused kernel keeps f32 between ops like the interpreter's
float64, the --no-fusion build stores every f16/bf16 intermediate in its dtype
(docs/language.md: f16/bf16 "stored as such and computed in f32").  NaN must meet NaN and inf the same inf.
Prints one line per mismatch and a closing "N passed, N failed" line.
"""
import argparse
import concurrent.futures as cf
import ctypes
import json
import multiprocessing as mp
import os
import random
import re
import subprocess
import sys
import tempfile
import zlib

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import fusec_tolerance  # noqa: E402  (the tolerances: CHAIN and narrowest)
TORCH_DT = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
            "bf16": torch.bfloat16, "i32": torch.int32, "i64": torch.int64, "bool": torch.bool}
NP_DT = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16,
         "i32": np.int32, "i64": np.int64, "bool": np.bool_}
# 2113 and 9001: rows enough for the launch rules that ask rows of a GPU's
# multiprocessors (a warp or fewer lanes a row: 8 to 64 rows each, 1056 to
# 8448 on 132), within the element bounds of dims_for
SIZES = [0, 1, 1, 2, 3, 5, 7, 16, 31, 33, 64, 100, 129, 257, 1000, 2113, 9001]


def build(args, src, target, flags, tag):
    out = src[:-5] + tag + (".cu" if target == "cuda" else ".c")
    subprocess.run([args.fusec, "--target=" + target, *flags, src, "-o", out], check=True,
                   stderr=subprocess.DEVNULL)
    so = src[:-5] + tag + ".so"
    inc = os.path.join(ROOT, "runtime")
    if target == "cuda":
        cmd = ["nvcc", "-O3", "-arch=sm_90", "-shared", "-Xcompiler", "-fPIC", "-I", inc,
               "-I", os.path.dirname(src), out, "-o", so, "-L", args.runtime_lib, "-lfusert",
               "-Xlinker", "-rpath=" + args.runtime_lib]
    else:
        cmd = ["gcc", "-O2", "-std=c11", "-shared", "-fPIC", "-I", inc, "-I", os.path.dirname(src),
               out, "-o", so, "-L", args.runtime_lib, "-lfusert", "-Wl,-rpath," + args.runtime_lib]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return so


def dims_for(rng, fn):
    """Random sizes for the fn's symbols, keeping every tensor small enough
    for the interpreter and f16 sums in range."""
    for _ in range(50):
        d = {s: rng.choice(SIZES) for s in fn["syms"]}
        ok = True
        for p in fn["params"] + fn["results"]:
            n = 1
            for x in p.get("shape", []):
                n *= d[x] if isinstance(x, str) else x
            if n > (8192 if p["dtype"] in ("f16", "bf16") else 65536):
                ok = False
        if ok:
            return d
    return {s: 1 for s in fn["syms"]}


def shape_of(p, d):
    return tuple(d[x] if isinstance(x, str) else x for x in p.get("shape", []))


def to_host(t, dt):
    if dt == "bf16":
        return t.view(torch.int16).cpu().numpy().view(np.uint16)
    return t.cpu().numpy()


def as_f64(a, dt):
    if dt == "bf16":
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


def loosest(fn, dt):
    """A result is only as precise as the least precise float it is computed
    from: judge it by the loosest tolerance among the fn's float params, the
    float dtypes its body names (casts) and its own dtype."""
    return fusec_tolerance.narrowest(dt, [p["dtype"] for p in fn["params"]] + fn.get("body_dtypes", []))


def compare(got, want, dt, tol_dt=None):
    g, w = as_f64(got, dt).ravel(), as_f64(want, dt).ravel()
    if g.shape != w.shape:
        return "shape %s != %s" % (g.shape, w.shape)
    if dt in ("i32", "i64", "bool"):
        bad = np.nonzero(g != w)[0]
    else:
        tol = fusec_tolerance.CHAIN[tol_dt or dt]
        fin = np.isfinite(w)
        # at least 1e-2, as emu_difftest: an exact 0 from cancellation
        # against 1e-16 is no failure
        scale = max(np.max(np.abs(w[fin])) if fin.any() else 0.0, 1e-2)
        nan_bad = np.isnan(g) != np.isnan(w)
        inf_bad = np.isinf(w) & (g != w)
        with np.errstate(invalid="ignore"):
            val_bad = fin & ~(np.abs(g - w) <= tol * np.abs(w) + tol * scale)
        bad = np.nonzero(nan_bad | inf_bad | val_bad)[0]
    if len(bad):
        i = bad[0]
        return "%d of %d differ, first at %d: got %r want %r" % (len(bad), g.size, i, g[i], w[i])
    return None


class Lib:
    def __init__(self, so):
        self.lib = ctypes.CDLL(so)

    def call(self, name, bufs, scalars, dims):
        f = getattr(self.lib, name + "_packed")
        f.restype = ctypes.c_int
        ptrs = (ctypes.c_void_p * max(1, len(bufs)))(*[b.data_ptr() for b in bufs])
        sc = (ctypes.c_double * max(1, len(scalars)))(*(scalars or [0.0]))
        dv = (ctypes.c_int64 * max(1, len(dims)))(*(dims or [0]))
        return f(ptrs, sc, dv, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))


def run_fn(args, rt, libs, src, fn, rng, workdir):
    name = fn["name"]
    d = dims_for(rng, fn)
    host, bufs, files = {}, [], []
    for i, p in enumerate(fn["params"]):
        shp = shape_of(p, d)
        a = np.random.default_rng(rng.randrange(1 << 30)).uniform(-2, 2, size=shp)
        if p["dtype"] == "bf16":
            a = (a.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
            # that truncation is a valid bf16 value; the interpreter reads raw bits
        else:
            a = a.astype(NP_DT[p["dtype"]])
        path = os.path.join(workdir, "%s_%s.npy" % (name, p["name"]))
        np.save(path, a)
        files += ["--input", "%s=%s" % (p["name"], path)]
        if p["dtype"] == "bf16":
            t = torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
        else:
            t = torch.from_numpy(a.copy())
        host[p["name"]] = t.cuda()
    outdir = os.path.join(workdir, name + "_ref")
    os.makedirs(outdir, exist_ok=True)
    r = subprocess.run([args.fusec, "--emit=eval", "--fn", name, *files, "--output-dir", outdir, src],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return ["%s: interpreter failed: %s" % (name, r.stderr.strip()[:300])]
    want = {p["name"]: np.load(os.path.join(outdir, p["name"] + ".npy")) for p in fn["results"]}
    dimv = [d[s] for s in fn["syms"]]
    problems = []
    got_by = {}
    for label, lib in libs.items():
        outs = [torch.full(shape_of(p, d) or (1,), float("nan"), device="cuda",
                           dtype=TORCH_DT[p["dtype"]]) if p["dtype"] not in ("i32", "i64", "bool")
                else torch.zeros(shape_of(p, d) or (1,), device="cuda", dtype=TORCH_DT[p["dtype"]])
                for p in fn["results"]]
        st = lib.call(name, [host[p["name"]] for p in fn["params"]] + outs, [], dimv)
        torch.cuda.synchronize()
        if st != 0:
            problems.append("%s %s dims %s: status %d: %s" % (name, label, d, st,
                                                               rt.fusert_last_error().decode()))
            continue
        got_by[label] = {}
        for p, o in zip(fn["results"], outs):
            g = to_host(o, p["dtype"]).reshape(shape_of(p, d))
            got_by[label][p["name"]] = g
            msg = compare(g, want[p["name"]], p["dtype"], loosest(fn, p["dtype"]))
            if msg:
                problems.append("%s %s dims %s: %s: %s" % (name, label, d, p["name"], msg))
    return problems


def run_file(args, s, sos, nvariants, work):
    """Every fn of one generated file against the interpreter, in its own
    process.  Returns (passed, failed, lines to print)."""
    rt = ctypes.CDLL(os.path.join(args.runtime_lib, "libfusert.so"))
    rt.fusert_last_error.restype = ctypes.c_char_p
    plan = json.loads(subprocess.check_output([args.fusec, "--emit=plan", s], stderr=subprocess.DEVNULL))
    libs = {v: Lib(so) for v, so in sos.items()}
    rng = random.Random(zlib.crc32(os.path.basename(s).encode()) ^ args.seed)
    npass = nfail = 0
    lines = []
    text = open(s).read()
    for fn in plan["functions"]:
        m = re.search(r"^fn %s\(.*?(?=^fn |\Z)" % re.escape(fn["name"]), text, re.S | re.M)
        fn["body_dtypes"] = sorted(set(re.findall(r"\b(f16|bf16|f32|f64)\b", m.group(0)))) if m else []
        try:
            problems = run_fn(args, rt, libs, s, fn, rng, work)
        except Exception as e:  # a crash of the harness is a failure too
            problems = ["%s: harness error %r" % (fn["name"], e)]
        if len(libs) < nvariants:
            problems.append("%s: %d of %d variants did not build" % (fn["name"], nvariants - len(libs), nvariants))
        if problems:
            nfail += 1
            lines += ["MISMATCH " + p for p in problems[:4]]
        else:
            npass += 1
    return npass, nfail, lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fusec", required=True)
    ap.add_argument("--runtime-lib", required=True)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--files", type=int, default=10)
    ap.add_argument("--fns", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=12)
    ap.add_argument("--run-jobs", type=int, default=8, help="files run at once on the GPU")
    ap.add_argument("--only", help="comma list of file numbers to run (gen007.fuse is 7)")
    ap.add_argument("--workdir")
    args = ap.parse_args()
    work = args.workdir or tempfile.mkdtemp(prefix="difftest-")
    subprocess.run([sys.executable, os.path.join(HERE, "gen_programs.py"), "--seed", str(args.seed),
                    "--files", str(args.files), "--fns", str(args.fns), "--out", work], check=True)
    srcs = sorted(os.path.join(work, f) for f in os.listdir(work) if f.endswith(".fuse"))
    if args.only:
        keep = set(int(x) for x in args.only.split(","))
        srcs = [x for x in srcs if int(re.sub(r"\D", "", os.path.basename(x))) in keep]
    variants = {"cuda": ("cuda", []), "nvrtc": ("nvrtc", []), "nofusion": ("cuda", ["--no-fusion"]),
                "atomic": ("cuda", ["--atomic-reduce"])}
    with cf.ThreadPoolExecutor(args.jobs) as ex:
        futs = {(s, v): ex.submit(build, args, s, t, fl, "_" + v) for s in srcs for v, (t, fl) in variants.items()}
        sos = {}
        for k, f in futs.items():
            try:
                sos[k] = f.result()
            except subprocess.CalledProcessError as e:
                print("FAIL build %s %s: %s" % (k[0], k[1], e))
    npass = nfail = 0
    # the runs: one process per file (spawned, so no CUDA state is forked)
    ctx = mp.get_context("spawn")
    with cf.ProcessPoolExecutor(max(1, min(args.run_jobs, len(srcs))), mp_context=ctx) as ex:
        futs = [ex.submit(run_file, args, s, {v: sos[(s, v)] for v in variants if (s, v) in sos},
                          len(variants), work) for s in srcs]
        for s, fut in zip(srcs, futs):
            try:
                p_, f_, lines = fut.result()
            except Exception as e:  # a crashed worker fails its whole file
                p_, f_, lines = 0, 1, ["MISMATCH %s: worker error %r" % (os.path.basename(s), e)]
            npass += p_
            nfail += f_
            for line in lines:
                print(line, flush=True)
            print("progress: %s: %d passed, %d failed so far" % (os.path.basename(s), npass, nfail), flush=True)
    print("programs: %d fns in %d files, variants: %s" % (npass + nfail, len(srcs), ", ".join(variants)))
    print("%d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
