# lit.cfg.py -- golden tests for .fuse programs: pin what fusec makes of them
# (the plan, the kernels) with lit and FileCheck.  docs/golden-tests.md says
# how to use it.  Copy this folder (installed as PREFIX/share/fusec/golden)
# next to your .fuse files and run `lit -v DIR`.
#
# It finds fusec as $FUSEC, else on PATH; FileCheck as $FILECHECK, else on
# PATH, else in an LLVM install (/usr/lib/llvm-*/bin).  Tests are .fuse
# files (and .test files) with `# RUN:` lines; %fusec is the compiler, %s the
# test file.  lit's scratch files go to --param out=DIR, else to a folder in
# the system's temporary directory.
import glob
import os
import shutil
import tempfile

import lit.formats

config.name = "fusec-golden"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".fuse", ".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = lit_config.params.get("out") or os.path.join(
    tempfile.gettempdir(), "fusec-golden-%d" % os.getuid())

fusec = os.environ.get("FUSEC") or shutil.which("fusec")
if not fusec or not os.access(fusec, os.X_OK):
    lit_config.fatal("fusec not found: put it on PATH or set FUSEC=/path/to/fusec")
filecheck = os.environ.get("FILECHECK") or shutil.which("FileCheck")
if not filecheck:
    found = sorted(glob.glob("/usr/lib/llvm-*/bin/FileCheck"), reverse=True)
    filecheck = found[0] if found else None
if not filecheck:
    lit_config.fatal("FileCheck not found: put it on PATH or set FILECHECK=/path/to/FileCheck "
                     "(Debian/Ubuntu: apt install llvm; pip install filecheck gives a compatible one)")

config.substitutions.append(("%fusec", os.path.abspath(fusec)))
# Tests call FileCheck by name: the one found comes first on PATH.
config.environment["PATH"] = os.pathsep.join(
    [os.path.dirname(os.path.abspath(filecheck)), os.environ.get("PATH", "")])
# Diagnostics without colour, whatever the terminal.
config.environment["NO_COLOR"] = "1"
