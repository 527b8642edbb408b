#!/usr/bin/env bash
# tools/same-output.sh OLD_FUSEC NEW_FUSEC [FLAGS...]
#
# Checks that a compiler change left the output alone: runs both fusec
# binaries on every examples/*.fuse and every .fuse under tests/, with
# --emit=cu, --emit=c (the nvrtc target), --emit=h, --emit=plan and
# --emit=fusion, each as is and with --no-fusion, plus FLAGS on every call,
# and compares standard output, standard error and the exit status byte for
# byte.  (A .fuse that fails to compile -- the diagnostics tests -- must fail
# the same way.)  Typical use, before and after an emitter change:
#
#     cp build/fusec /tmp/fusec-old    # built from the commit before
#     ... change, rebuild ...
#     tools/same-output.sh /tmp/fusec-old build/fusec
#
# Prints one line per difference and "N outputs compared, N differ";
# exits 1 when anything differs.
#
# SAME_OUTPUT_IGNORE_COMMENTS=1 compares standard output without its
# comment-only lines: lines that hold nothing but a // comment or a line of
# a /* */ comment (" * ...", "*/"), also where the nvrtc target has the
# line inside a string literal ("    /* ...\n").  For changes that reword
# comments of the generated code and nothing else.
set -u
old=$(realpath "$1")
new=$(realpath "$2")
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
bad=0
# drop_comments FILE: FILE without its comment-only lines (in place)
drop_comments() {
    awk '{
        u = $0
        sub(/^[ \t]*/, "", u)
        if (substr(u, 1, 1) == "\"") {   # a line of embedded source: "...\n"
            u = substr(u, 2)
            sub(/\\n"$/, "", u)
            sub(/^[ \t]*/, "", u)
        }
        if (u ~ /^\/\*/ || u ~ /^\/\// || u ~ /^\*\// || u ~ /^\* / || u == "*")
            next
        print
    }' "$1" >"$1.nc" && mv "$1.nc" "$1"
}
files=$( (ls "$root"/examples/*.fuse; find "$root/tests" -name '*.fuse') | LC_ALL=C sort)
for f in $files; do
    for emit in cu c h plan fusion; do
        for nf in "" --no-fusion; do
            n=$((n + 1))
            (cd "$(dirname "$f")" && "$old" --emit=$emit $nf "$@" "$f" >"$tmp/o.out" 2>"$tmp/o.err"; echo $? >"$tmp/o.rc")
            (cd "$(dirname "$f")" && "$new" --emit=$emit $nf "$@" "$f" >"$tmp/n.out" 2>"$tmp/n.err"; echo $? >"$tmp/n.rc")
            if [ "${SAME_OUTPUT_IGNORE_COMMENTS:-0}" = 1 ]; then
                drop_comments "$tmp/o.out"
                drop_comments "$tmp/n.out"
            fi
            for s in out err rc; do
                if ! cmp -s "$tmp/o.$s" "$tmp/n.$s"; then
                    echo "DIFFERS: ${f#$root/} --emit=$emit $nf $* ($s)"
                    bad=$((bad + 1))
                    break
                fi
            done
        done
    done
done
if [ "${SAME_OUTPUT_IGNORE_COMMENTS:-0}" = 1 ]; then
    echo "$n outputs compared (comment-only lines aside), $bad differ"
else
    echo "$n outputs compared, $bad differ"
fi
[ "$bad" -eq 0 ]
