#!/usr/bin/env python3
"""The model-layer benchmark suite: fusec against torch eager, torch.compile
and jax.jit on the programs of tools/bench/models/programs, in one process on
one GPU, and on the LayerNorm backward programs against a hand-written Triton
kernel too (hand_peers.py, the peer `hand`, where triton is importable).

For every case (a program, f32 or bf16, at a size of cases.py):
  * fusec's module is built for the cuda target with every dim made static
    (-D) and with symbolic dims (--variants nvrtc adds the nvrtc target with
    static dims); each is a shared library called through NAME_packed
    (ctypes).  Builds run in a pool of --jobs processes before the timing
    starts, so compilers do not share the CPU with timed host code;
  * inputs are random (cases.INPUT_KINDS), several sets of them when one set
    is smaller than 3 x the 60 MB L2, so that calls rotate among sets and
    read from memory, not from L2;
  * every output of every variant and peer is checked against a float64
    reference (torch in float64 on the GPU, cases.py's `ref`) before it is
    timed: the relative L2 error must be at most 2e-5 (f32) or 1.6e-2 (bf16),
    or twice the error of the reference rounded to the result dtype; i64
    results must be equal;
  * timing, each way the median of --reps calls after a warm-up:
      steady  calls queued back to back, one CUDA event pair around each;
      sync    a synchronize after each call (a program that reads a result
              each step), which shows host costs such as a per-call
              allocation;
    jax.jit runs on its own stream, so it is timed on the host: batches of
    10 calls then block_until_ready (steady), or each call then
    block_until_ready (sync);
  * a device-to-device copy of 2 GiB, timed the same way at the start, is
    the bandwidth reference: % of copy = (min bytes / time) / copy GB/s,
    min bytes = every input read once + every output written once.

Cases run in order of priority: every program at its first size (large) in
each dtype, then the other sizes.  --budget-s bounds the whole run: a case
that would not finish in time, and a torch.compile whose compile would not,
is skipped and marked so.  Results are written after every case, so a run
that is stopped still leaves them.

Modes without a GPU:
  --dry-run  everything up to the first CUDA call: every module built and
             loaded, the reference checked against the interpreter at small
             sizes (as --check does), and the list of cases it would time.
  --check    no C or CUDA compiler either: every program in f32 and bf16,
             symbolic and static at each size, translated for both targets
             (fusec only), its kernel plan recorded, and the float64
             interpreter (`fusec --emit=eval`) compared with cases.py's
             reference (NumPy, float64) at small sizes.  Exit status 1 on
             any failure.  --plan-md FILE writes the kernel table.

Outputs under --out: results.csv (one row per case, variant and timing mode),
results.md (the tables), plans.md (kernels per program), run.txt (GPU,
versions, command line).
"""
import argparse
import concurrent.futures as cf
import csv
import ctypes
import json
import math
import os
import re
import statistics
import subprocess
import threading
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PROGRAMS = os.path.join(HERE, "programs")
sys.path.insert(0, HERE)
import cases as C  # noqa: E402

DTYPES = ("f32", "bf16")
TOL = {"f32": 2e-5, "bf16": 1.6e-2}  # relative L2 error against float64 (docs/language.md)
ITEMSIZE = {"f32": 4, "bf16": 2, "f16": 2, "f64": 8, "i32": 4, "i64": 8, "bool": 1}
VARIANTS = {  # name: (target, static dims)
    "static": ("cuda", True),
    "symbolic": ("cuda", False),
    "nvrtc": ("nvrtc", True),
}
PEERS = ("torch", "compile", "jax", "hand")  # hand: hand_peers.PROGRAMS only
T0 = time.perf_counter()
LOG = []  # an open file that log() also writes to (--out/log.txt)


def log(*a):
    line = " ".join(["[%5.0f s]" % (time.perf_counter() - T0)] + [str(x) for x in a])
    print(line, file=sys.stderr, flush=True)
    for f in LOG:
        f.write(line + "\n")
        f.flush()


def source(name, dt):
    """The program text in dtype dt.  For bf16, every f32 tensor param and
    every f32 result (scalar results too) becomes bf16; scalar params stay
    f32 (promotion keeps bf16 tensors bf16 against them)."""
    with open(os.path.join(PROGRAMS, name + ".fuse"), encoding="utf-8") as f:
        text = f.read()
    if dt == "f32":
        return text
    out, pos = [], 0
    for m in re.finditer(r"\bfn\b[^{]*?->", text):  # one fn per program; params end at '->'
        out.append(text[pos:m.start()])
        out.append(m.group(0).replace("f32[", dt + "["))
        pos = m.end()
    brace = text.index("{", pos)
    out.append(re.sub(r"\bf32\b", dt, text[pos:brace]))
    out.append(text[brace:])
    return "".join(out)


def size_labels(case):
    return list(case["sizes"])


def numel(shape, dims):
    return math.prod(dims[d] if isinstance(d, str) else int(d) for d in shape)


# ---- fusec ---------------------------------------------------------------------------
class Fusec:
    def __init__(self, path, workdir):
        self.path, self.workdir = path, workdir

    def src(self, name, dt):
        """The program's file for dtype dt.  Builds in the pool ask for the
        same file at once: it is written under a name of this thread's and
        renamed into place, so no build reads it half written."""
        p = os.path.join(self.workdir, "%s_%s.fuse" % (name, dt))
        text = source(name, dt)
        if not os.path.exists(p) or open(p, encoding="utf-8").read() != text:
            tmp = "%s.%d.%d.tmp" % (p, os.getpid(), threading.get_ident())
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, p)
        return p

    def run(self, args, **kw):
        r = subprocess.run([self.path] + args, capture_output=True, text=True, **kw)
        if r.returncode != 0:
            raise RuntimeError("fusec %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr.strip()[:800]))
        return r.stdout

    def plan(self, src, defines=()):
        d = json.loads(self.run(["--emit=plan", *defines, src]))
        return d["functions"][0]

    def fusion(self, src, defines=()):
        return self.run(["--emit=fusion", *defines, src])


def defines_for(dims):
    return ["-D%s=%d" % (k, v) for k, v in sorted(dims.items())]


def tag_of(name, dt, variant, size):
    static = VARIANTS[variant][1]
    return "%s_%s_%s%s" % (name, dt, variant, "_" + size if static else "")


def build_module(args, fz, name, dt, variant, dims, tag, compile_c=True):
    """Translate (and, with compile_c, compile) one module.  Returns a dict:
    tag, plan, so (path or None), seconds."""
    target, static = VARIANTS[variant]
    src = fz.src(name, dt)
    defs = defines_for(dims) if static else []
    t0 = time.perf_counter()
    plan = fz.plan(src, defs)
    out = os.path.join(args.workdir, tag + (".cu" if target == "cuda" else ".c"))
    fz.run(["--target=" + target, *defs, src, "-o", out])
    res = dict(tag=tag, fn=name, plan=plan, so=None, translate_s=time.perf_counter() - t0)
    if not compile_c:
        return res
    so = os.path.join(args.workdir, tag + ".so")
    rt_inc = os.path.join(ROOT, "runtime")
    rt = os.path.abspath(args.runtime)
    if target == "cuda":
        cmd = ["nvcc", "-O3", "-arch=" + args.arch, "-shared", "-Xcompiler", "-fPIC", "-I", rt_inc,
               "-I", args.workdir, out, "-o", so, "-L", rt, "-lfusert", "-Xlinker=-rpath=" + rt]
    else:
        cmd = [os.environ.get("CC", "gcc"), "-O2", "-std=c11", "-shared", "-fPIC", "-I", rt_inc,
               "-I", args.workdir, out, "-o", so, "-L", rt, "-lfusert", "-Wl,-rpath," + rt]
    t1 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd[:2]), r.stderr.strip()[:800]))
    res["so"], res["compile_s"] = so, time.perf_counter() - t1
    return res


class Module:
    """A built module loaded with ctypes, called through NAME_packed."""

    def __init__(self, built, fn, runtime):
        self.plan = built["plan"]
        self.kernels = len(self.plan["kernels"])
        self.lib = ctypes.CDLL(built["so"])
        self.packed = getattr(self.lib, fn + "_packed")
        self.packed.restype = ctypes.c_int
        self.packed.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_double),
                                ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p]
        self.rt = ctypes.CDLL(os.path.join(runtime, "libfusert.so"))
        self.rt.fusert_last_error.restype = ctypes.c_char_p
        self.fn = fn

    def bind(self, in_ptrs, out_ptrs, scalars, dims, stream):
        """The argument arrays of one call, made once (ctypes costs host time)."""
        syms = self.plan.get("syms", [])
        ptrs = (ctypes.c_void_p * max(1, len(in_ptrs) + len(out_ptrs)))(*(in_ptrs + out_ptrs))
        sc = (ctypes.c_double * max(1, len(scalars)))(*(scalars or [0.0]))
        dm = (ctypes.c_int64 * max(1, len(syms)))(*([dims[s] for s in syms] or [0]))
        st = ctypes.c_void_p(stream)
        packed, rt, fn = self.packed, self.rt, self.fn

        def call():
            s = packed(ptrs, sc, dm, st)
            if s != 0:
                raise RuntimeError("%s: status %d: %s" % (fn, s, rt.fusert_last_error().decode()))
        return call


# ---- the kernel table ------------------------------------------------------------------
def plan_row(plan):
    """kernels, their kinds, and the codes of the rejected merges."""
    kinds = []
    for k in plan["kernels"]:
        kind = k["kind"] + ("/" + k["layout"] if k.get("layout") else "")
        kinds.append(kind)
    codes = sorted({r["code"] for r in plan.get("rejected", [])})
    return len(plan["kernels"]), kinds, codes


def plans_markdown(plans):
    """plans: {(name, dt): {build label: plan}} -> a markdown table."""
    lines = ["| program | dtype | kernels: symbolic | static (per size) | kernels (symbolic build) | not fused |",
             "| --- | --- | --- | --- | --- | --- |"]
    for (name, dt), by in plans.items():
        n, kinds, codes = plan_row(by["symbolic"])
        static = ", ".join("%s %d" % (lab[len("static "):], len(p["kernels"]))
                           for lab, p in by.items() if lab.startswith("static "))
        lines.append("| %s | %s | %d | %s | %s | %s |" % (name, dt, n, static, ", ".join(kinds),
                                                          ", ".join(codes) or "-"))
    return "\n".join(lines) + "\n"


# ---- inputs and the reference on the host (NumPy): --check and --dry-run ---------------
def bf16_bits(np, a):
    """float array -> bf16 bits, rounded to nearest even (finite values)."""
    b = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def bits_to_f64(np, bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def host_input(np, rng, kind, shape, dims):
    if kind == "labels":
        return rng.integers(0, dims["V"], size=shape, dtype=np.int64)
    if kind == "classes":
        return np.arange(shape[0], dtype=np.int64)
    if kind == "onehot":
        a = np.zeros(shape)
        a[np.arange(shape[0]), rng.integers(0, shape[1], size=shape[0])] = 1.0
        return a
    if kind == "pos":
        return rng.random(shape) + 0.1
    if kind == "mask":
        n = shape[-1]
        return np.triu(np.full((n, n), -10000.0), 1) + rng.standard_normal(shape) * 0.1
    scale = {"normal": 1.0, "scores": 4.0, "small": 0.1}[kind]
    return rng.standard_normal(shape) * scale


def check_reference(args, fz, name, dt, plan):
    """Run the interpreter at the case's check dims and compare with the
    NumPy float64 reference.  Returns (ok, worst error, message)."""
    import numpy as np
    case = C.CASES[name]
    dims = case["check"]
    rng = np.random.default_rng(7)
    d = tempfile.mkdtemp(prefix="ref-", dir=args.workdir)
    cmd = ["--emit=eval", "--fn", name, "--output-dir", d]
    vals = {}
    for p in plan["params"]:
        if p["scalar"]:
            v = float(case["scalars"][p["name"]])
            vals[p["name"]] = float(np.float32(v))
            cmd += ["--input", "%s=%r" % (p["name"], vals[p["name"]])]
            continue
        shape = [dims[s] if isinstance(s, str) else int(s) for s in p["shape"]]
        a = host_input(np, rng, case["gen"].get(p["name"], "normal"), shape, dims)
        path = os.path.join(d, "in_%s.npy" % p["name"])
        if p["dtype"] == "bf16":
            bits = bf16_bits(np, a)
            np.save(path, bits)
            vals[p["name"]] = bits_to_f64(np, bits)
        elif p["dtype"] == "f32":
            a = a.astype(np.float32)
            np.save(path, a)
            vals[p["name"]] = a.astype(np.float64)
        else:
            np.save(path, a)
            vals[p["name"]] = a
        cmd += ["--input", "%s=%s" % (p["name"], path)]
    fz.run(cmd + [fz.src(name, dt)])
    want = case["ref"](C.numpy_ops(), vals)
    if len(want) != len(plan["results"]):
        return False, math.inf, "ref gives %d results, the fn %d" % (len(want), len(plan["results"]))
    worst = 0.0
    for r, w in zip(plan["results"], want):
        got = np.load(os.path.join(d, r["name"] + ".npy"))
        w = np.asarray(w)
        if got.shape != w.shape:
            return False, math.inf, "%s: shape %s, ref %s" % (r["name"], got.shape, w.shape)
        if r["dtype"] in ("i32", "i64", "bool"):
            bad = int(np.sum(got != w))
            if bad:
                return False, math.inf, "%s: %d of %d differ" % (r["name"], bad, got.size)
            continue
        g = bits_to_f64(np, got) if r["dtype"] == "bf16" else got.astype(np.float64)
        den = float(np.linalg.norm(w)) or 1.0
        e = float(np.linalg.norm(g - w)) / den
        worst = max(worst, e)
        if not e <= TOL[dt]:
            return False, e, "%s: relative L2 error %.3g > %.3g" % (r["name"], e, TOL[dt])
    return True, worst, "ok"


# ---- selection -------------------------------------------------------------------------
def select_cases(text):
    """--cases: a comma list of program names or substrings of them."""
    if not text:
        return list(C.CASES)
    out = []
    for pat in filter(None, text.split(",")):
        hit = [n for n in C.CASES if n == pat] or [n for n in C.CASES if pat in n]
        if not hit:
            raise SystemExit("run.py: --cases: %r names no program (they are: %s)" % (pat, ", ".join(C.CASES)))
        out += [n for n in hit if n not in out]
    return out


def set_sweep_sizes(ap, names, specs):
    """--dims: each spec becomes a size of every selected program, labelled
    by its values (A9_B2051); returns the labels."""
    labels = []
    for spec in specs:
        try:
            dims = {k.strip(): int(v) for k, v in (kv.split("=") for kv in spec.split(",") if kv)}
        except ValueError:
            ap.error("--dims: %r is not NAME=SIZE,..." % spec)
        label = "_".join("%s%d" % kv for kv in dims.items())
        for n in names:
            want = set(next(iter(C.CASES[n]["sizes"].values())))
            if set(dims) != want:
                ap.error("--dims %s: %s takes %s" % (spec, n, ",".join(sorted(want))))
            C.CASES[n]["sizes"] = dict(C.CASES[n]["sizes"], **{label: dims})
        labels.append(label)
    for n in names:
        C.CASES[n]["sizes"] = {k: v for k, v in C.CASES[n]["sizes"].items() if k in labels}
    return set(labels)


def size_wanted(labels, rank, sizes_filter):
    """--sizes names labels; "large" also means every program's first size
    and "odd" its others (the vocabulary programs' sizes are named v32000...)."""
    if not sizes_filter:
        return True
    return (labels[rank] in sizes_filter or ("large" in sizes_filter and rank == 0)
            or ("odd" in sizes_filter and rank > 0))


def ordered_runs(names, dtypes, sizes_filter):
    """(name, dt, size) in order of priority: each program's first size in
    every dtype, then its second size, ..."""
    runs = []
    for rank in range(max(len(size_labels(C.CASES[n])) for n in names)):
        for dt in dtypes:
            for n in names:
                labels = size_labels(C.CASES[n])
                if rank < len(labels) and size_wanted(labels, rank, sizes_filter):
                    runs.append((n, dt, labels[rank]))
    return runs


# ---- --check: translate everything, compare the interpreter with the reference --------
def do_check(args, names, dtypes):
    fz = Fusec(args.fusec, args.workdir)
    plans, failures, nbuild, nref = {}, [], 0, 0
    for name in names:
        for dt in dtypes:
            by = {}
            try:
                # both targets, symbolic and static at every size
                for size in [None] + size_labels(C.CASES[name]):
                    dims = C.CASES[name]["sizes"][size] if size else {}
                    for variant in (("symbolic",) if size is None else ("static", "nvrtc")):
                        built = build_module(args, fz, name, dt, variant, dims,
                                             tag_of(name, dt, variant, size), compile_c=False)
                        nbuild += 1
                        if variant != "nvrtc":
                            by["symbolic" if size is None else "static " + size] = built["plan"]
                src = fz.src(name, dt)
                fz.run(["--target=nvrtc", src, "-o", os.path.join(args.workdir, "%s_%s_symbolic.c" % (name, dt))])
                nbuild += 1
            except RuntimeError as ex:
                failures.append("%s %s: %s" % (name, dt, ex))
                continue
            plans[(name, dt)] = by
            if args.no_reference:
                continue
            try:
                ok, err, msg = check_reference(args, fz, name, dt, by["symbolic"])
            except Exception as ex:  # a broken reference is a failure, not a crash
                ok, err, msg = False, math.inf, "%s: %s" % (type(ex).__name__, ex)
            nref += 1
            if not ok:
                failures.append("%s %s: reference: %s" % (name, dt, msg))
            elif args.verbose:
                print("ok   %s %s: interpreter vs reference, relative L2 %.2g" % (name, dt, err))
    table = plans_markdown(plans)
    if args.plan_md:
        with open(args.plan_md, "w", encoding="utf-8") as f:
            f.write(table)
    if args.verbose:
        print(table)
    for f in failures:
        print("FAIL " + f)
    print("model suite: %d programs, %d translations, %d reference checks: %d failed"
          % (len(names), nbuild, nref, len(failures)))
    return 1 if failures else 0


# ---- the GPU run -----------------------------------------------------------------------
def build_all(args, names, runs, variants):
    """Submit every module build to a pool; returns {tag: future}."""
    fz = Fusec(args.fusec, args.workdir)
    pool = cf.ThreadPoolExecutor(max_workers=args.jobs)
    futs = {}
    for name, dt, size in runs:
        for v in variants:
            tag = tag_of(name, dt, v, size)
            if tag not in futs:
                dims = C.CASES[name]["sizes"][size]
                futs[tag] = pool.submit(build_module, args, fz, name, dt, v, dims, tag)
    return pool, futs


class Timer:
    def __init__(self, torch, reps, warmup):
        self.torch, self.reps, self.warmup = torch, reps, warmup

    def cuda(self, calls, sync):
        """Median us of calls[i % len(calls)](), each between two events."""
        t = self.torch
        for i in range(self.warmup):
            calls[i % len(calls)]()
        t.cuda.synchronize()
        ev = [(t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)) for _ in range(self.reps)]
        for i, (a, b) in enumerate(ev):
            a.record()
            calls[i % len(calls)]()
            b.record()
            if sync:
                t.cuda.synchronize()
        t.cuda.synchronize()
        return statistics.median(a.elapsed_time(b) * 1e3 for a, b in ev)

    def host(self, calls, block, sync, batch=10):
        """jax: host wall time per call, median over batches (steady) or calls (sync)."""
        for i in range(3):
            block(calls[i % len(calls)]())
        res = []
        if sync:
            for i in range(self.reps):
                t0 = time.perf_counter()
                block(calls[i % len(calls)]())
                res.append((time.perf_counter() - t0) * 1e6)
        else:
            for r in range(max(3, self.reps // batch)):
                t0 = time.perf_counter()
                out = None
                for i in range(batch):
                    out = calls[(r * batch + i) % len(calls)]()
                block(out)
                res.append((time.perf_counter() - t0) / batch * 1e6)
        return statistics.median(res)


def torch_dtype(torch, dt):
    return {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "f64": torch.float64,
            "i32": torch.int32, "i64": torch.int64, "bool": torch.bool}[dt]


def make_inputs(torch, plan, case, dims, dt, gen):
    """One set of inputs on the GPU, by param name (scalars excluded)."""
    out = {}
    for p in plan["params"]:
        if p["scalar"]:
            continue
        shape = [dims[s] if isinstance(s, str) else int(s) for s in p["shape"]]
        kind = case["gen"].get(p["name"], "normal")
        tdt = torch_dtype(torch, p["dtype"])
        if kind == "labels":
            a = torch.randint(0, dims["V"], shape, device="cuda", generator=gen, dtype=torch.int64)
        elif kind == "classes":
            a = torch.arange(shape[0], device="cuda", dtype=torch.int64)
        elif kind == "onehot":
            lab = torch.randint(0, shape[1], (shape[0],), device="cuda", generator=gen)
            a = torch.nn.functional.one_hot(lab, shape[1]).to(tdt)
        elif kind == "pos":
            a = (torch.rand(shape, device="cuda", generator=gen) + 0.1).to(tdt)
        elif kind == "mask":
            n = shape[-1]
            m = torch.triu(torch.full((n, n), -10000.0, device="cuda"), 1)
            a = (m + torch.randn(shape, device="cuda", generator=gen) * 0.1).to(tdt)
        else:
            scale = {"normal": 1.0, "scores": 4.0, "small": 0.1}[kind]
            a = (torch.randn(shape, device="cuda", generator=gen) * scale).to(tdt)
        out[p["name"]] = a.contiguous()
    return out


def rel_err(torch, out, ref):
    out = out.reshape(ref.shape)
    if not ref.is_floating_point():
        return 0.0 if torch.equal(out.to(ref.dtype), ref) else math.inf
    out = out.double()
    if bool(torch.isnan(out).any()) != bool(torch.isnan(ref).any()):
        return math.inf
    den = torch.linalg.vector_norm(ref).item() or 1.0
    return torch.linalg.vector_norm(out - ref).item() / den


class Run:
    """The GPU run: state shared by the cases."""

    def __init__(self, args, torch, jax_mod, hand_mod=None):
        self.args, self.torch, self.jax, self.hand = args, torch, jax_mod, hand_mod
        self.timer = Timer(torch, args.reps, args.warmup)
        self.rows = []      # one dict per case
        self.long = []      # one dict per case, variant and mode (the CSV)
        self.case_s = []    # seconds each finished case took
        self.compile_s = []  # seconds of each torch.compile's first call

    def left(self):
        return self.args.budget_s - (time.perf_counter() - T0)

    def copy_reference(self):
        t = self.torch
        n = (2 << 30) // 4
        bufs = [t.randn(n, device="cuda")]
        bufs.append(t.empty_like(bufs[0]))
        us = self.timer.cuda([lambda: bufs[1].copy_(bufs[0])], sync=False)
        bufs.clear()
        t.cuda.empty_cache()
        self.copy_us, self.copy_gbs = us, 2 * n * 4 / (us * 1e-6) / 1e9
        log("copy reference: %.0f GB/s (2 GiB device-to-device, %.1f us)" % (self.copy_gbs, us))

    def count_kernels(self, fn):
        if self.args.no_profile:
            return None
        t = self.torch
        from torch.profiler import profile, ProfilerActivity
        fn()
        t.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            t.cuda.synchronize()
        return sum(1 for e in prof.events() if e.device_type == t.autograd.DeviceType.CUDA)

    def case(self, name, dt, size, futs, variants):
        t, args = self.torch, self.args
        case = C.CASES[name]
        dims = case["sizes"][size]
        t_case = time.perf_counter()
        row = dict(case=name, dtype=dt, size=size, dims=" ".join("%s=%d" % kv for kv in dims.items()))
        built = {}
        for v in variants:
            try:
                built[v] = futs[tag_of(name, dt, v, size)].result()
            except Exception as ex:
                row[v + "_status"] = "build failed: %s" % str(ex)[:200]
                log("  %s %s %s %s: BUILD FAILED: %s" % (name, dt, size, v, ex))
        if not built:
            self.rows.append(row)
            return row
        plan = next(iter(built.values()))["plan"]
        res_dt = [r["dtype"] for r in plan["results"]]
        res_shape = [tuple(dims[s] if isinstance(s, str) else int(s) for s in r["shape"]) for r in plan["results"]]
        in_bytes = sum(numel(p["shape"], dims) * ITEMSIZE[p["dtype"]] for p in plan["params"] if not p["scalar"])
        out_bytes = sum(math.prod(s) * ITEMSIZE[d] for s, d in zip(res_shape, res_dt))
        row["min_bytes"] = in_bytes + out_bytes
        nsets = max(2, min(8, int(math.ceil(3 * 60e6 / max(1, in_bytes))) + 1))
        gen = t.Generator(device="cuda")
        gen.manual_seed(1234)
        sets = [make_inputs(t, plan, case, dims, dt, gen) for _ in range(nsets)]
        scal = {p["name"]: float(case["scalars"][p["name"]]) for p in plan["params"] if p["scalar"]}
        tensor_names = [p["name"] for p in plan["params"] if not p["scalar"]]

        # the float64 reference, on the first set
        a64 = {k: (v.double() if v.is_floating_point() else v) for k, v in sets[0].items()}
        a64.update(scal)
        ref = [r if t.is_tensor(r) else t.tensor(r, dtype=t.float64, device="cuda")
               for r in case["ref"](C.TorchOps(t), a64)]
        del a64
        ref = [r.reshape(s) for r, s in zip(ref, res_shape)]
        tols = []
        for r, d in zip(ref, res_dt):
            if not r.is_floating_point():
                tols.append(0.0)
            else:
                tols.append(max(TOL[dt], 2 * rel_err(t, r.to(torch_dtype(t, d)), r)))

        def check(label, outs):
            worst = 0.0
            for i, (o, r, tol) in enumerate(zip(outs, ref, tols)):
                e = rel_err(t, o, r)
                if not e <= tol:
                    log("  %s %s %s %s: CHECK FAILED: result %s: error %.3g > %.3g"
                        % (name, dt, size, label, plan["results"][i]["name"], e, tol))
                    return False, e
                worst = max(worst, e)
            return True, worst

        def record(label, calls, kernels, host=None):
            """Check one call, then time steady and sync; fills row and the CSV rows."""
            for mode in ("steady", "sync"):
                try:
                    if host:
                        us = self.timer.host(calls, host, sync=(mode == "sync"))
                    else:
                        us = self.timer.cuda(calls, sync=(mode == "sync"))
                except Exception as ex:
                    log("  %s %s %s %s: TIMING FAILED: %s" % (name, dt, size, label, ex))
                    row[label + "_status"] = "timing failed"
                    return
                row["%s_%s" % (label, mode)] = us
                gbs = row["min_bytes"] / (us * 1e-6) / 1e9
                self.long.append(dict(case=name, dtype=dt, size=size, dims=row["dims"], variant=label,
                                      mode=mode, us="%.2f" % us, gbs="%.1f" % gbs,
                                      pct_copy="%.1f" % (100 * gbs / self.copy_gbs),
                                      kernels="" if kernels is None else kernels,
                                      err="%.3g" % row.get(label + "_err", 0.0),
                                      first_s="%.3f" % row.get(label + "_first_s", 0.0),
                                      min_bytes=row["min_bytes"]))
            row[label + "_kernels"] = kernels

        # fusec
        for v, b in built.items():
            try:
                mod = Module(b, name, os.path.abspath(args.runtime))
                outs = [[t.full(s if s else (1,), float("nan") if d in ("f32", "bf16") else -1,
                                device="cuda", dtype=torch_dtype(t, d)) for s, d in zip(res_shape, res_dt)]
                        for _ in range(nsets)]
                stream = t.cuda.current_stream().cuda_stream
                calls = [mod.bind([sets[i][n].data_ptr() for n in tensor_names], [o.data_ptr() for o in outs[i]],
                                  [scal[p["name"]] for p in plan["params"] if p["scalar"]], dims, stream)
                         for i in range(nsets)]
                first = time.perf_counter()
                calls[0]()
                t.cuda.synchronize()
                row[v + "_first_s"] = time.perf_counter() - first  # nvrtc: the JIT compile too
                ok, e = check(v, outs[0])
                row[v + "_err"] = e
                if ok:
                    record(v, calls, mod.kernels)
                else:
                    row[v + "_status"] = "wrong"
                del outs
            except Exception as ex:
                row[v + "_status"] = "failed: %s" % str(ex)[:200]
                log("  %s %s %s %s: FAILED: %s" % (name, dt, size, v, ex))

        # the peers: the model's own torch calls where cases.py has them, else ref in f32
        out_tdt = [torch_dtype(t, d) for d in res_dt]
        native = case["native"]
        tops = C.TorchOps(t)  # made here: torch.compile then sees a constant namespace

        def torch_fn(*ts):
            a = dict(zip(tensor_names, ts))
            if native is None:
                a = {k: (x.float() if x.is_floating_point() else x) for k, x in a.items()}
            a.update(scal)
            r = native(t, a) if native is not None else case["ref"](tops, a)
            return tuple(x.to(o) for x, o in zip(r, out_tdt))

        def peer(label, f):
            try:
                first = time.perf_counter()
                outs = f(*[sets[0][n] for n in tensor_names])
                t.cuda.synchronize()
                row[label + "_first_s"] = time.perf_counter() - first  # torch.compile: the compile too
                ok, e = check(label, outs)
                del outs
                row[label + "_err"] = e
                if not ok:
                    row[label + "_status"] = "wrong"
                    return
                calls = [(lambda s=s: f(*[s[n] for n in tensor_names])) for s in sets]
                record(label, calls, self.count_kernels(calls[0]))
            except Exception as ex:
                row[label + "_status"] = "failed: %s" % str(ex)[:200]
                log("  %s %s %s %s: FAILED: %s" % (name, dt, size, label, ex))

        if "torch" not in args.skip:
            peer("torch", torch_fn)
        if "compile" not in args.skip:
            est = max(self.compile_s[-3:]) if self.compile_s else 20.0  # the first one is the slowest
            if self.left() < est + 5:
                row["compile_status"] = "skipped: budget"
            else:
                t._dynamo.reset()
                peer("compile", t.compile(torch_fn, dynamic=False))
                if "compile_first_s" in row:
                    self.compile_s.append(row["compile_first_s"])
        if self.hand is not None and name in self.hand.PROGRAMS:  # None under --skip hand
            try:
                f = self.hand.ln_bwd_peer(t, name, dims, tensor_names, out_tdt)
            except Exception as ex:  # ValueError: rows too long for the form
                f, row["hand_status"] = None, "%s: %s" % (
                    "skipped" if isinstance(ex, ValueError) else "failed", str(ex)[:200])
            if f is not None:
                peer("hand", f)
        if "jax" not in args.skip and self.jax is not None:
            self.jax_peer(row, name, dt, size, case, sets, tensor_names, scal, res_dt, check, record)
        sets.clear()  # free the inputs before the next case
        t.cuda.empty_cache()
        peers = [row.get(p + "_steady") for p in PEERS if row.get(p + "_steady")]
        row["best_peer"] = min(peers) if peers else None
        row["best_peer_sync"] = min([row[p + "_sync"] for p in PEERS if row.get(p + "_sync")] or [0]) or None
        row["seconds"] = time.perf_counter() - t_case
        self.case_s.append(row["seconds"])
        self.rows.append(row)
        return row

    def jax_peer(self, row, name, dt, size, case, sets, tensor_names, scal, res_dt, check, record):
        jax, t = self.jax, self.torch
        from jax import dlpack as jdl
        try:
            jf = jax.jit(jax_fn(case, tensor_names, scal, res_dt))
            jsets = [[jdl.from_dlpack(s[n]) for n in tensor_names] for s in sets]
            first = time.perf_counter()
            outs = jf(*jsets[0])
            jax.block_until_ready(outs)
            row["jax_first_s"] = time.perf_counter() - first
            ok, e = check("jax", [t.from_dlpack(o) for o in outs])
            row["jax_err"] = e
            if not ok:
                row["jax_status"] = "wrong"
                return
            calls = [(lambda s=s: jf(*s)) for s in jsets]
            record("jax", calls, None, host=jax.block_until_ready)
        except Exception as ex:
            row["jax_status"] = "failed: %s" % str(ex)[:200]
            log("  %s %s %s jax: FAILED: %s" % (name, dt, size, ex))


def jax_fn(case, tensor_names, scal, res_dt):
    """The jax peer before jax.jit: bf16 inputs computed in f32, results
    rounded to the program's result dtypes."""
    import jax.numpy as jnp
    jdt = {"f32": jnp.float32, "bf16": jnp.bfloat16, "i64": jnp.int64, "i32": jnp.int32,
           "f64": jnp.float64, "bool": jnp.bool_}
    F = C.jax_ops()

    def f(*ts):
        a = {k: (x.astype(jnp.float32) if x.dtype == jnp.bfloat16 else x) for k, x in zip(tensor_names, ts)}
        a.update(scal)
        r = case["ref"](F, a)
        return tuple(jnp.asarray(x).astype(jdt[d]) for x, d in zip(r, res_dt))
    return f


# ---- the tables --------------------------------------------------------------------------
COLS = [("static", "fusec static"), ("symbolic", "fusec symbolic"), ("nvrtc", "fusec nvrtc"),
        ("torch", "torch eager"), ("compile", "torch.compile"), ("jax", "jax.jit"),
        ("hand", "hand-fused (Triton)")]


def shown(cols):
    """The columns of the tables: the variants that ran, every peer, and
    the hand-fused one where cols names it (a run that can have it)."""
    return [(v, c) for v, c in COLS if v in cols or (v in PEERS and v != "hand")]


def cell(row, v, mode):
    us = row.get("%s_%s" % (v, mode))
    if us is None:
        st = row.get(v + "_status", "")
        return "skipped" if st.startswith("skipped") else ("FAIL" if st else "-")
    k = row.get(v + "_kernels")
    return "%.1f%s" % (us, " (%dk)" % k if k is not None else "")


def table(rows, copy_gbs, mode, variants=tuple(VARIANTS)):
    cols = shown(variants)
    head = ["case", "dtype", "size"] + [c for _, c in cols] + \
           ["best peer", "static / best", "symbolic / best", "fusec GB/s", "% of copy"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        best = r.get("best_peer") if mode == "steady" else r.get("best_peer_sync")
        st, sy = r.get("static_" + mode), r.get("symbolic_" + mode)
        ours = st or sy
        gbs = r["min_bytes"] / (ours * 1e-6) / 1e9 if ours and r.get("min_bytes") else None
        cells = [r["case"], r["dtype"], "%s (%s)" % (r["size"], r["dims"])] + \
                [cell(r, v, mode) for v, _ in cols] + \
                ["%.1f" % best if best else "-",
                 "%.3f" % (st / best) if st and best else "-",
                 "%.3f" % (sy / best) if sy and best else "-",
                 "%.0f" % gbs if gbs else "-",
                 "%.0f%%" % (100 * gbs / copy_gbs) if gbs else "-"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_results(args, run, skipped, header):
    with open(os.path.join(args.out, "results.csv"), "w", newline="") as f:
        cols = ["case", "dtype", "size", "dims", "variant", "mode", "us", "gbs", "pct_copy", "kernels",
                "err", "first_s", "min_bytes"]
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(run.long)
    with open(os.path.join(args.out, "results.md"), "w", encoding="utf-8") as f:
        f.write(header)
        f.write("\n## Steady state (calls back to back), median us (kernels per call)\n\n")
        f.write(table(run.rows, run.copy_gbs, "steady", args.columns))
        f.write("\n## Sync per call (a synchronize after each call), median us\n\n")
        f.write(table(run.rows, run.copy_gbs, "sync", args.columns))
        notes = []
        for r in run.rows:
            for v, _ in COLS:
                st = r.get(v + "_status")
                if st:
                    notes.append("- %s %s %s, %s: %s" % (r["case"], r["dtype"], r["size"], v, st))
        if notes:
            f.write("\n## Not timed\n\n" + "\n".join(notes) + "\n")
        if skipped:
            f.write("\n## Skipped for the budget\n\n" + ", ".join("%s %s %s" % s for s in skipped) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fusec", default=os.path.join(ROOT, "build", "fusec"))
    ap.add_argument("--runtime", default=os.path.join(ROOT, "build", "runtime"),
                    help="the folder that holds libfusert.so")
    ap.add_argument("--out", help="folder for results.csv, results.md, plans.md, run.txt")
    ap.add_argument("--workdir", help="folder for the generated sources and libraries (default: a temporary one)")
    ap.add_argument("--cases", default="", help="comma list of programs (names or parts of names)")
    ap.add_argument("--dtypes", default="f32,bf16")
    ap.add_argument("--sizes", default="", help="comma list of size labels (large, odd, v32000, ...); default all")
    ap.add_argument("--dims", action="append", default=[], metavar="A=9,B=2051",
                    help="(repeatable) run the selected programs at these sizes instead of their own: a sweep "
                         "with the peers in the same run; every dim of a program must be given")
    ap.add_argument("--variants", default="static,symbolic",
                    help="fusec builds to time: static, symbolic (cuda target), nvrtc (static dims)")
    ap.add_argument("--skip", default="", help="comma list of peers to leave out: torch,compile,jax,hand")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--budget-s", type=float, default=480.0,
                    help="stop starting cases (and torch.compile compiles) that would end after this")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel module builds")
    ap.add_argument("--arch", default="sm_90", help="nvcc -arch for the cuda target")
    ap.add_argument("--no-profile", action="store_true", help="do not count the peers' kernels")
    ap.add_argument("--dry-run", action="store_true", help="everything up to the first CUDA call")
    ap.add_argument("--check", action="store_true",
                    help="no GPU, no C compiler: translate everything, compare the interpreter with the reference")
    ap.add_argument("--no-reference", action="store_true", help="--check: translations only")
    ap.add_argument("--plan-md", help="--check: write the kernel table here")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if args.reps < 20 and not (args.check or args.dry_run):
        ap.error("--reps: at least 20")
    names = select_cases(args.cases)
    dtypes = [d for d in args.dtypes.split(",") if d]
    for d in dtypes:
        if d not in DTYPES:
            ap.error("--dtypes: %r is not one of %s" % (d, ", ".join(DTYPES)))
    variants = [v for v in args.variants.split(",") if v]
    for v in variants:
        if v not in VARIANTS:
            ap.error("--variants: %r is not one of %s" % (v, ", ".join(VARIANTS)))
    args.skip = set(filter(None, args.skip.split(",")))
    args.variants = args.columns = variants
    if not os.path.exists(args.fusec):
        ap.error("--fusec: no file %s" % args.fusec)
    args.fusec = os.path.abspath(args.fusec)
    args.workdir = os.path.abspath(args.workdir or tempfile.mkdtemp(prefix="fusec-models-"))
    os.makedirs(args.workdir, exist_ok=True)
    if args.check:
        return do_check(args, names, dtypes)

    if not (args.out or args.dry_run):
        ap.error("--out is needed")
    sizes_filter = set(filter(None, args.sizes.split(",")))
    if args.dims:
        sizes_filter = set_sweep_sizes(ap, names, args.dims)
    runs = ordered_runs(names, dtypes, sizes_filter)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        LOG.append(open(os.path.join(args.out, "log.txt"), "w", encoding="utf-8"))
    os.environ.setdefault("FUSERT_CACHE_DIR", os.path.join(args.workdir, "fusert-cache"))
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # jax beside torch in one process

    # builds first, in parallel: plans also give the kernel table
    pool, futs = build_all(args, names, runs, variants)
    log("building %d modules with %d jobs in %s" % (len(futs), args.jobs, args.workdir))
    cf.wait(list(futs.values()))
    pool.shutdown()
    nfail = sum(1 for f in futs.values() if f.exception())
    for tag, f in futs.items():
        if f.exception():
            log("  build %s FAILED: %s" % (tag, f.exception()))
    build_s = time.perf_counter() - T0
    done = sorted((f.result()["compile_s"], tag) for tag, f in futs.items() if f.exception() is None)
    log("built %d modules (%d failed) in %.0f s; compilers' time %.0f s, slowest: %s"
        % (len(futs), nfail, build_s, sum(c for c, _ in done),
           ", ".join("%s %.1f s" % (tag, c) for c, tag in done[-3:][::-1])))
    plans = {}
    for name, dt, size in runs:
        for v in variants:
            f = futs[tag_of(name, dt, v, size)]
            if f.exception() is None and v in ("static", "symbolic"):
                plans.setdefault((name, dt), {})["symbolic" if v == "symbolic" else "static " + size] = \
                    f.result()["plan"]
    plans = {k: v for k, v in plans.items() if "symbolic" in v}
    plan_table = plans_markdown(plans)
    if args.out:
        with open(os.path.join(args.out, "plans.md"), "w", encoding="utf-8") as f:
            f.write(plan_table)

    try:
        import torch
    except ImportError:
        torch = None
    if args.dry_run:
        # what the run does before its first CUDA call: load every module,
        # and check the reference against the interpreter
        loaded = 0
        for f in futs.values():
            if f.exception() is None:
                Module(f.result(), f.result()["fn"], os.path.abspath(args.runtime))
                loaded += 1
        fz = Fusec(args.fusec, args.workdir)
        bad = 0
        for (name, dt), by in plans.items():
            ok, err, msg = check_reference(args, fz, name, dt, by["symbolic"])
            bad += not ok
            print("%s %s %s: interpreter vs reference at %s: %s" % ("ok  " if ok else "FAIL", name, dt,
                                                                    C.CASES[name]["check"], msg))
        print(plan_table)
        for name, dt, size in runs:
            print("would run: %s %s %s %s" % (name, dt, size, C.CASES[name]["sizes"][size]))
        print("dry run: %d modules built, %d loaded, %d failed; %d reference checks, %d failed; torch %s"
              % (len(futs), loaded, nfail, len(plans), bad, "importable" if torch else "not importable"))
        return 1 if nfail or bad else 0
    if torch is None:
        raise SystemExit("run.py: torch is needed for the GPU run")
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        torch._dynamo.config.cache_size_limit = max(64, torch._dynamo.config.cache_size_limit)
    except AttributeError:
        pass
    jax_mod = None
    if "jax" not in args.skip:
        try:
            import jax
            jax.config.update("jax_enable_x64", True)  # i64 labels as they are
            jax_mod = jax
        except Exception as ex:
            log("jax not importable (%s): no jax.jit column" % ex)
    hand_mod = None
    if "hand" not in args.skip:
        try:
            import hand_peers  # imports triton
            if any(n in hand_peers.PROGRAMS for n in names):
                hand_mod = hand_peers
                args.columns = variants + ["hand"]
        except Exception as ex:
            log("hand_peers not importable (%s): no hand-fused column" % ex)
    run = Run(args, torch, jax_mod, hand_mod)
    props = torch.cuda.get_device_properties(0)
    run.copy_reference()
    header = ("# fusec model-layer suite\n\nGPU %s (%d SMs), torch %s, jax %s; copy reference %.0f GB/s "
              "(2 GiB device-to-device); modules built in %.0f s.\n`%s`\n"
              % (props.name, props.multi_processor_count, torch.__version__,
                 jax_mod.__version__ if jax_mod else "-", run.copy_gbs, build_s, " ".join(sys.argv)))
    with open(os.path.join(args.out, "run.txt"), "w", encoding="utf-8") as f:
        f.write(header)
    skipped = []
    print(header)
    print("\n".join(table([], run.copy_gbs, "steady", args.columns).splitlines()[:2]), flush=True)
    for i, (name, dt, size) in enumerate(runs):
        est = statistics.median(run.case_s) if run.case_s else 10.0
        if run.left() < est + 2:
            skipped = runs[i:]
            log("budget: %d cases left unrun (%.0f s left, a case takes about %.0f s)" % (len(skipped), run.left(), est))
            break
        log("%s %s %s" % (name, dt, size))
        try:
            r = run.case(name, dt, size, futs, variants)
        except Exception as ex:  # one broken case must not end the run
            log("  %s %s %s: FAILED: %s" % (name, dt, size, ex))
            run.rows.append(dict(case=name, dtype=dt, size=size, dims="", static_status="failed: %s" % ex))
            torch.cuda.empty_cache()
            continue
        print(table([r], run.copy_gbs, "steady", args.columns).splitlines()[-1], flush=True)
        write_results(args, run, skipped, header)
    write_results(args, run, skipped, header)
    print("\n" + open(os.path.join(args.out, "results.md"), encoding="utf-8").read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
