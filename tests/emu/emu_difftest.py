#!/usr/bin/env python3
"""emu_difftest.py -- differential testing of generated CUDA on the CPU.

    emu_difftest.py --fusec build/fusec [--files F --fns K --seed S]
                    [--examples DIR] [--file X.fuse]... [--trials T]
                    [--example-trials T] [--sizes random|examples|big]
                    [--variants fused,nofusion,fastmath,atomic,regs32]
                    [--sms 1,2,3,5] [--block-order forward,reverse]
                    [--jobs J] [--workdir DIR] [--asan] [--dims N=3,M=999]...

The CPU twin of tests/fuzz/difftest.py (no GPU, no torch).  Programs come
from gen_programs.py (F files of K fns), from every .fuse of --examples,
and from --file.  Each file becomes one .cu per variant (default: fused and
--no-fusion), built for the emulator by emu-build.sh (fz_emu.h).  For every
fn, T times: random dims (generated programs from {0,1,2,3,5,7,16,33,64};
the others trial 0 all ones, then odd sizes up to 1030; --sizes big up to
8193 and 300k elements), random inputs, and per file an emulated
multiprocessor count from --sms (it sizes grids and splits) and a block
order from --block-order (reverse: block 0 finishes last).  Each
variant's `_packed` entry runs through ctypes on exact-size numpy buffers,
results poisoned (NaN, or a finite sentinel, alternating by variant), and is
compared with `fusec --emit=eval`; an input it wrote is a failure too.
Odd trials misalign every buffer by one element (the scalar load paths);
with --misalign odd-buffers only every second buffer (parameters, then
results, counted from 0: the 2nd, 4th, ...), so aligned and misaligned
pointers meet in one call.
--dims (repeatable) replaces the random dims of --file and --examples fns:
each trial takes the next set in turn (a fn ignores names it has none of
and takes 1 for a dim the set leaves out), so a test can reach chosen
kernel variants.
The `atomic` variant (--atomic-reduce) is held to the same tolerances; a
line "atomic variant: N kernels ..." says how many kernels it builds with
the atomic combine (the rest are the ordered combine again; a file with
none is not built or run a second time).

Tolerances as difftest.py: by the loosest of the result's dtype, the fn's
float params' dtypes and any f16/bf16 the fn's body names (a materialised
f16/bf16 intermediate is stored, so rounded, in its dtype):
    |got - want| <= tol * |want| + tol * scale
scale = the largest finite |want| but at least 1e-2 (an exact 0 from
cancellation is no failure); f64 1e-9, f32 2e-4, f16 2e-2, bf16 8e-2.
NaN must meet NaN, inf the same inf; integers and bools exactly.

Every file runs in its own worker process with a time limit, so a crash
(an out-of-bounds access under --asan, a fault) or a hang is reported
against the file and the fn it was running.  A trial whose reference is an
error by the language (argmax of an empty axis) is skipped and counted.
Prints "MISMATCH ..." per problem and a closing "N passed, N failed"
(fns x trials); exits 1 on any failure.  Runs are reproducible: dims and
inputs derive from --seed and the file's name.

With FZ_EMU_BUILD_CACHE=DIR (tests/emu/lit.local.cfg sets it), a build
whose inputs are byte for byte those of an earlier one (the .cu and its .h,
the g++ flags and version, emu-build.sh, fz_emu.h, tests/emu/include and
runtime/*.h) copies that build's .so instead of compiling again: several
tests build the same generated modules.
"""
import argparse
import concurrent.futures as cf
import ctypes
import glob
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOL = {"f64": 1e-9, "f32": 2e-4, "f16": 2e-2, "bf16": 8e-2}
RANDOM_SIZES = [0, 1, 1, 2, 3, 5, 7, 16, 33, 64]
EXAMPLE_SIZES = [0, 1, 3, 5, 7, 16, 33, 64, 65, 130, 257, 1030]
BIG_SIZES = [1, 2, 3, 31, 33, 127, 257, 1023, 1025, 2049, 4096, 4100, 8193]
POOLS = {"random": (RANDOM_SIZES, 20000, 8192), "examples": (EXAMPLE_SIZES, 70000, 8192),
         "big": (BIG_SIZES, 300000, 32768)}
ALL_VARIANTS = {"fused": [], "nofusion": ["--no-fusion"], "fastmath": ["--fast-math"],
                "atomic": ["--atomic-reduce"], "regs32": ["--max-registers=32"]}
VARIANTS = {}


# ---- the parent: generate, build, farm out files --------------------------

def build(args, src, tag, flags):
    """fusec -> .cu -> emulator .so; returns (so, None) or (None, error)."""
    base = os.path.join(args.workdir, os.path.basename(src)[:-5] + "_" + tag)
    cu = base + ".cu"
    r = subprocess.run([args.fusec, "--target=cuda", *flags, src, "-o", cu], capture_output=True, text=True)
    if r.returncode != 0:
        return None, "fusec failed: " + r.stderr.strip()[:400]
    so = base + ".so"
    # with ASan, a 16-byte vector access at a misaligned address is an error
    # too (it faults on the GPU; x86 would read it without complaint)
    extra = ["-fsanitize=address,alignment", "-fno-sanitize-recover=alignment", "-fno-omit-frame-pointer",
             "-g"] if args.asan else []
    cached = build_key(cu, extra)
    if cached:
        try:
            shutil.copyfile(cached, so)
            return so, None
        except OSError:  # not built yet (or the cache was emptied meanwhile)
            pass
    r = subprocess.run(["sh", os.path.join(HERE, "emu-build.sh"), cu, so, *extra], capture_output=True, text=True)
    if r.returncode != 0:
        return None, "emulator build failed: " + r.stderr.strip()[:1200]
    if cached:
        tmp = "%s.%d.tmp" % (cached, os.getpid())
        shutil.copyfile(so, tmp)
        os.replace(tmp, cached)  # atomic: tests running at once may build the same .so
    return so, None


TOOL_HASH = []


def build_key(cu, extra):
    """The cache entry (FZ_EMU_BUILD_CACHE) for building cu with extra g++
    flags, named by a hash of every input of the build; None without a cache."""
    cache = os.environ.get("FZ_EMU_BUILD_CACHE")
    if not cache:
        return None
    if not TOOL_HASH:
        h = hashlib.sha256()
        cxx = os.environ.get("CXX", "g++")
        h.update(cxx.encode() + b"\0")
        h.update(subprocess.run(cxx.split() + ["--version"], capture_output=True).stdout)
        tools = [os.path.join(HERE, "emu-build.sh"), os.path.join(HERE, "fz_emu.h")]
        tools += glob.glob(os.path.join(HERE, "include", "**", "*"), recursive=True)
        tools += glob.glob(os.path.join(ROOT, "runtime", "*.h"))
        for f in sorted(t for t in tools if os.path.isfile(t)):
            h.update(f.encode() + b"\0")
            with open(f, "rb") as fh:
                h.update(fh.read())
        TOOL_HASH.append(h.hexdigest())
    h = hashlib.sha256(TOOL_HASH[0].encode())
    h.update("\0".join(extra).encode() + b"\0")
    for f in (cu, cu[:-3] + ".h"):
        h.update(os.path.basename(f).encode() + b"\0")
        with open(f, "rb") as fh:
            h.update(fh.read())
    os.makedirs(cache, exist_ok=True)
    return os.path.join(cache, h.hexdigest() + ".so")


def run_file(args, src, sos):
    """One worker process per file; returns (npass, nfail, lines)."""
    generated = src.startswith(args.workdir)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", src, "--fusec", args.fusec,
           "--workdir", args.workdir, "--seed", str(args.seed),
           "--trials", str(args.trials if generated else args.example_trials),
           "--sizes", args.sizes or ("random" if generated else "examples"),
           "--misalign", args.misalign]
    if not generated:
        for ds in args.dims:
            cmd += ["--dims", ds]
    for v, so in sos.items():
        cmd += ["--so", "%s=%s" % (v, so)]
    env = dict(os.environ)
    # the multiprocessor count sizes grids and splits, and the block order
    # decides which block takes the last ticket: vary both by file
    sms = [int(x) for x in args.sms.split(",")]
    h = sum(map(ord, os.path.basename(src)))
    env["FZ_EMU_SMS"] = str(sms[h % len(sms)])
    orders = args.block_order.split(",")
    env["FZ_EMU_BLOCK_ORDER"] = orders[h // len(sms) % len(orders)]
    # counters in the runtime's zeroed scratch (checked clean at every call)
    # for two files in three, the call's own memset for the third
    env["FZ_EMU_ZEROED"] = "0" if h % 3 == 0 else "1"
    if args.asan:
        lib = subprocess.check_output(["g++", "-print-file-name=libasan.so"], text=True).strip()
        env["LD_PRELOAD"] = lib
        env["ASAN_OPTIONS"] = "detect_leaks=0:detect_stack_use_after_return=0"
    name = os.path.basename(src)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=env)
        out, err, rc = r.stdout, r.stderr, r.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err, rc = "timed out after %d s" % args.timeout, None
    npass = nfail = nskip = 0
    lines, current = [], None
    for ln in out.splitlines():
        if ln.startswith("BEGIN "):
            current = ln[6:]
        elif ln.startswith("PASS "):
            npass += 1
            current = None
        elif ln.startswith("SKIP "):
            nskip += 1
            current = None
        elif ln.startswith("FAIL "):
            nfail += 1
            current = None
        elif ln.startswith("MISMATCH "):
            lines.append("MISMATCH %s: %s" % (name, ln[9:]))
    if rc != 0:
        nfail += 1
        tail = " ".join(err.strip().splitlines()[-6:])[:1500]
        lines.append("MISMATCH %s: worker %s while running %s: %s" % (
            name, "failed" if rc is None else "exited with status %d" % rc, current or "(setup)", tail))
    lines = [ln.replace("MISMATCH %s: " % name, "MISMATCH %s (%s SMs, %s block order, zeroed %s): " % (
        name, env["FZ_EMU_SMS"], env["FZ_EMU_BLOCK_ORDER"], env["FZ_EMU_ZEROED"]), 1) for ln in lines]
    return npass, nfail, nskip, lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fusec", required=True)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--files", type=int, default=0, help="random files (gen_programs.py)")
    ap.add_argument("--fns", type=int, default=20)
    ap.add_argument("--examples", help="a folder: every .fuse in it")
    ap.add_argument("--file", action="append", default=[], help="a .fuse to test (repeatable)")
    ap.add_argument("--trials", type=int, default=1, help="random dims and inputs per generated fn")
    ap.add_argument("--example-trials", type=int, default=3, help="the same for examples and --file")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per file")
    ap.add_argument("--workdir")
    ap.add_argument("--sms", default="1,2,3,5", help="multiprocessor counts to emulate, one per file by name")
    ap.add_argument("--block-order", default="forward,reverse",
                    help="orders the emulator runs blocks in (FZ_EMU_BLOCK_ORDER), one per file by name")
    ap.add_argument("--asan", action="store_true", help="build with -fsanitize=address,alignment (OOB and misaligned accesses)")
    ap.add_argument("--dims", action="append", default=[], metavar="N=3,M=999",
                    help="fixed dims for --file and --examples fns, one set per trial in turn")
    ap.add_argument("--misalign", choices=("all", "odd-buffers"), default="all",
                    help="odd trials shift every buffer one element, or only every second one")
    ap.add_argument("--sizes", choices=sorted(POOLS),
                    help="dim sizes (default: random for generated programs, examples for the others)")
    # worker mode (internal)
    ap.add_argument("--worker")
    ap.add_argument("--so", action="append", default=[])
    ap.add_argument("--variants", default="fused,nofusion",
                    help="comma list of: " + ", ".join(ALL_VARIANTS))
    args = ap.parse_args()
    for v in args.variants.split(","):
        if v not in ALL_VARIANTS:
            ap.error("unknown variant %r" % v)
        VARIANTS[v] = ALL_VARIANTS[v]
    if args.worker:
        return worker(args)
    args.fusec = os.path.abspath(args.fusec)
    args.workdir = os.path.abspath(args.workdir or tempfile.mkdtemp(prefix="emu-difftest-"))
    os.makedirs(args.workdir, exist_ok=True)
    srcs = [os.path.abspath(f) for f in args.file]
    if args.files:
        gen = os.path.join(args.workdir, "gen")
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "fuzz", "gen_programs.py"), "--seed",
                        str(args.seed), "--files", str(args.files), "--fns", str(args.fns), "--out", gen],
                       check=True)
        srcs += sorted(os.path.join(gen, f) for f in os.listdir(gen) if f.endswith(".fuse"))
    if args.examples:
        srcs += sorted(os.path.join(os.path.abspath(args.examples), f)
                       for f in os.listdir(args.examples) if f.endswith(".fuse"))
    if not srcs:
        ap.error("nothing to test: give --files, --examples or --file")
    npass = nfail = nskip = 0
    same = set()  # (src, variant) whose .cu is the fused one's: not built or run twice
    if "atomic" in VARIANTS:
        # how many kernels the atomic variant really builds with atomics
        # (without any, the flag changes nothing: the fused build again)
        nk = nf = 0
        for s in srcs:
            plan = json.loads(subprocess.check_output([args.fusec, "--emit=plan", "--atomic-reduce", s],
                                                      stderr=subprocess.DEVNULL))
            k = sum(1 for fn in plan["functions"] for kn in fn["kernels"] if kn.get("combine") == "atomic")
            nk += k
            nf += k > 0
            if "fused" in VARIANTS and subprocess.run(
                    [args.fusec, "--emit=cu", "--atomic-reduce", s], capture_output=True).stdout == \
                    subprocess.run([args.fusec, "--emit=cu", s], capture_output=True).stdout:
                same.add((s, "atomic"))
        print("atomic variant: %d kernels with the atomic combine in %d files" % (nk, nf), flush=True)
    with cf.ThreadPoolExecutor(args.jobs) as ex:
        builds = {(s, v): ex.submit(build, args, s, v, fl) for s in srcs for v, fl in VARIANTS.items()
                  if (s, v) not in same}
        runs = []
        for s in srcs:
            sos = {}
            for v in VARIANTS:
                if (s, v) in same:
                    continue
                so, err = builds[(s, v)].result()
                if so:
                    sos[v] = so
                else:
                    nfail += 1
                    print("MISMATCH %s: %s: %s" % (os.path.basename(s), v, err), flush=True)
            if sos:
                runs.append((s, ex.submit(run_file, args, s, sos)))
        for s, fut in runs:
            p, f, k, lines = fut.result()
            npass += p
            nfail += f
            nskip += k
            for ln in lines:
                print(ln, flush=True)
            print("progress: %s: %d passed, %d failed so far" % (os.path.basename(s), npass, nfail), flush=True)
    print("programs: %d files, variants: %s; %d trials skipped (argmax of an empty axis)" % (
        len(srcs), ", ".join(VARIANTS), nskip))
    print("%d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


# ---- the worker: one file's fns, in this process --------------------------

def np_dtype(np, dt):
    return {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16,
            "i32": np.int32, "i64": np.int64, "bool": np.bool_}[dt]


def as_f64(np, a, dt):
    if dt == "bf16":
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


def loosest(fn, dt):
    """A result is only as precise as the least precise float it is computed
    from: its own dtype, the fn's float params' and any f16/bf16 the fn's
    body names (an f16 intermediate is rounded by the interpreter, kept in
    f32 inside a fused kernel)."""
    cands = [c for c in [dt] + [p["dtype"] for p in fn["params"]] + fn.get("body_dtypes", []) if c in TOL]
    return max(cands, key=lambda c: TOL[c]) if cands else dt


def body_dtypes(text, name):
    """The half dtypes named in fn NAME's text (from `fn NAME(` to the next fn)."""
    m = re.search(r"^fn\s+%s\s*\((.*?)(?=^fn\s|\Z)" % re.escape(name), text, re.S | re.M)
    body = m.group(1) if m else ""
    return [d for d in ("f16", "bf16") if re.search(r"\b%s\b" % d, body)]


def compare(np, got, want, dt, tol_dt):
    g, w = as_f64(np, got, dt).ravel(), as_f64(np, want, dt).ravel()
    if g.shape != w.shape:
        return "shape %s != %s" % (g.shape, w.shape)
    if dt not in TOL:
        bad = np.nonzero(g != w)[0]
    else:
        tol = TOL[tol_dt]
        fin = np.isfinite(w)
        # at least 1e-2: a result that cancels to 0 in f64 (tanh(a) - tanh(a))
        # meets the f32 rounding of its O(1) operands in a fused kernel
        scale = max(np.max(np.abs(w[fin])) if fin.any() else 0.0, 1e-2)
        with np.errstate(invalid="ignore"):
            nan_bad = np.isnan(g) != np.isnan(w)
            inf_bad = np.isinf(w) & (g != w)
            val_bad = fin & ~(np.abs(g - w) <= tol * np.abs(w) + tol * scale)
        bad = np.nonzero(nan_bad | inf_bad | val_bad)[0]
    if len(bad):
        i = bad[0]
        return "%d of %d differ, first at flat index %d: got %r want %r" % (len(bad), g.size, i, g[i], w[i])
    return None


def numel(p, d):
    n = 1
    for x in p.get("shape", []):
        n *= d[x] if isinstance(x, str) else x
    return n


def dims_for(rng, fn, sizes, trial):
    """Sizes for the fn's symbols, keeping every tensor small (the emulator
    runs one fiber per GPU thread) and f16 sums in range.  Trial 0 of the
    examples uses 1 for every dim: the static-size-1 corner."""
    if sizes == "examples" and trial == 0:
        return {s: 1 for s in fn["syms"]}
    pool, limit, half_limit = POOLS[sizes]
    for _ in range(200):
        d = {s: rng.choice(pool) for s in fn["syms"]}
        if all(numel(p, d) <= (half_limit if p["dtype"] in ("f16", "bf16") else limit)
               for p in fn["params"] + fn["results"]):
            return d
    return {s: 1 for s in fn["syms"]}


def fixed_dims(fn, spec):
    """The fn's dims from one --dims set: N=3,M=999 (other names ignored,
    a dim left out is 1)."""
    given = {}
    for kv in spec.split(","):
        k, _, v = kv.partition("=")
        given[k.strip()] = int(v)
    return {s: given.get(s, 1) for s in fn["syms"]}


def make_input(np, rng, p, d):
    shp = tuple(d[x] if isinstance(x, str) else x for x in p.get("shape", []))
    g = np.random.default_rng(rng.randrange(1 << 30))
    dt = p["dtype"]
    if dt == "bool":
        return g.integers(0, 2, size=shp).astype(np.bool_)
    if dt in ("i32", "i64"):
        return g.integers(-5, 6, size=shp).astype(np_dtype(np, dt))
    a = g.uniform(-2, 2, size=shp)
    if dt == "bf16":  # truncated to bf16 bits: a valid bf16 value
        return (a.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return a.astype(np_dtype(np, dt))


def worker(args):
    import numpy as np
    src = args.worker
    libs = {}
    for kv in args.so:
        v, so = kv.split("=", 1)
        libs[v] = ctypes.CDLL(so)
        libs[v].fusert_last_error.restype = ctypes.c_char_p
    plan = json.loads(subprocess.check_output([args.fusec, "--emit=plan", src], stderr=subprocess.DEVNULL))
    tag = os.path.basename(src)[:-5]
    rng = random.Random("%s:%d" % (tag, args.seed))
    text = open(src).read()
    for fn in plan["functions"]:
        name = fn["name"]
        fn["body_dtypes"] = body_dtypes(text, name)
        for trial in range(args.trials):
            if args.dims:
                d = fixed_dims(fn, args.dims[trial % len(args.dims)])
            else:
                d = dims_for(rng, fn, args.sizes, trial)
            print("BEGIN %s dims %s" % (name, d), flush=True)
            problems = run_fn(np, args, libs, src, fn, d, rng, tag, trial)
            if problems is None:
                print("SKIP %s" % name, flush=True)
                continue
            for p in problems[:4]:
                print("MISMATCH %s dims %s: %s" % (name, d, p), flush=True)
            print("%s %s" % ("FAIL" if problems else "PASS", name), flush=True)
    return 0


def placed(np, a, shift):
    """a copy of a whose data starts `shift` elements into a fresh buffer
    (the end stays exact): odd trials misalign every buffer by one element,
    so the stubs' scalar (non-vector) paths run too."""
    if not shift:
        return np.ascontiguousarray(a).copy()
    base = np.empty(a.size + shift, a.dtype)
    out = base[shift:].reshape(a.shape)
    out[...] = a
    return out


def shift_of(args, trial, k):
    """the element shift of buffer k (tensor parameters, then results) in
    this trial: odd trials shift every buffer, or with --misalign
    odd-buffers only those at odd k"""
    if trial % 2 == 0:
        return 0
    return 1 if args.misalign == "all" or k % 2 == 1 else 0


def run_fn(np, args, libs, src, fn, d, rng, tag, trial):
    name = fn["name"]
    work = os.path.join(args.workdir, "%s_%s_%d" % (tag, name, trial))
    os.makedirs(work, exist_ok=True)
    files, tensors, scalars = [], [], []
    for p in fn["params"]:
        if p.get("scalar"):
            v = p.get("default")
            if v is None:
                v = rng.choice([0.5, 0.75, 1.25, 2.0, -0.5]) if p["dtype"] in TOL else rng.randrange(-3, 4)
            if p["dtype"] == "bool":
                v = float(rng.randrange(2))
            scalars.append(float(v))
            files += ["--input", "%s=%r" % (p["name"], float(v) if p["dtype"] in TOL else int(v))]
            continue
        a = make_input(np, rng, p, d)
        path = os.path.join(work, p["name"] + ".npy")
        np.save(path, a)
        files += ["--input", "%s=%s" % (p["name"], path)]
        tensors.append(placed(np, a, shift_of(args, trial, len(tensors))))
    outdir = os.path.join(work, "ref")
    r = subprocess.run([args.fusec, "--emit=eval", "--fn", name, *files, "--output-dir", outdir, src],
                       capture_output=True, text=True)
    if r.returncode != 0:
        if "has no answer" in r.stderr:  # argmax of an empty axis: an error by the language
            return None
        return ["interpreter failed: %s" % r.stderr.strip()[:300]]
    want = {p["name"]: np.load(os.path.join(outdir, p["name"] + ".npy")) for p in fn["results"]}
    dimv = [d[s] for s in fn["syms"]]
    problems = []
    before = [t.tobytes() for t in tensors]
    for vi, (label, lib) in enumerate(libs.items()):
        # results poisoned, differently per variant, so that an element no
        # kernel writes shows even where the reference is NaN or False
        outs = []
        for p in fn["results"]:
            shp = tuple(d[x] if isinstance(x, str) else x for x in p.get("shape", []))
            dt = np_dtype(np, p["dtype"])
            if p["dtype"] in ("f32", "f64"):
                o = np.full(shp, -7.7e29 if vi % 2 else np.nan, dt)
            elif p["dtype"] == "f16":
                o = np.full(shp, -12345.0 if vi % 2 else np.nan, dt)
            elif p["dtype"] == "bf16":
                o = np.full(shp, 0xf11b if vi % 2 else 0x7fc1, np.uint16)
            elif p["dtype"] == "bool":
                o = np.full(shp, vi % 2 == 1, np.bool_)
            else:
                o = np.full(shp, -123456789 - vi, dt)
            outs.append(placed(np, o, shift_of(args, trial, len(tensors) + len(outs))))
        bufs = tensors + outs
        ptrs = (ctypes.c_void_p * max(1, len(bufs)))(*[b.ctypes.data for b in bufs])
        sc = (ctypes.c_double * max(1, len(scalars)))(*(scalars or [0.0]))
        dv = (ctypes.c_int64 * max(1, len(dimv)))(*(dimv or [0]))
        f = getattr(lib, name + "_packed")
        f.restype = ctypes.c_int
        st = f(ptrs, sc, dv, None)
        if st != 0:
            problems.append("%s: status %d: %s" % (label, st, lib.fusert_last_error().decode(errors="replace")))
            continue
        for p, t, b in zip([q for q in fn["params"] if not q.get("scalar")], tensors, before):
            if t.tobytes() != b:
                problems.append("%s: input %s was written" % (label, p["name"]))
        for p, o in zip(fn["results"], outs):
            msg = compare(np, o, want[p["name"]], p["dtype"], loosest(fn, p["dtype"]))
            if msg:
                problems.append("%s: %s: %s" % (label, p["name"], msg))
    return problems


if __name__ == "__main__":
    sys.exit(main())
