#!/usr/bin/env python3
"""run_regressions.py FUSEC DIR: every input the fuzzer turned up (DIR) must
leave fusec with exit status 0 or 1 (accepted, or a diagnostic), for both
targets, within 30 s and, outside ASan and valgrind (which reserve far more
address space themselves), within 2 GiB of address space."""
import os
import resource
import subprocess
import sys
import tempfile

fusec, folder = sys.argv[1], sys.argv[2]
limit = "ASAN_OPTIONS" not in os.environ and os.path.basename(os.path.dirname(fusec)) != "valgrind"


def cap():
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


bad = 0
names = sorted(n for n in os.listdir(folder) if not n.startswith("."))
with tempfile.TemporaryDirectory() as tmp:
    for name in names:
        for target, ext in (("cuda", "cu"), ("nvrtc", "c")):
            out = os.path.join(tmp, "out." + ext)
            try:
                r = subprocess.run([fusec, "--target=" + target, os.path.join(folder, name), "-o", out],
                                   capture_output=True, text=True, timeout=30, preexec_fn=cap)
                rc = r.returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
            if rc not in (0, 1):
                bad += 1
                print("FAIL %s (%s): exit %s" % (name, target, rc))
print("regressions: %d inputs, %d failed (memory limit %s)" % (len(names), bad, "on" if limit else "off"))
sys.exit(1 if bad else 0)
