#!/usr/bin/env bash
# tools/check-docs.sh [--fusec BIN] [--exclude REGEX]... [PATH...] -- fails when
# the tracked text narrates how the project was built, cites a file that is
# not in the repository, or links to nothing or to no section (tools/check-docs.py says how;
# tools/check-docs.allow lists the exceptions).  Needs only python3 and git.
exec python3 "$(dirname "$0")/check-docs.py" "$@"
