#!/usr/bin/env python3
"""mknpy.py -- write a small .npy file without NumPy, for the interp tests.

  mknpy.py OUT DESCR SHAPE [VALUE...] [--version=2] [--fortran] [--truncate=N]

DESCR is the NumPy dtype string ('<f4', '<f2', '|b1', '>f4', ...); SHAPE is
comma-separated dims ('2,3'), or '' for a 0-d array.  VALUEs are Python
numbers ('nan', 'inf' and '-inf' work); missing values are 0.  --truncate
drops the last N bytes, to test the reader's errors.
"""
import math
import struct
import sys

FORMATS = {"f2": "e", "f4": "f", "f8": "d", "i4": "i", "i8": "q", "b1": "?", "u2": "H", "u4": "I"}


def main(argv):
    opts = [a for a in argv if a.startswith("--")]
    args = [a for a in argv if not a.startswith("--")]
    out, descr, shape_s = args[0], args[1], args[2]
    vals = args[3:]
    version, fortran, truncate = 1, False, 0
    for o in opts:
        if o.startswith("--version="):
            version = int(o.split("=")[1])
        elif o == "--fortran":
            fortran = True
        elif o.startswith("--truncate="):
            truncate = int(o.split("=")[1])
    dims = [int(d) for d in shape_s.split(",") if d.strip()]
    n = math.prod(dims) if dims else 1
    shape = "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"
    order = ">" if descr[0] == ">" else "<"
    fmt = FORMATS[descr[1:]]
    numbers = [float(v) for v in vals] + [0.0] * (n - len(vals))
    if fmt in "iqHI?":
        numbers = [int(v) for v in numbers]
    data = b"".join(struct.pack(order + fmt, v) for v in numbers[:n])
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)
    pre = 10 if version == 1 else 12
    header += " " * ((-(pre + len(header) + 1)) % 64) + "\n"
    lenfield = struct.pack("<H" if version == 1 else "<I", len(header))
    blob = b"\x93NUMPY" + bytes([version, 0]) + lenfield + header.encode("latin-1") + data
    if truncate:
        blob = blob[:-truncate]
    with open(out, "wb") as f:
        f.write(blob)


if __name__ == "__main__":
    main(sys.argv[1:])
