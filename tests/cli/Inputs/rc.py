#!/usr/bin/env python3
"""rc.py CMD ARGS... -- run CMD, pass its stdout and stderr through, then print
"exit status: N" on stdout, and exit 0: lets a lit test pin an exact exit code."""
import subprocess
import sys

p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
sys.stdout.write(p.stdout.decode("utf-8", "replace"))
sys.stdout.write(p.stderr.decode("utf-8", "replace"))
print("exit status: %d" % p.returncode)
