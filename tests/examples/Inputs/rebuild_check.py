#!/usr/bin/env python3
"""rebuild_check.py MODE FUSEC SRCROOT WORKDIR -- the no-op rebuild promise.

MODE is one of
  snippet   examples/make-snippet/Makefile (the Make rules of
            docs/build-integration.md), building app;
  examples  examples/c/make/Makefile, building build/softmax_main;
  cmake-make, cmake-ninja
            Inputs/rebuild/CMakeLists.txt (fusec_add_library, TARGET cuda,
            PREFIX k_) from a fusec installed to WORKDIR/prefix, with CMake's
            Makefile or Ninja generator.
Each builds softmax.fuse, whose body is in the imported common.fuse
(Inputs/rebuild), with nvcc wrapped by a script that logs every call, then:
  1. edits a comment in common.fuse: fusec runs, nvcc does not, and no
     object or program changes (modification times);
  2. builds again: nothing runs at all;
  3. changes the body in common.fuse: nvcc compiles the generated .cu once
     and the program is relinked; the driver's object is recompiled only if
     the header changed.
Prints one line per fact for FileCheck; exits 1 with the build output when a
check fails."""
import os
import re
import shutil
import subprocess
import sys
import time

mode, fusec, srcroot, work = sys.argv[1:5]
srcroot = os.path.abspath(srcroot)
fusec = os.path.abspath(fusec)
build_dir = os.path.dirname(fusec)
inputs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rebuild")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
log = os.path.join(work, "nvcc.log")
wrapper = os.path.join(work, "nvcc-logged")
with open(wrapper, "w") as f:
    f.write('#!/bin/sh\necho "$*" >> "%s"\nexec %s "$@"\n' % (log, shutil.which("nvcc")))
os.chmod(wrapper, 0o755)


def fail(msg, out=""):
    sys.exit("FAIL: %s: %s\n%s" % (mode, msg, out))


def run(cmd, cwd=None):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        fail("%s (exit %d)" % (" ".join(cmd), p.returncode), p.stdout)
    return p.stdout


def nvcc_calls():
    return open(log).read().splitlines() if os.path.exists(log) else []


fuse = os.path.join(work, "fuse")
os.makedirs(fuse)
for f in ("softmax.fuse", "common.fuse"):
    shutil.copy(os.path.join(inputs, f), fuse)
common = os.path.join(fuse, "common.fuse")
runtime_flags = ["FUSERT_CFLAGS=-I" + os.path.join(srcroot, "runtime"),
                 "FUSERT_LIBS=-L%s -lfusert" % os.path.join(build_dir, "runtime")]

if mode == "snippet":
    proj = os.path.join(work, "snippet")
    shutil.copytree(os.path.join(srcroot, "examples/make-snippet"), proj)
    cmd = ["make", "-C", proj, "FUSEC=" + fusec, "NVCC=" + wrapper, "FUSE_DIR=" + fuse] + runtime_flags
    gen = os.path.join(proj, "build")
    cu, hdr, obj, drv = (os.path.join(gen, n) for n in ("softmax.cu", "softmax.h", "softmax.o", "main.o"))
    prog = os.path.join(proj, "app")
elif mode == "examples":
    # examples/c/make/Makefile as shipped, beside a copy of the softmax driver;
    # its vpath finds softmax.fuse two folders up
    shutil.copytree(os.path.join(srcroot, "examples/c/make"), os.path.join(fuse, "c/make"))
    for f in ("softmax_main.c", "driver_util.h"):
        shutil.copy(os.path.join(srcroot, "examples/c", f), os.path.join(fuse, "c"))
    proj = os.path.join(fuse, "c/make")
    cmd = ["make", "-C", proj, "FUSEC=" + fusec, "NVCC=" + wrapper, "build/softmax_main"] + runtime_flags
    gen = os.path.join(proj, "build")
    cu, hdr, obj, drv = (os.path.join(gen, n) for n in ("softmax.cu", "softmax.h", "softmax.o", "softmax_main.o"))
    prog = os.path.join(gen, "softmax_main")
else:
    generator = {"cmake-make": "Unix Makefiles", "cmake-ninja": "Ninja"}[mode]
    prefix = os.path.join(work, "prefix")
    cache = open(os.path.join(build_dir, "CMakeCache.txt")).read()
    m = re.search(r"^CMAKE_CACHEFILE_DIR:INTERNAL=(.*)$", cache, re.M)
    run(["cmake", "--install", m.group(1) if m else build_dir, "--prefix", prefix])
    for f in ("CMakeLists.txt", "main.c"):
        shutil.copy(os.path.join(inputs, f), fuse)
    proj = os.path.join(work, "build")
    run(["cmake", "-S", fuse, "-B", proj, "-G", generator, "-DCMAKE_PREFIX_PATH=" + prefix,
         "-DCMAKE_CUDA_COMPILER=" + wrapper, "-DCMAKE_BUILD_TYPE=Release"])
    os.remove(log)  # the compiler checks of the configure step
    cmd = ["cmake", "--build", proj]
    gen = os.path.join(proj, "fusec/kernels")
    cu, hdr = os.path.join(gen, "softmax.cu"), os.path.join(gen, "softmax.h")
    obj = os.path.join(proj, "CMakeFiles/kernels.dir/fusec/kernels/softmax.cu.o")
    drv = os.path.join(proj, "CMakeFiles/app.dir/main.c.o")
    prog = os.path.join(proj, "app")


def mtimes():
    return {p: os.stat(p).st_mtime_ns for p in (cu, hdr, obj, drv, prog)}


def fusec_ran(out):
    return bool(re.search(r"fusec\b.* -o \S*softmax\.cu|fusec softmax\.fuse", out))


out = run(cmd)
if not fusec_ran(out) or not any("softmax.cu" in c and " -c " in " %s " % c for c in nvcc_calls()):
    fail("first build: fusec or nvcc did not run", out)
print("%s: first build: fusec, nvcc -c softmax.cu" % mode)
if mode.startswith("cmake"):
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(prefix, "lib"))
    p = subprocess.run([prog], env=env, stdout=subprocess.PIPE, text=True)
    print("%s: app: %s" % (mode, p.stdout.strip()))

# 1. a comment in the imported file: fusec runs, nothing after it
before, calls = mtimes(), len(nvcc_calls())
time.sleep(1.1)
text = open(common).read()
open(common, "w").write(text.replace("the rebuild tests edit this comment", "an edited comment"))
out = run(cmd)
if not fusec_ran(out):
    fail("comment edit: fusec did not run", out)
if len(nvcc_calls()) != calls:
    fail("comment edit: nvcc ran: %s" % nvcc_calls()[calls:], out)
changed = [os.path.basename(p) for p, t in mtimes().items() if t != before[p]]
if changed:
    fail("comment edit: changed %s" % changed, out)
print("%s: comment in common.fuse: fusec ran; nvcc did not run; .cu .h .o and program unchanged" % mode)

# 2. nothing to do
out = run(cmd)
if fusec_ran(out) or len(nvcc_calls()) != calls or mtimes() != before:
    fail("second build was not a no-op", out)
print("%s: next build: nothing ran" % mode)

# 3. a real change: the generated .cu is compiled once, the program relinked
time.sleep(1.1)
text = open(common).read()
open(common, "w").write(text.replace("return e / sum(e, axis=1, keepdims=true)",
                                     "return e * (1 / sum(e, axis=1, keepdims=true))"))
out = run(cmd)
now = mtimes()
compiles = [c for c in nvcc_calls()[calls:] if "softmax.cu" in c]
if not fusec_ran(out) or len(compiles) != 1 or now[cu] == before[cu] or now[obj] == before[obj] \
        or now[prog] == before[prog]:
    fail("body edit: fusec %s, nvcc on softmax.cu %d times" % (fusec_ran(out), len(compiles)), out)
if (now[drv] != before[drv]) != (now[hdr] != before[hdr]):
    fail("body edit: the driver was %srecompiled though the header %schanged" % (
        "" if now[drv] != before[drv] else "not ", "" if now[hdr] != before[hdr] else "un"), out)
print("%s: body of common.fuse: softmax.cu compiled once, program relinked, driver %s" % (
    mode, "recompiled (header changed)" if now[drv] != before[drv] else "not recompiled (header unchanged)"))
