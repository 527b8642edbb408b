#!/usr/bin/env python3
"""nvcc_compile_times.py -- what nvcc takes to compile the .cu of each
example (target cuda, symbolic dims as written), on this machine, without
a GPU.

    tools/bench/nvcc_compile_times.py [--fusec build/fusec] [--examples a,b]
        [--runs 3] [--arch sm_90] [--nvcc-arg ARG ...]

For each examples/*.fuse: fusec writes the .cu and .h; `nvcc -O3
-arch=ARCH -c X.cu --time CSV` compiles it --runs times.  Figures, from
the run with the least wall time: the nvcc process's wall time and nvcc's
own split by phase, in ms: the front end (the two preprocessings and
cudafe++), cicc (device code to PTX), ptxas (PTX to SASS) and the host
compiler on the host code and the launch stubs.  "kernels" counts the
__global__ functions of the module, "most a kernel" the variants of its
planned kernel with the most.  Prints one markdown table row per example,
after a row for a .cu of one empty kernel: what any compile costs."""
import argparse
import csv
import glob
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def variants(cu_text):
    """(__global__ count, most variants of one planned kernel)"""
    m = re.search(r"fusec_kernel_names\[\] = \{(.*?)\};", cu_text, re.S)
    names = re.findall(r'"([^"]+)"', m.group(1)) if m else []
    per = {}
    for n in names:
        k = re.match(r"(.*_k\d+)_", n + "_").group(1)
        per[k] = per.get(k, 0) + 1
    return len(names), max(per.values()) if per else 0


def phases(path):
    """nvcc --time's CSV: ms by phase group"""
    out = {"front": 0.0, "cicc": 0.0, "ptxas": 0.0, "host": 0.0}
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if len(row) < 8 or row[-1].strip() != "ms":
                continue
            name, ms = row[1].strip(), float(row[-2])
            if name.startswith("gcc (preprocessing") or name.startswith("cudafe"):
                out["front"] += ms
            elif name == "cicc":
                out["cicc"] += ms
            elif name == "ptxas":
                out["ptxas"] += ms
            elif name == "gcc (compiling)":
                out["host"] += ms
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fusec", default=os.path.join(ROOT, "build", "fusec"))
    ap.add_argument("--examples", help="comma-separated example names (default: all)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--nvcc-arg", action="append", default=[])
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(ROOT, "examples", "*.fuse")))
    if a.examples:
        want = a.examples.split(",")
        files = [f for f in files if os.path.basename(f)[:-5] in want]
        if len(files) != len(want):
            sys.exit("no such example among: %s" % a.examples)
    print("| example | kernels | most a kernel | wall ms | front end | cicc | ptxas | host |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        empty = os.path.join(tmp, "empty.cu")
        with open(empty, "w") as f:
            f.write("__global__ void k(float *x) { x[0] = 1.0f; }\n")
        for f in [None] + files:
            if f is None:
                stem, cu, nk, most = "(one empty kernel)", empty, 1, 1
            else:
                stem = os.path.basename(f)[:-5]
                cu = os.path.join(tmp, stem + ".cu")
                r = subprocess.run([a.fusec, f, "-o", cu], capture_output=True, text=True)
                if r.returncode != 0:
                    sys.exit("fusec failed on %s:\n%s" % (f, r.stderr))
                nk, most = variants(open(cu).read())
            best = None
            for i in range(a.runs):
                tcsv = os.path.join(tmp, "t%d.csv" % i)
                if os.path.exists(tcsv):
                    os.remove(tcsv)  # nvcc --time appends
                cmd = ["nvcc", "-O3", "-arch=" + a.arch, "-I", os.path.join(ROOT, "runtime"),
                       "-c", cu, "-o", os.path.join(tmp, "out.o"), "--time", tcsv] + a.nvcc_arg
                t0 = time.perf_counter()
                r = subprocess.run(cmd, capture_output=True, text=True)
                ms = (time.perf_counter() - t0) * 1e3
                if r.returncode != 0:
                    sys.exit("nvcc failed: %s\n%s" % (" ".join(cmd), r.stderr[-2000:]))
                if best is None or ms < best[0]:
                    best = (ms, phases(tcsv))
            ms, ph = best
            print("| %s | %d | %d | %.0f | %.0f | %.0f | %.0f | %.0f |" % (
                stem, nk, most, ms, ph["front"], ph["cicc"], ph["ptxas"], ph["host"]), flush=True)


if __name__ == "__main__":
    main()
