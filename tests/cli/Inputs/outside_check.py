#!/usr/bin/env python3
"""outside_check.py FUSEC SRCROOT WORKDIR -- install fusec to a temporary prefix
and use it from an outside CMake project (Inputs/outside) with
find_package(fusec) and fusec_add_library, for each generator available
(Unix Makefiles, and Ninja when installed).  Checks, and prints one line per fact
for FileCheck:
  - the first build runs fusec on every .fuse;
  - after touching common.fuse (imported by norm.fuse only) exactly norm is
    regenerated and plain.c is not rewritten;
  - a second build after that does nothing;
  - editing plain.fuse regenerates plain only, and recompiles plain.c (and
    main.c, which includes plain.h) but not norm.c.
Exits non-zero, with the build output, when a check fails."""
import os
import re
import shutil
import subprocess
import sys
import time

fusec, srcroot, work = sys.argv[1:4]
build = os.path.dirname(os.path.abspath(fusec))
# Run from a shadow folder (tools/valgrind-lit.sh)?  Install from the real build.
cache = os.path.join(build, "CMakeCache.txt")
if os.path.exists(cache):
    m = re.search(r"^CMAKE_CACHEFILE_DIR:INTERNAL=(.*)$", open(cache).read(), re.M)
    if m:
        build = m.group(1)
prefix = os.path.join(work, "prefix")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def run(cmd, cwd=None):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit("FAIL: %s (exit %d)\n%s" % (" ".join(cmd), p.returncode, p.stdout))
    return p.stdout


def fail(msg, out=""):
    sys.exit("FAIL: %s\n%s" % (msg, out))


run(["cmake", "--install", build, "--prefix", prefix])
for f in ["bin/fusec", "lib/cmake/fusec/fusecConfig.cmake",
          "lib/cmake/fusec/fusecConfigVersion.cmake", "lib/cmake/fusec/fusecTargets.cmake",
          "lib/cmake/fusec/FusecFunctions.cmake", "share/man/man1/fusec.1"]:
    if not os.path.exists(os.path.join(prefix, f)):
        fail("not installed: " + f)
    print("installed:", f)
runtime = os.path.exists(os.path.join(prefix, "include/fusert.h"))
if runtime:
    for f in ["lib/pkgconfig/fusert.pc", "lib/libfusert.a", "lib/libfusert.so", "bin/fuse-run",
              "share/fusec/fusec_tolerance.py"]:
        if not os.path.exists(os.path.join(prefix, f)):
            fail("runtime installed without " + f)
    # the installed fuse-run finds the tolerance module it imports
    p = subprocess.run([sys.executable, os.path.join(prefix, "bin/fuse-run"), "--help"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        fail("installed fuse-run --help", p.stdout)
    if shutil.which("pkg-config"):
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib/pkgconfig"))
        p = subprocess.run(["pkg-config", "--cflags", "--libs", "fusert"], env=env,
                           stdout=subprocess.PIPE, text=True)
        if p.returncode != 0 or "-lfusert" not in p.stdout or prefix not in p.stdout:
            fail("pkg-config fusert: " + p.stdout)

generators = ["Unix Makefiles"] + (["Ninja"] if shutil.which("ninja") else [])


def regenerated(out):
    return sorted(set(re.findall(r"fusec (\w+)\.fuse ->", out)))


def compiled(out):
    return sorted(set(re.findall(r"Building C object \S*/(\w+)\.c\.o", out)))


for gen in generators:
    tag = "ninja" if gen == "Ninja" else "make"
    src = os.path.join(work, tag, "src")
    bld = os.path.join(work, tag, "build")
    shutil.copytree(os.path.join(srcroot, "tests/cli/Inputs/outside"), src)
    run(["cmake", "-S", src, "-B", bld, "-G", gen, "-DCMAKE_PREFIX_PATH=" + prefix,
         "-DFUSERT_INCLUDE_DIR=" + os.path.join(srcroot, "runtime")])
    build_cmd = ["cmake", "--build", bld]
    out = run(build_cmd)
    if regenerated(out) != ["norm", "plain"]:
        fail("%s: first build ran fusec on %s" % (gen, regenerated(out)), out)
    plain_c = os.path.join(bld, "fusec/outside_kernels/plain.c")
    before = os.stat(plain_c).st_mtime_ns
    time.sleep(1.1)
    os.utime(os.path.join(src, "common.fuse"))
    out = run(build_cmd)
    if regenerated(out) != ["norm"]:
        fail("%s: touching common.fuse regenerated %s" % (gen, regenerated(out)), out)
    if "plain" in compiled(out) or os.stat(plain_c).st_mtime_ns != before:
        fail("%s: plain was rebuilt after touching common.fuse" % gen, out)
    out = run(build_cmd)
    if regenerated(out) or compiled(out):
        fail("%s: the second build was not a no-op" % gen, out)
    time.sleep(1.1)
    with open(os.path.join(src, "plain.fuse"), "a") as f:
        f.write("\nfn plain2(x: f32[N]) -> f32[N] {\n    return x * 2\n}\n")
    out = run(build_cmd)
    # plain.c and (through plain.h) main.c recompile; norm.c must not
    if regenerated(out) != ["plain"] or "plain" not in compiled(out) or "norm" in compiled(out):
        fail("%s: editing plain.fuse rebuilt %s / %s" % (gen, regenerated(out), compiled(out)), out)
    print("%s: first build: fusec norm plain; touch common.fuse: fusec norm; "
          "second build: nothing; edit plain.fuse: fusec plain, cc plain, not norm" % tag)
    if runtime:
        # linked against the installed libfusert; a NULL pointer is refused
        # before any device is needed, so this runs without a GPU too
        app = os.path.join(bld, "outside_app")
        env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(prefix, "lib"))
        p = subprocess.run([app], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        if p.returncode != 0 or "FUSERT_ERROR_NULL_POINTER" not in p.stdout:
            fail("%s: outside_app: exit %d" % (tag, p.returncode), p.stdout)
print("runtime: %s" % ("linked; outside_app ran: plain(NULL, ...) = FUSERT_ERROR_NULL_POINTER"
                       if runtime else "not installed (header-only compile)"))
