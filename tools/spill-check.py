#!/usr/bin/env python3
"""Every __global__ variant fusec writes compiles without register spills.

    tools/spill-check.py [--fusec PATH] [--cache DIR] [-j N] [--list] [PROGRAM.fuse ...]

Translates programs to .cu (target cuda), compiles each with
`nvcc -arch=sm_90 -cubin -Xptxas -v -I runtime` and reads ptxas's report
of every entry function: a function with spill stores or spill loads is a
failure, named with the program and flags it came from.

Without PROGRAM arguments it checks the whole set: examples/*.fuse,
tools/bench/*.fuse (the row and column sweeps), tools/bench/models/programs/*.fuse
(f32 and bf16 text, symbolic dims and every dim static at each size of
cases.py) and every .fuse under tests/
that fusec translates without error; each as is, with --atomic-reduce and
with --no-fusion (the static model builds as is and with --atomic-reduce).
With PROGRAM arguments it checks those, as is (EXTRA flags after `--` go
to every fusec call).

--known FILE names functions whose spills are known (one name a line, #
comments): their spills are listed as KNOWN and pass; a name there that
no build compiles with a spill is a failure (STALE), so the list only
shrinks.

--cache DIR keeps ptxas's report per translated module, named by a hash of
the .cu and .h text, nvcc's version and arguments and runtime/*.cuh and
*.h: a module already seen is not compiled again.  --list prints every
function with its registers.  Exit status 1 when anything spills or fails.
"""
import argparse
import concurrent.futures as cf
import glob
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODELS = os.path.join(ROOT, "tools", "bench", "models")
NVCC_FLAGS = ["-arch=sm_90", "-cubin", "-Xptxas", "-v"]
CACHE_FORMAT = b"spill-check 2"  # bump when parse_ptxas or the entry format changes
FLAG_SETS = ([], ["--atomic-reduce"], ["--no-fusion"])


def model_jobs():
    """(label, cwd, fuse text or None, path, flags) for the model suite."""
    sys.path.insert(0, MODELS)
    import run as R  # noqa: E402  (standard library only at import)
    jobs = []
    for name, case in sorted(R.C.CASES.items()):
        for dt in R.DTYPES:
            text = R.source(name, dt)
            label = "models/%s(%s)" % (name, dt)
            for fl in FLAG_SETS:
                jobs.append((label, MODELS, text, name, fl))
            for size, dims in sorted(case["sizes"].items()):
                for fl in FLAG_SETS[:2]:
                    jobs.append((label + "@" + size, MODELS, text, name, R.defines_for(dims) + fl))
    return jobs


def default_jobs():
    jobs = []
    progs = glob.glob(os.path.join(ROOT, "examples", "*.fuse")) + glob.glob(os.path.join(ROOT, "tools", "bench", "*.fuse"))
    for f in sorted(progs):
        for fl in FLAG_SETS:
            jobs.append((os.path.relpath(f, ROOT), None, None, f, fl))
    jobs += model_jobs()
    tests = sorted(glob.glob(os.path.join(ROOT, "tests", "**", "*.fuse"), recursive=True))
    for f in tests:
        for fl in FLAG_SETS:
            # optional: a test input that fusec rejects (diagnostics) is skipped
            jobs.append(("?" + os.path.relpath(f, ROOT), None, None, f, fl))
    return jobs


def translate(fusec, job, tmp, i):
    """Runs fusec for one job; returns (cu path or None, error text)."""
    label, _cwd, text, path, flags = job
    d = os.path.join(tmp, "m%d" % i)
    os.makedirs(d)
    stem = os.path.splitext(os.path.basename(path))[0]
    if text is not None:
        src = os.path.join(d, stem + ".fuse")
        with open(src, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        src = path
    cu = os.path.join(d, stem + ".cu")
    r = subprocess.run([fusec, *flags, src, "-o", cu], capture_output=True, text=True,
                       cwd=os.path.dirname(os.path.abspath(src)))
    if r.returncode != 0:
        return None, r.stderr.strip()
    return cu, ""


TOOL_HASH = []


def cache_key(cu, nvcc_args):
    if not TOOL_HASH:
        h = hashlib.sha256(CACHE_FORMAT)
        h.update(subprocess.run(["nvcc", "--version"], capture_output=True).stdout)
        rt = glob.glob(os.path.join(ROOT, "runtime", "*.cuh")) + glob.glob(os.path.join(ROOT, "runtime", "*.h"))
        for f in sorted(rt):
            with open(f, "rb") as fh:
                h.update(os.path.basename(f).encode() + b"\0" + fh.read())
        TOOL_HASH.append(h.hexdigest())
    h = hashlib.sha256(TOOL_HASH[0].encode())
    h.update("\0".join(NVCC_FLAGS + nvcc_args).encode() + b"\0")
    for f in (cu, cu[:-3] + ".h"):
        h.update(os.path.basename(f).encode() + b"\0")
        with open(f, "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()


ENTRY = re.compile(r"Compiling entry function '([^']+)'")
PROPS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
PROPS_OF = re.compile(r"Function properties for (\S+)")
REGS = re.compile(r"Used (\d+) registers")


def parse_ptxas(text):
    """{function: {regs, stack, stores, loads}} from ptxas -v output.  An
    entry's spills are its own and those of the functions it calls that
    ptxas reports apart (CUDA's slow path of trig argument reduction)."""
    funcs, entry, props_of = {}, None, None
    for line in text.splitlines():
        m = ENTRY.search(line)
        if m:
            entry = m.group(1)
            funcs.setdefault(entry, {"regs": 0, "stack": 0, "stores": 0, "loads": 0})
            continue
        m = PROPS_OF.search(line)
        if m:
            props_of = m.group(1)
            continue
        m = PROPS.search(line)
        if m and entry is not None:
            f = funcs[entry]
            stack, stores, loads = (int(g) for g in m.groups())
            if props_of == entry:
                f["stack"], f["stores"], f["loads"] = stack, stores, loads
            else:
                f["stores"] += stores
                f["loads"] += loads
            continue
        m = REGS.search(line)
        if m and entry is not None:
            funcs[entry]["regs"] = int(m.group(1))
    return funcs


def compile_cu(cu, cache, nvcc_args):
    """(functions, error) for one .cu, from the cache when it has it."""
    key = cache_key(cu, nvcc_args)
    entry = os.path.join(cache, key + ".json") if cache else None
    if entry and os.path.exists(entry):
        with open(entry, encoding="utf-8") as fh:
            return json.load(fh), ""
    r = subprocess.run(["nvcc", *NVCC_FLAGS, *nvcc_args, "-I", os.path.join(ROOT, "runtime"), cu,
                        "-o", cu[:-3] + ".cubin"], capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stdout + r.stderr).strip()[-2000:]
    funcs = parse_ptxas(r.stdout + r.stderr)
    if entry:
        os.makedirs(cache, exist_ok=True)
        tmp = entry + ".%d.tmp" % os.getpid()
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(funcs, fh, sort_keys=True)
        os.replace(tmp, entry)
    return funcs, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--fusec", default=os.path.join(ROOT, "build", "fusec"))
    ap.add_argument("--cache", default=None)
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--known", default=None)
    ap.add_argument("--nvcc-arg", action="append", default=[],
                    help="one more nvcc argument (-maxrregcount=16 makes kernels spill: the check's own test)")
    ap.add_argument("programs", nargs="*")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    args, extra = ap.parse_known_args(argv[:cut])
    extra += argv[cut + 1:]
    if args.programs:
        jobs = [(p, None, None, os.path.abspath(p), extra) for p in args.programs]
    else:
        jobs = [(l, c, t, p, fl + extra) for (l, c, t, p, fl) in default_jobs()]
    bad = []
    with tempfile.TemporaryDirectory(prefix="spill-check-") as tmp:
        with cf.ThreadPoolExecutor(max(1, args.j)) as ex:
            cus = list(ex.map(lambda ij: translate(args.fusec, ij[1], tmp, ij[0]), enumerate(jobs)))
        # one nvcc run per distinct module
        by_key, users = {}, {}
        for job, (cu, err) in zip(jobs, cus):
            name = "%s %s" % (job[0].lstrip("?"), " ".join(job[4])) if job[4] else job[0].lstrip("?")
            if cu is None:
                if not job[0].startswith("?"):
                    bad.append("%s: fusec failed: %s" % (name, err))
                continue
            k = cache_key(cu, args.nvcc_arg)
            by_key.setdefault(k, cu)
            users.setdefault(k, []).append(name)
        with cf.ThreadPoolExecutor(max(1, args.j)) as ex:
            results = dict(zip(by_key, ex.map(lambda k: compile_cu(by_key[k], args.cache, args.nvcc_arg), by_key)))
    known = set()
    if args.known:
        with open(args.known, encoding="utf-8") as fh:
            known = {l.split("#")[0].strip() for l in fh} - {""}
    seen_known = set()
    nfunc = 0
    for k, (funcs, err) in results.items():
        where = users[k][0] + ("" if len(users[k]) == 1 else " (and %d more builds)" % (len(users[k]) - 1))
        if funcs is None:
            bad.append("%s: nvcc failed: %s" % (where, err))
            continue
        for fn, p in sorted(funcs.items()):
            nfunc += 1
            if args.list:
                print("%s: %s: %d registers, %d bytes stack frame" % (where, fn, p["regs"], p["stack"]))
            if (p["stores"] or p["loads"]) and fn in known:
                seen_known.add(fn)
                print("KNOWN %s: %s: %d bytes spill stores, %d bytes spill loads"
                      % (where, fn, p["stores"], p["loads"]))
            elif p["stores"] or p["loads"]:
                bad.append("%s: %s: %d bytes spill stores, %d bytes spill loads (%d registers, %d bytes stack frame)"
                           % (where, fn, p["stores"], p["loads"], p["regs"], p["stack"]))
    for fn in sorted(known - seen_known):
        bad.append("%s: listed in %s but spills in no build" % (fn, os.path.basename(args.known)))
    for b in sorted(bad):
        print("SPILL " + b if "spill stores" in b else "STALE " + b if "spills in no build" in b else "ERROR " + b)
    print("%d builds, %d distinct modules, %d functions, %d problems"
          % (len(jobs), len(results), nfunc, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
