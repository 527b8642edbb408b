#!/usr/bin/env python3
"""build_c_examples.py FUSEC SRCROOT WORKDIR -- build the C drivers of
examples/c/ the three documented ways, out of tree, and print one line per
fact for FileCheck:
  make/   Makefile pattern rule + nvcc; a second `make` has nothing to do;
  nvrtc/  --target=nvrtc + gcc + libfusert (no nvcc in the build);
  cmake/  find_package(fusec) from an install prefix + fusec_add_library.
The programs need a GPU to run, so they are only built here (tests/gpu runs
them).  Without a built runtime (FUSEC_BUILD_RUNTIME=OFF) the drivers are
compiled but not linked, and the cmake flavour is skipped."""
import os
import re
import shutil
import subprocess
import sys

fusec, srcroot, work = sys.argv[1:4]
build = os.path.dirname(os.path.abspath(fusec))
cache = os.path.join(build, "CMakeCache.txt")
if os.path.exists(cache):  # a tools/valgrind-lit.sh shadow folder: use the real build
    m = re.search(r"^CMAKE_CACHEFILE_DIR:INTERNAL=(.*)$", open(cache).read(), re.M)
    if m:
        build = m.group(1)
rtlib = os.path.join(build, "runtime")
runtime = os.path.exists(os.path.join(rtlib, "libfusert.so"))
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def run(cmd, cwd=None):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit("FAIL: %s (exit %d)\n%s" % (" ".join(cmd), p.returncode, p.stdout))
    return p.stdout


common = ["FUSEC=" + os.path.abspath(fusec), "FUSERT_CFLAGS=-I" + os.path.join(srcroot, "runtime"),
          "FUSERT_LIBS=-L%s -lfusert" % rtlib]
for flavour, gen in (("make", "softmax.cu"), ("nvrtc", "softmax.c")):
    out = os.path.join(work, flavour)
    goal = ["all"] if runtime else [out + "/softmax.o", out + "/softmax_main.o"]
    run(["make", "-C", os.path.join(srcroot, "examples/c", flavour), "BUILD=" + out] + common + goal)
    for f in (gen, "softmax.h", "softmax.d", "softmax.o", "softmax_main.o"):
        if not os.path.exists(os.path.join(out, f)):
            sys.exit("FAIL: %s: %s was not made" % (flavour, f))
    if runtime and not os.access(os.path.join(out, "softmax_main"), os.X_OK):
        sys.exit("FAIL: %s: softmax_main was not linked" % flavour)
    again = run(["make", "-C", os.path.join(srcroot, "examples/c", flavour), "BUILD=" + out]
                + common + goal)
    if re.search(r"-MD -MP| -c ", again):
        sys.exit("FAIL: %s: the second make was not a no-op:\n%s" % (flavour, again))
    print("%s: built %s, softmax.h, softmax_main; second make: nothing to do" % (flavour, gen))
    if flavour == "nvrtc":
        # the nvrtc flavour never runs nvcc
        log = run(["make", "-n", "-B", "-C", os.path.join(srcroot, "examples/c", flavour),
                   "BUILD=" + out] + common + goal)
        if "nvcc" in log:
            sys.exit("FAIL: nvrtc flavour calls nvcc:\n" + log)
        print("nvrtc: no nvcc in the build commands")

if runtime:
    prefix = os.path.join(work, "prefix")
    run(["cmake", "--install", build, "--prefix", prefix])
    bld = os.path.join(work, "cmake")
    run(["cmake", "-S", os.path.join(srcroot, "examples/c/cmake"), "-B", bld,
         "-DCMAKE_PREFIX_PATH=" + prefix])
    run(["cmake", "--build", bld])
    if not os.access(os.path.join(bld, "softmax_main"), os.X_OK):
        sys.exit("FAIL: cmake: softmax_main was not built")
    print("cmake: built softmax_main with find_package(fusec) and fusec_add_library")
else:
    print("cmake: skipped (runtime not built)")
print("linked: %s" % ("yes" if runtime else "no (runtime not built)"))
