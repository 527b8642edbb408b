"""Checks that docs/language.md's tolerance table and its adjustments state
the numbers of tools/fusec_tolerance.py, the module fuse-run, difftest.py
and bench.py import.  Prints one line per row and "agree", or what differs."""
import re
import sys

root = sys.argv[1]
sys.path.insert(0, root + "/tools")
import fusec_tolerance as tol  # noqa: E402



def num(x):
    """1e-06 -> 1e-6, as the docs write numbers."""
    return re.sub(r"e-0(\d)", r"e-\1", "%g" % x)


doc = open(root + "/docs/language.md", encoding="utf-8").read()
section = doc[doc.index("## Tolerances"):]
bad = []
for dt, (rtol, afrac) in sorted(tol.ELEMENT.items()):
    m = re.search(r"^\| %s \| ([^|]+) \| ([^|]+) \|" % dt, section, re.M)
    if not m:
        bad.append("no row for %s" % dt)
        continue
    got = (float(m.group(1)), float(m.group(2)))
    print("%s rtol %g afrac %g" % (dt, got[0], got[1]))
    if got != (rtol, afrac):
        bad.append("%s: docs say %r, fusec_tolerance says %r" % (dt, got, (rtol, afrac)))
if not re.search(r"^\| i32, i64, bool \| exact", section, re.M):
    bad.append("no exact row for i32, i64, bool")
checks = [("×%g (rtol and afrac) for the f32 and f64 rows" % tol.TRANSCENDENTAL_FACTOR, "transcendental factor"),
          ("×%g more with `--fast-math`" % tol.FAST_MATH_FACTOR, "fast-math factor"),
          ("afrac grows by %s · √K (%s · √K for f64" % (num(tol.ACCUMULATOR["f32"]), num(tol.ACCUMULATOR["f64"])),
           "accumulator term")]
for text, what in checks:
    if text not in section:
        bad.append("the %s is not stated as: %s" % (what, text))
for b in bad:
    print("DIFFERS: " + b)
print("agree" if not bad else "disagree")
sys.exit(1 if bad else 0)
