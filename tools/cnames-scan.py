#!/usr/bin/env python3
"""cnames-scan.py -- which names the generated code cannot take, asked of
this machine's toolchain, and whether fusec knows them all.

    tools/cnames-scan.py --runtime runtime [--nvcc nvcc] [--cc cc]
        (--list | --check build/fusec)

The generated .cu includes the module's header (stddef.h, stdint.h,
fusert.h), cuda_runtime.h and <atomic>, and nvcc compiles it in GNU mode;
the nvrtc target's .c includes the header and is plain C11.  The scan
preprocesses those includes, takes every identifier and macro they hold as
a candidate, and declares each as the C function the header would declare
for a fn of that name: under nvcc (extern "C", after the includes) and
under `cc -std=c11 -Wall -Wextra -Werror`.  A candidate either compiler
rejects, and every macro, is a name a fn cannot take.  Names in the
namespaces fusec refuses by rule (the CUDA APIs' prefixes, fusec's own,
'__' and '_' with a capital) are left out.

--list prints each name as a row of compiler/cnames_table.inc: its
category, and OBJ for an object-like macro (which a param cannot take
either).  --check runs fusec on main files whose fns take those names
and fails unless fusec refuses every one (at the fn, before any C is
written); and compiles, with both compilers, a module whose params and
dims take every object-like macro the scan found, which fusec must rename.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

# Namespaces compiler/cnames.c refuses by rule, not by its table.
RULE = re.compile(r"^(__|_[A-Z]|cuda[A-Z]|cu[A-Z]|nvrtc[A-Z]|CUDA|CU_|CU[a-z]|NVRTC_|"
                  r"fusec_|FUSEC_|fusert_|FUSERT_|fz_|FZ_|fzk_|FZK_)")
HEADER = ('#include "fusert.h"\n'
          "fusert_status zz_scan(const float *x, float *result, int64_t N, fusert_stream stream);\n")
INCLUDES_CU = ('#include "zz_scan.h"\n#include <cuda_runtime.h>\n#include <atomic>\n'
               "#include <stddef.h>\n#include <stdint.h>\n")
INCLUDES_C = '#include "zz_scan.h"\n#include <stddef.h>\n#include <stdint.h>\n'
KEYWORDS = set("""alignas alignof and and_eq asm auto bitand bitor bool break case catch char
char16_t char32_t char8_t class compl concept const const_cast consteval constexpr constinit
continue co_await co_return co_yield decltype default delete do double dynamic_cast else enum
explicit export extern false float for friend goto if inline int long mutable namespace new
noexcept not not_eq nullptr operator or or_eq private protected public register
reinterpret_cast requires restrict return short signed sizeof static static_assert static_cast
struct switch template this thread_local throw true try typedef typeid typename union unsigned
typeof typeof_unqual using virtual void volatile wchar_t while xor xor_eq""".split())
BUILTIN_VARS = {"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize"}
VECTOR = re.compile(r"^(u?(char|short|int|long|longlong)|float|double)[1-4](_16a|_32a)?$|^dim3$")
IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
MARK = re.compile(r'^# \d+ "([^"]+)"')


def sh(cmd, cwd):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)


class Toolchain:
    def __init__(self, args, work):
        self.a = args
        self.work = work
        with open(os.path.join(work, "zz_scan.h"), "w") as f:
            f.write(HEADER)

    def cmd(self, mode, src, extra):
        inc = ["-I", self.a.runtime, "-I", self.work]
        if mode == "cu":
            return [self.a.nvcc, "-arch=sm_90"] + inc + extra + [src]
        return [self.a.cc, "-std=c11", "-Wall", "-Wextra", "-Werror"] + inc + extra + [src]

    def preprocess(self, mode):
        """(first file each identifier appears in, {macro: (file, function-like)})"""
        src = os.path.join(self.work, "inc." + mode)
        with open(src, "w") as f:
            f.write(INCLUDES_CU if mode == "cu" else INCLUDES_C)
        dd = ["-Xcompiler", "-dD"] if mode == "cu" else ["-dD"]
        r = sh(self.cmd(mode, src, ["-E"] + dd), self.work)
        if r.returncode:
            sys.exit("cnames-scan: cannot preprocess the includes:\n" + r.stderr)
        first, macros, cur = {}, {}, "?"
        for line in r.stdout.splitlines():
            m = MARK.match(line)
            if m:
                cur = m.group(1)
                continue
            m = re.match(r"#define ([A-Za-z_][A-Za-z0-9_]*)(\()?", line)
            if m:
                macros.setdefault(m.group(1), (cur, bool(m.group(2))))
                continue
            if line.startswith("#"):
                continue
            for w in IDENT.findall(line):
                first.setdefault(w, (cur, line))
        return first, macros

    def rejected(self, mode, names, batch=300):
        """the names that, declared as the header's C function, fail to compile"""
        bad = []
        pre = INCLUDES_CU + 'extern "C" {\n' if mode == "cu" else INCLUDES_C
        post = "}\n" if mode == "cu" else ""
        src = os.path.join(self.work, "cands." + mode)
        err = re.compile(r'^cands(?:\((\d+)\)|:(\d+):\d+):? error', re.M)
        for i in range(0, len(names), batch):
            left = names[i:i + batch]
            while left:
                with open(src, "w") as f:
                    f.write(pre + '#line 1 "cands"\n')
                    for n in left:
                        f.write("int %s(const float *x, float *result, long long N, void *stream);\n" % n)
                    f.write(post)
                extra = ["-Xcudafe", "--error_limit=100000"] if mode == "cu" else ["-fmax-errors=0"]
                r = sh(self.cmd(mode, src, extra + ["-c", "-o", os.path.join(self.work, "c.o")]), self.work)
                if r.returncode == 0:
                    break
                lines = {int(m.group(1) or m.group(2)) - 1 for m in err.finditer(r.stdout + r.stderr)}
                lines = {k for k in lines if k < len(left)}
                if not lines:
                    sys.exit("cnames-scan: a compile failed on no candidate's line:\n" + r.stdout + r.stderr)
                bad += [left[k] for k in sorted(lines)]
                left = [n for k, n in enumerate(left) if k not in lines]
        return bad


def called_in(text):
    """{name: the files where `name (` appears}: where a function is declared"""
    where, cur = {}, "?"
    for line in text.splitlines():
        m = MARK.match(line)
        if m:
            cur = m.group(1)
        elif not line.startswith("#"):
            for w in re.findall(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(", line):
                where.setdefault(w, []).append(cur)
    return where


def is_cuda(path):
    return "cuda" in path or "/targets/" in path


def kind(name, first, macros, text, calls):
    """the category compiler/cnames_table.inc gives a rejected name"""
    if name in KEYWORDS:
        return "KW"
    if name in BUILTIN_VARS:
        return "CUVAR"
    if name in macros:
        where, fnlike = macros[name]
        if where in ("<built-in>", "<command-line>"):
            return "CCMACRO"
        if "/c++/" in where:
            return "CXXMACRO"
        return "CUMACRO" if is_cuda(where) else "MACRO"
    if VECTOR.match(name):
        return "CUVEC"
    if name == "std":
        return "CXX"
    files = calls.get(name, [])
    if re.search(r"typedef\b[^;{}]*\b%s\s*(__attribute__\s*\(\(.*?\)\))?\s*[;(]|\}\s*%s\s*;" % (name, name), text):
        return "CUDA" if is_cuda(first.get(name, ("?", ""))[0]) else "TYPE"
    if not files:
        return "CUDA" if is_cuda(first.get(name, ("?", ""))[0]) else "LIBVAR"
    if any("math" in os.path.basename(f) and not is_cuda(f) and "/c++/" not in f for f in files):
        return "MATH"
    if any("math_functions" in f or "device_functions" in f or "device_double_functions" in f for f in files):
        return "CUMATH"
    if is_cuda(files[0]):
        return "CUDEV"
    return "LIBC"


def scan(args, work):
    tc = Toolchain(args, work)
    first, macros = tc.preprocess("cu")
    cfirst, cmacros = tc.preprocess("c")
    for k, v in cfirst.items():
        first.setdefault(k, v)
    for k, v in cmacros.items():
        macros.setdefault(k, v)
    cands = sorted(n for n in set(first) | set(macros) if not RULE.match(n) and n != "zz_scan")
    plain = [n for n in cands if n not in macros]
    bad = set(tc.rejected("cu", plain)) | set(tc.rejected("c", plain))
    bad |= {n for n in cands if n in macros}
    text = sh(tc.cmd("cu", os.path.join(work, "inc.cu"), ["-E"]), work).stdout
    calls = called_in(text)
    return {n: kind(n, first, macros, text, calls) for n in sorted(bad)}, macros


def check(args, work, names, macros):
    fusec = args.check
    missing = []
    items = sorted(names)
    for i in range(0, len(items), 40):
        part = items[i:i + 40]
        src = os.path.join(work, "fns.fuse")
        with open(src, "w") as f:
            for n in part:
                f.write("fn %s(x: f32[N]) -> f32[N] { return x }\n" % n)
        r = sh([fusec, "--emit=ir", src], work)
        refused = set(re.findall(r"error: fn '([A-Za-z0-9_]+)' cannot become a C function", r.stderr))
        # a name .fuse cannot spell as a fn name (its own keywords) is no risk
        for n in part:
            if n not in refused:
                one = os.path.join(work, "one.fuse")
                with open(one, "w") as f:
                    f.write("fn %s(x: f32[N]) -> f32[N] { return x }\n" % n)
                r1 = sh([fusec, "--emit=ir", one], work)
                if r1.returncode == 0:
                    missing.append(n)
    for n in missing:
        print("not refused as a fn name: %s (%s)" % (n, names[n]))

    # params, results and dims named like object-like macros: renamed
    objs = sorted(n for n in names if n in macros and not macros[n][1])
    ok = []
    for n in objs:
        one = os.path.join(work, "p.fuse")
        with open(one, "w") as f:
            f.write("fn f(%s: f32, x: f32[N]) -> f32[N] { return x * %s }\n" % (n, n))
        if sh([fusec, "--emit=ir", one], work).returncode == 0:
            ok.append(n)
    src = os.path.join(work, "params.fuse")
    with open(src, "w") as f:
        for i in range(0, len(ok), 8):
            part = ok[i:i + 8]
            dims = ", ".join(part)
            f.write("fn d%d(x: f32[%s]) -> f32[%s] { return x * 2 }\n" % (i, dims, dims))
            f.write("fn p%d(%s, x: f32[N]) -> f32[N] { return x * (%s) }\n"
                    % (i, ", ".join("%s: f32" % n for n in part), " + ".join(part)))
            f.write("fn r%d(x: f32[N]) -> (%s) {\n%s}\n"
                    % (i, ", ".join("%s: f32[N]" % n for n in part),
                       "".join("    %s = x * %d\n" % (n, k + 1) for k, n in enumerate(part))))
    bad = 0
    for target, ext in (("cuda", ".cu"), ("nvrtc", ".c")):
        out = os.path.join(work, "params" + ext)
        r = sh([fusec, "--target=" + target, src, "-o", out], work)
        if r.returncode:
            print("fusec failed on the params module (%s):\n%s" % (target, r.stderr[:3000]))
            bad += 1
            continue
        mode = "cu" if ext == ".cu" else "c"
        r = sh(Toolchain(args, work).cmd(mode, out, ["-c", "-o", out + ".o"]), work)
        if r.returncode:
            print("params and dims named like macros break the %s output:\n%s" % (target, r.stderr[:3000]))
            bad += 1
    print("%d names refused by the toolchain; %d not refused by fusec; %d macro names as params "
          "and dims: %s" % (len(names), len(missing), len(ok), "ok" if not bad else "broken"))
    return 1 if missing or bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runtime", required=True, help="the folder of fusert.h")
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--cc", default="cc")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--list", action="store_true")
    g.add_argument("--check", metavar="FUSEC")
    args = ap.parse_args()
    args.runtime = os.path.abspath(args.runtime)
    with tempfile.TemporaryDirectory(prefix="cnames-scan.") as work:
        names, macros = scan(args, work)
        if args.list:
            for n, k in names.items():
                obj = n in macros and not macros[n][1]
                print('{"%s", %s, %s},' % (n, k, "OBJ" if obj else "0"))
            return 0
        args.check = os.path.abspath(args.check)
        return check(args, work, names, macros)


if __name__ == "__main__":
    sys.exit(main())
