#!/usr/bin/env python3
"""doc_block.py DOC HEADING LANG -- print the first ```LANG block after
the line HEADING in DOC (exit 1 if there is none)."""
import sys

path, heading, lang = sys.argv[1:4]
lines = open(path).read().split("\n")
try:
    at = lines.index(heading)
    start = lines.index("```" + lang, at) + 1
    end = lines.index("```", start)
except ValueError:
    sys.exit("%s: no ```%s block after '%s'" % (path, lang, heading))
sys.stdout.write("\n".join(lines[start:end]) + "\n")
