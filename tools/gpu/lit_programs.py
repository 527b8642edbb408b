#!/usr/bin/env python3
"""lit_programs.py -- fuse-run over every example and every lit program, both
targets, at the edge shapes (issue: fusion, codegen and runtime, "done when").

    tools/gpu/lit_programs.py BUILD_DIR [--jobs J] [--log FILE] [--targets cuda,nvrtc]

Every .fuse under examples/ and tests/ (the diagnostics corpus aside) that
fusec translates without flags runs with `fuse-run --all-fns --edge-shapes`:
each fn at its default sizes, every dim odd, a long first dim, a long last
dim (past the on-chip row budget), one row, one column, an empty dim and all
ones, checked against the interpreter.  Files fusec rejects (tests of errors,
files that need -D or -I) are listed as skipped.  Prints one line per file and
target and a summary; exit status 1 if any fn failed.
"""
import argparse
import concurrent.futures as cf
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sources():
    out = []
    for top in ("examples", "tests"):
        for d, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs.sort()
            if os.sep + "diagnostics" in d:
                continue
            out += [os.path.join(d, f) for f in sorted(files) if f.endswith(".fuse")]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--log")
    ap.add_argument("--targets", default="cuda,nvrtc")
    args = ap.parse_args()
    fusec = os.path.join(os.path.abspath(args.build), "fusec")
    runnable, skipped = [], []
    for f in sources():
        r = subprocess.run([fusec, "--emit=plan", f], capture_output=True, text=True)
        if r.returncode == 0 and '"name"' in r.stdout:
            runnable.append(f)
        else:
            skipped.append(os.path.relpath(f, ROOT))
    env = dict(os.environ, FUSERT_CACHE_DIR=os.environ.get("FUSERT_CACHE_DIR", "/tmp/fusec-lit-cache"))
    fuse_run = os.path.join(ROOT, "tools", "fuse-run")

    def one(f, target):
        t0 = time.time()
        r = subprocess.run([sys.executable, fuse_run, "--fusec", fusec, "--all-fns", "--edge-shapes",
                            "--reps", "0", "--target", target, f],
                           capture_output=True, text=True, env=env)
        return f, target, r.returncode, r.stdout + r.stderr, time.time() - t0

    t0 = time.time()
    log = open(args.log, "w") if args.log else None
    nfn = nfail = nsets = 0
    bad = []
    jobs = [(f, t) for f in runnable for t in args.targets.split(",")]
    with cf.ThreadPoolExecutor(args.jobs) as ex:
        for f, target, rc, out, dt in ex.map(lambda a: one(*a), jobs):
            rel = os.path.relpath(f, ROOT)
            if log:
                log.write("==== %s (%s) rc=%d %.1fs\n%s\n" % (rel, target, rc, dt, out))
                log.flush()
            m = re.search(r"(PASS|FAIL) \S+: (\d+) fns, (\d+) failed", out)
            fns, failed = (int(m.group(2)), int(m.group(3))) if m else (0, 1)
            sets = sum(int(x) for x in re.findall(r"target, (\d+) size sets", out))
            nfn += fns
            nfail += failed
            nsets += sets
            status = "ok  " if rc == 0 else "FAIL"
            print("%s %-55s %-5s %2d fns %3d size sets  %.1fs" % (status, rel, target, fns, sets, dt),
                  flush=True)
            if rc != 0:
                bad.append("%s (%s)" % (rel, target))
                for line in out.splitlines():
                    if line.startswith("FAIL") or "error" in line.lower():
                        print("      " + line[:300])
    print("skipped (fusec rejects them without flags): %d files: %s" % (len(skipped), " ".join(skipped)))
    print("lit programs: %d files x %d targets, %d fn runs, %d size sets, %d failed fn runs, %.0f s"
          % (len(runnable), len(args.targets.split(",")), nfn, nsets, nfail, time.time() - t0))
    if bad:
        print("failed: " + ", ".join(bad))
    return 1 if nfail or bad else 0


if __name__ == "__main__":
    sys.exit(main())
