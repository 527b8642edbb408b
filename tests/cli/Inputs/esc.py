#!/usr/bin/env python3
"""esc.py CMD ARGS... -- run CMD and print "colour" if its standard error holds
an ANSI escape sequence, else "plain" (lets a lit test see colour)."""
import subprocess
import sys

p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
print("colour" if b"\x1b[" in p.stderr else "plain")
