#!/usr/bin/env python3
"""nvrtc_compile_times.py -- what a cold NVRTC compile of each example costs,
as a whole module and per kernel (what fusert's per-kernel mode compiles on a
kernel's first launch), on this machine, without a GPU.

    tools/bench/nvrtc_compile_times.py BUILD_DIR [--examples a,b] [--runs 3]
        [--phases] [--option OPT ...]

For each examples/*.fuse: fusec --target=nvrtc gives the embedded source and
the kernel names; nvrtc-check (BUILD_DIR/nvrtc-check, sm_90 CUBIN, with
fusert's own options -default-device --std=c++17) compiles
  - the whole module (no FUSERT_KERNEL), and
  - each kernel alone (-DFUSERT_KERNEL=<i>).
Figures: "wall" is the nvrtc-check process, best of --runs (includes process
start and NVRTC's one-time start-up); "nvrtc" is the best in-process
nvrtcCompileProgram time of --runs compiles in one process after a first
one that is dropped (it carries NVRTC's start-up): what a program pays for
each compile after its first.  --phases adds NVRTC's own
split (--time): front end, NVVM optimizer, PTX to SASS (ptxas), in ms.
Prints one markdown table row per module and per kernel."""
import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def kernel_names(c_text):
    m = re.search(r"fusec_kernel_names\[\] = \{(.*?)\};", c_text, re.S)
    return re.findall(r'"([^"]+)"', m.group(1)) if m else []


def run_check(check, cu, opts, runs, phases_file=None):
    """(best wall ms, best in-process ms, phases dict or None)"""
    best_wall = None
    args = [check, "-default-device"] + opts + [cu]
    for _ in range(runs):
        t0 = time.perf_counter()
        r = subprocess.run(args, capture_output=True, text=True)
        ms = (time.perf_counter() - t0) * 1e3
        if r.returncode != 0:
            sys.exit("nvrtc-check failed: %s\n%s" % (" ".join(args), r.stderr[-2000:]))
        best_wall = ms if best_wall is None else min(best_wall, ms)
    r = subprocess.run([check, "-default-device", "--repeat=%d" % (runs + 1)] + opts + [cu],
                       capture_output=True, text=True)
    m = re.search(r"compile ms: first ([0-9.]+) best ([0-9.]+)", r.stdout)
    best_in = float(m.group(2)) if m else float("nan")
    phases = None
    if phases_file:
        if os.path.exists(phases_file):
            os.unlink(phases_file)
        subprocess.run([check, "-default-device", "--time=" + phases_file] + opts + [cu],
                       capture_output=True, text=True)
        phases = {}
        with open(phases_file) as f:
            for row in csv.reader(f):
                if len(row) >= 3 and row[2].strip().replace(".", "").isdigit():
                    phases[row[1].strip()] = float(row[2])
    return best_wall, best_in, phases


def fmt_phases(p):
    if not p:
        return ""
    get = lambda k: p.get(k, float("nan"))
    return " | %.0f | %.0f | %.0f" % (get("CUDA C++ Frontend"), get("NVVM Optimizer"),
                                        get("PTX Translation"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--examples", default="")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--phases", action="store_true")
    ap.add_argument("--option", action="append", default=[], help="extra NVRTC option")
    a = ap.parse_args()
    fusec = os.path.join(a.build, "fusec")
    check = os.path.join(a.build, "nvrtc-check")
    names = sorted(f[:-5] for f in os.listdir(os.path.join(ROOT, "examples")) if f.endswith(".fuse"))
    if a.examples:
        names = [n for n in names if n in a.examples.split(",")]
    tmp = tempfile.mkdtemp(prefix="nvrtc-times-")
    head = "| example | kernel | wall ms (best of %d) | NVRTC ms in-process" % a.runs
    if a.phases:
        head += " | front end | NVVM opt | ptxas"
    print(head + " |")
    print("|" + " --- |" * (head.count("|")))
    for ex in names:
        src = os.path.join(ROOT, "examples", ex + ".fuse")
        c = os.path.join(tmp, ex + ".c")
        cu = os.path.join(tmp, ex + ".cu")
        subprocess.run([fusec, "--target=nvrtc", src, "-o", c], check=True)
        subprocess.run([fusec, "--target=nvrtc", "--emit=kernels", src, "-o", cu], check=True)
        kernels = kernel_names(open(c).read())
        tfile = os.path.join(tmp, "time.csv") if a.phases else None
        w, i, p = run_check(check, cu, a.option, a.runs, tfile)
        print("| %s | whole module (%d kernels) | %.0f | %.0f%s |" % (ex, len(kernels), w, i, fmt_phases(p)))
        for k, name in enumerate(kernels):
            w, i, p = run_check(check, cu, a.option + ["-DFUSERT_KERNEL=%d" % k], a.runs, tfile)
            print("| %s | %d %s | %.0f | %.0f%s |" % (ex, k, name, w, i, fmt_phases(p)))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
