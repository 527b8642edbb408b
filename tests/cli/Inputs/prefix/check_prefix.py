#!/usr/bin/env python3
"""check_prefix.py PREFIX OBJECT... -- every external symbol an object
defines (nm -g --defined-only; weak C++ inline functions of the toolchain
aside) starts with PREFIX; a kernel's host stub counts by the kernel name it
carries (__device_stub__Z<len><name>).  Prints each symbol's verdict."""
import re
import subprocess
import sys

prefix, objs = sys.argv[1], sys.argv[2:]
bad = 0
for obj in objs:
    out = subprocess.run(["nm", "-g", "--defined-only", "-P", obj], check=True, capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        name, kind = line.split()[:2]
        if kind in ("W", "V", "w", "v"):  # weak: inline C++ and personality, merged at link
            continue
        m = re.match(r"_Z\d+__device_stub__Z\d+(\w+?)P", name)
        plain = m.group(1) if m else name
        ok = plain.startswith(prefix)
        bad += not ok
        print("%s %s" % ("ok" if ok else "UNPREFIXED", plain))
print("%d unprefixed" % bad)
sys.exit(1 if bad else 0)
