#!/usr/bin/env python3
"""build_c_examples.py FUSEC SRCROOT WORKDIR [options] -- build the C drivers of
examples/c/ (every NAME_main.c, one per examples/NAME.fuse) out of tree, and
print one line per fact for FileCheck.  The flavours:
  make/   Makefile pattern rule + nvcc; a second `make` has nothing to do;
  nvrtc/  --target=nvrtc + gcc + libfusert (no nvcc in the build);
  cmake/  find_package(fusec) from an install prefix + fusec_add_library;
  emu     the --target=cuda module built for the CPU emulator of tests/emu
          (emu-build.sh) and the driver linked with tests/emu/driver/, a
          stand-in for the CUDA runtime: the drivers run without a GPU.
Options:
  --flavours LIST   comma-separated, default make,nvrtc,cmake
  --run             also run every driver and check it prints OK: make and
                    nvrtc at the default sizes and at the odd/edge sizes of
                    GPU_SIZES, cmake at the default sizes, emu at EMU_SIZES.
                    make/nvrtc/cmake need a GPU (tests/gpu/c-drivers.test).
  --werror          compile the drivers (and the nvrtc target's C) with
                    -Wall -Wextra -Werror
  --jobs N          parallel build and run jobs (default: the CPU count)
Without a built runtime (FUSEC_BUILD_RUNTIME=OFF) the drivers are compiled but
not linked, and the cmake flavour is skipped.  A build folder moved from where
it was configured (a build carried to a GPU machine, tools/gpu/run.sh) is
installed by running its install scripts with the paths rewritten."""
import argparse
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys

# Extra command lines for --run (the default sizes always run too): odd sizes,
# one row or column, long rows that take the looped or blocked kernels.
GPU_SIZES = {
    "adam_step": [["1"], ["4097"]],
    "bias_relu": [["1", "1"], ["3", "100003"], ["100003", "3"]],
    "chain12": [["1"], ["7"]],
    "colsum": [["1", "1"], ["100003", "3"], ["3", "100003"]],
    "l2norm": [["1", "1"], ["3", "100003"]],
    "layernorm": [["1", "1"], ["17", "8191"], ["64", "1024"], ["5", "12288"]],
    "logsumexp": [["1", "1"], ["4", "65537"]],
    "rmsnorm": [["1", "1"], ["2", "12289"], ["3", "16384"], ["999", "64"]],
    "small_bias_relu": [["1", "3"], ["64", "1024"]],
    "softmax": [["1", "1"], ["3", "4099"], ["5000", "1"], ["7", "16384"], ["1001", "96"]],
    "sum_abs": [["1"], ["33554433"]],
}
# The emulator runs every GPU thread as a fiber: small sizes, but still the
# different kernels (short and long rows, odd short rows, rows past 16384,
# one element).
EMU_SIZES = {
    "adam_step": [["1"], ["4097"]],
    "bias_relu": [["1", "1"], ["37", "1001"]],
    "chain12": [["1"], ["100003"]],
    "colsum": [["1", "1"], ["1001", "37"], ["5", "4099"]],
    "l2norm": [["1", "1"], ["37", "1025"], ["2", "9001"]],
    "layernorm": [["1", "1"], ["37", "1025"], ["2", "9001"], ["2", "16384"], ["37", "100"], ["37", "333"],
                  ["2", "30000"]],
    "logsumexp": [["1", "1"], ["37", "1025"], ["2", "9001"]],
    "rmsnorm": [["1", "1"], ["37", "1025"], ["2", "9001"], ["2", "12288"], ["5", "128"], ["37", "333"],
                ["2", "24000"]],
    "small_bias_relu": [["1", "3"], ["63", "1021"]],
    "softmax": [["1", "1"], ["37", "1025"], ["2", "9001"], ["2", "12288"], ["37", "96"], ["37", "77"],
                ["2", "20000"]],
    "sum_abs": [["1"], ["1000003"]],
}

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("fusec")
ap.add_argument("srcroot")
ap.add_argument("work")
ap.add_argument("--flavours", default="make,nvrtc,cmake")
ap.add_argument("--run", action="store_true")
ap.add_argument("--werror", action="store_true")
ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
args = ap.parse_args()
fusec = os.path.abspath(args.fusec)
srcroot = os.path.abspath(args.srcroot)
work = os.path.abspath(args.work)
flavours = [f for f in args.flavours.split(",") if f]
for f in flavours:
    if f not in ("make", "nvrtc", "cmake", "emu"):
        sys.exit("FAIL: unknown flavour %r" % f)


def cache_value(text, key):
    m = re.search(r"^%s:[A-Z]+=(.*)$" % re.escape(key), text, re.M)
    return m.group(1) if m else None


# The build folder: fusec's own, or the real one behind a tools/valgrind-lit.sh
# shadow folder (whose CMakeCache.txt names it).  A folder recorded there that
# does not exist means the build was moved here: use fusec's.
build = os.path.dirname(fusec)
cache = os.path.join(build, "CMakeCache.txt")
cache_text = open(cache).read() if os.path.exists(cache) else ""
recorded = cache_value(cache_text, "CMAKE_CACHEFILE_DIR")
if recorded and os.path.isdir(recorded):
    build = recorded
moved = bool(recorded) and not os.path.isdir(recorded)
rtlib = os.path.join(build, "runtime")
runtime = os.path.exists(os.path.join(rtlib, "libfusert.so"))
examples_c = os.path.join(srcroot, "examples", "c")
drivers = sorted(os.path.basename(p)[:-len("_main.c")]
                 for p in glob.glob(os.path.join(examples_c, "*_main.c")))
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)

nvcc = shutil.which("nvcc")
cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or (
    os.path.dirname(os.path.dirname(os.path.realpath(nvcc))) if nvcc else "/usr/local/cuda")
warn = "-Wall -Wextra -Werror" if args.werror else "-Wall"


def run(cmd, cwd=None, env=None):
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode != 0:
        sys.exit("FAIL: %s (exit %d)\n%s" % (" ".join(cmd), p.returncode, p.stdout))
    return p.stdout


def need(tool, why):
    if not shutil.which(tool):
        sys.exit("FAIL: %s is not installed (needed for %s)" % (tool, why))


print("drivers: " + " ".join(drivers))
built = {}  # flavour -> folder holding NAME_main for each driver

# ---- make and nvrtc: the Makefiles of examples/c/make and examples/c/nvrtc --
common = ["FUSEC=" + fusec, "FUSERT_CFLAGS=-I" + os.path.join(srcroot, "runtime"),
          "FUSERT_LIBS=-L%s -lfusert" % rtlib, "-j%d" % args.jobs]
for flavour in ("make", "nvrtc"):
    if flavour not in flavours:
        continue
    need("make", "the %s flavour" % flavour)
    out = os.path.join(work, flavour)
    gen = "cu" if flavour == "make" else "c"
    if flavour == "make":
        flags = ["DRIVER_CFLAGS=-std=c11 -O2 " + warn]
    else:
        flags = ["CFLAGS=-std=c11 -O2 " + warn, "CUDA_HOME=" + cuda_home]
    goal = ["all"] if runtime else (["%s/%s.o" % (out, d) for d in drivers]
                                    + ["%s/%s_main.o" % (out, d) for d in drivers])
    cmd = ["make", "-C", os.path.join(examples_c, flavour), "BUILD=" + out] + common + flags
    run(cmd + goal)
    for d in drivers:
        for f in ("%s.%s" % (d, gen), d + ".h", d + ".d", d + ".o", d + "_main.o"):
            if not os.path.exists(os.path.join(out, f)):
                sys.exit("FAIL: %s: %s was not made" % (flavour, f))
        if runtime and not os.access(os.path.join(out, d + "_main"), os.X_OK):
            sys.exit("FAIL: %s: %s_main was not linked" % (flavour, d))
    again = run(cmd + goal)
    if re.search(r"-MD -MP| -c ", again):
        sys.exit("FAIL: %s: the second make was not a no-op:\n%s" % (flavour, again))
    print("%s: built %s; second make: nothing to do"
          % (flavour, " ".join(d + "_main" for d in drivers)))
    if flavour == "nvrtc":
        # the nvrtc flavour never runs nvcc
        log = run(["make", "-n", "-B"] + cmd[1:] + goal)
        if "nvcc" in log:
            sys.exit("FAIL: nvrtc flavour calls nvcc:\n" + log)
        print("nvrtc: no nvcc in the build commands")
    if runtime:
        built[flavour] = out


# ---- cmake: install to a prefix, then find_package(fusec) --------------------
def install(prefix):
    """cmake --install the build into prefix.  A moved build's install scripts
    name the folders it was configured in: run copies with those rewritten."""
    if not os.path.exists(os.path.join(rtlib, "libfusert.a")):
        sys.exit("FAIL: cmake: %s has no libfusert.a, which the install needs: build every "
                 "target (or add --target fusert_static) before carrying the build" % rtlib)
    if not moved:
        run(["cmake", "--install", build, "--prefix", prefix])
        return
    old_build = recorded
    old_src = cache_value(cache_text, "CMAKE_HOME_DIRECTORY") or old_build
    shadow = os.path.join(work, "install-scripts")
    for dirpath, dirs, files in os.walk(build):
        # not into this run's own folder (lit puts it inside the build), which
        # gains the copies as the walk goes
        dirs[:] = [d for d in dirs if os.path.realpath(os.path.join(dirpath, d)) != os.path.realpath(work)]
        if "cmake_install.cmake" not in files:
            continue
        text = open(os.path.join(dirpath, "cmake_install.cmake")).read()
        # includes of the subfolders' scripts go to the rewritten copies
        text = re.sub(r'include\("%s/((?:[^"]*/)?)cmake_install\.cmake"\)' % re.escape(old_build),
                      lambda m: 'include("%s/%scmake_install.cmake")' % (shadow, m.group(1)), text)
        text = text.replace(old_build, "\0BUILD\0").replace(old_src, srcroot)
        text = text.replace("\0BUILD\0", build)
        dest = os.path.join(shadow, os.path.relpath(dirpath, build))
        os.makedirs(dest, exist_ok=True)
        with open(os.path.join(dest, "cmake_install.cmake"), "w") as f:
            f.write(text)
    run(["cmake", "-DCMAKE_INSTALL_PREFIX=" + prefix, "-P",
         os.path.join(shadow, "cmake_install.cmake")])


if "cmake" in flavours:
    if runtime:
        need("cmake", "the cmake flavour")
        prefix = os.path.join(work, "prefix")
        install(prefix)
        bld = os.path.join(work, "cmake")
        gen = [] if shutil.which("make") or not shutil.which("ninja") else ["-G", "Ninja"]
        run(["cmake", "-S", os.path.join(examples_c, "cmake"), "-B", bld,
             "-DCMAKE_PREFIX_PATH=" + prefix] + gen)
        run(["cmake", "--build", bld, "--parallel", str(args.jobs)])
        for d in drivers:
            if not os.access(os.path.join(bld, d + "_main"), os.X_OK):
                sys.exit("FAIL: cmake: %s_main was not built" % d)
        print("cmake: built %s with find_package(fusec) and fusec_add_library%s"
              % (" ".join(d + "_main" for d in drivers), " (build moved: install scripts rewritten)"
                 if moved else ""))
        built["cmake"] = bld
    else:
        print("cmake: skipped (runtime not built)")

# ---- emu: the generated .cu on the CPU emulator, the driver on a stand-in ----
if "emu" in flavours:
    out = os.path.join(work, "emu")
    os.makedirs(out)
    emu = os.path.join(srcroot, "tests", "emu")
    stand_in = os.path.join(emu, "driver")

    def build_emu(d):
        cu = os.path.join(out, d + ".cu")
        run([fusec, os.path.join(srcroot, "examples", d + ".fuse"), "-o", cu])
        run(["sh", os.path.join(emu, "emu-build.sh"), cu, os.path.join(out, d + ".so")])
        run(["cc", "-std=c11", "-O1"] + warn.split() + ["-I", out, "-I", stand_in, "-I",
             os.path.join(srcroot, "runtime"), os.path.join(examples_c, d + "_main.c"),
             os.path.join(stand_in, "cudart_emu.c"), os.path.join(srcroot, "runtime", "fusert_status.c"),
             os.path.join(out, d + ".so"), "-lm",
             "-o", os.path.join(out, d + "_main")])

    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        list(pool.map(build_emu, drivers))
    print("emu: built %s" % " ".join(d + "_main" for d in drivers))
    built["emu"] = out

if "make" in flavours or "nvrtc" in flavours or "cmake" in flavours:
    print("linked: %s" % ("yes" if runtime else "no (runtime not built)"))
if not args.run:
    sys.exit(0)

# ---- --run: every driver, and each must end with "NAME: OK" ------------------
env = dict(os.environ)
env["FUSERT_CACHE_DIR"] = os.path.join(work, "kernel-cache")
libs = [rtlib] + [os.path.join(cuda_home, d) for d in ("lib64", "lib")]
env["LD_LIBRARY_PATH"] = os.pathsep.join(libs + [env.get("LD_LIBRARY_PATH", "")]).rstrip(os.pathsep)
jobs = []
for flavour in flavours:
    if flavour not in built:
        continue
    for d in drivers:
        if flavour == "emu":
            sets = EMU_SIZES.get(d, [[]])
        elif flavour == "cmake":
            sets = [[]]
        else:
            sets = [[]] + GPU_SIZES.get(d, [])
        for sizes in sets:
            jobs.append((flavour, d, sizes))


# tools/gpu/run.sh with FUSEC_GPU_SANITIZER=memcheck|racecheck|...: the GPU
# drivers run under compute-sanitizer, and any error it finds is exit 86.
sanitizer = os.environ.get("FUSEC_GPU_SANITIZER", "")
limit = 900 if sanitizer else 300


def run_driver(job):
    flavour, d, sizes = job
    exe = os.path.join(built[flavour], d + "_main")
    cmd = [exe] + sizes
    if sanitizer and flavour != "emu":
        cmd = [os.path.join(srcroot, "tools", "gpu", "sanitize", "run-sanitized")] + cmd
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=limit)
        out, rc = p.stdout, p.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout or ""
        out = out.decode(errors="replace") if isinstance(out, bytes) else out
        rc = "timeout (%d s)" % limit
    # compute-sanitizer's own lines start with "========="
    lines = [l for l in out.splitlines() if l.strip() and not l.startswith("=========")]
    ok = rc == 0 and bool(lines) and lines[-1] == d + ": OK"
    return job, ok, rc, out


failed = 0
results = {}
with concurrent.futures.ThreadPoolExecutor(max(1, min(args.jobs, 8))) as pool:
    for (flavour, d, sizes), ok, rc, out in pool.map(run_driver, jobs):
        results.setdefault((flavour, d), []).append(ok)
        if not ok:
            failed += 1
            print("FAIL %s/%s_main %s: exit %s\n%s" % (flavour, d, " ".join(sizes) or "(default sizes)",
                                                     rc, "\n".join(out.splitlines()[-30:])))
for flavour in flavours:
    for d in drivers:
        if (flavour, d) in results:
            r = results[(flavour, d)]
            print("run %s/%s_main: %s (%d size sets)"
                  % (flavour, d, "OK" if all(r) else "FAILED", len(r)))
print("runs: %d of %d OK" % (len(jobs) - failed, len(jobs)))
if sanitizer:
    print("the GPU runs were under compute-sanitizer --tool %s" % sanitizer)
sys.exit(1 if failed else 0)
