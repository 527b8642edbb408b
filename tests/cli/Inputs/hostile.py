#!/usr/bin/env python3
"""hostile.py FUSEC DIR -- run fusec on inputs no one should write and print, per
input, the exit status and whether stderr has a diagnostic.  fusec must answer
each with status 1 (an error in the input), never crash (a signal, 70), hang or
write output.  Under tools/valgrind-lit.sh and the ASan build the same runs
are checked for memory errors and leaks."""
import os
import random
import subprocess
import sys

fusec, work = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
rng = random.Random(1234)
ok = open(os.path.join(os.path.dirname(__file__), "ok.fuse"), "rb").read()
cases = {
    "random-bytes": bytes(rng.randrange(256) for _ in range(4096)),
    "nul-bytes": b"fn f(x: f32[N]) -> f32[N] {\x00\x00 return x }\n",
    "invalid-utf8": b"fn f(x: f32[N]) -> f32[N] {\n    return x \xff\xfe\xc3\n}\n",
    "truncated": ok[: len(ok) * 2 // 3],
    "deep-parens": b"fn f(x: f32[N]) -> f32[N] {\n    return " + b"(" * 5000 + b"x" + b")" * 5000 + b"\n}\n",
    "unclosed-parens": b"fn f(x: f32[N]) -> f32[N] {\n    return " + b"(" * 5000 + b"x\n}\n",
    "huge-number": b"fn f(x: f32[N]) -> f32[N] {\n    return x * 1" + b"0" * 400 + b"\n}\n",
    "huge-dim": b"fn f(x: f32[99999999999999999999999]) -> f32[N] {\n    return x\n}\n",
    "unterminated-import": b"import \"never-closed\nfn f(x: f32[N]) -> f32[N] {\n    return x\n}\n",
    "self-import": b"import \"self-import.fuse\"\nfn f(x: f32[N]) -> f32[N] {\n    return y\n}\n",
    "rank-9": b"fn f(x: f32[A, B, C, D, E, F, G, H, I]) -> f32[A] {\n    return x\n}\n",
    "empty-with-error": b"fn\n",
}
for name, data in sorted(cases.items()):
    path = os.path.join(work, name + ".fuse")
    with open(path, "wb") as f:
        f.write(data)
    out = os.path.join(work, name + ".cu")
    try:
        p = subprocess.run([fusec, path, "-o", out], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        rc = p.returncode
        diag = b"error:" in p.stderr
    except subprocess.TimeoutExpired:
        rc, diag = "timeout", False
    print("%s: exit %s, %s, %s" % (name, rc, "diagnostic" if diag else "NO diagnostic",
                                   "no output" if not os.path.exists(out) else "OUTPUT WRITTEN"))
