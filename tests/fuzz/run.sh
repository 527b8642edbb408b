#!/usr/bin/env bash
# tests/fuzz/run.sh [SECONDS] -- build the libFuzzer harness with clang
# (ASan+UBSan) and fuzz the whole compiler for SECONDS (default 60), starting
# from a corpus of every test and example program.  Crashes are written to
# build-fuzz/crashes/; each one found becomes a regression test under
# tests/diagnostics or tests/fuzz/regressions.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
b="$root/build-fuzz"
cc=$(command -v clang || command -v clang-14)
cmake -S "$root" -B "$b" -DCMAKE_C_COMPILER="$cc" -DFUSEC_FUZZ=ON -DFUSEC_BUILD_RUNTIME=OFF \
      -DFUSEC_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$b" --target fuzz_compile -j2 >/dev/null
corpus="$b/corpus"
mkdir -p "$corpus" "$b/crashes"
find "$root/tests" "$root/examples" -name '*.fuse' -size -64k -exec cp {} "$corpus/" \; 2>/dev/null || true
[ -d "$root/tests/fuzz/regressions" ] && cp "$root"/tests/fuzz/regressions/* "$corpus/" 2>/dev/null || true
# Regressions first: each must run clean.
if [ -d "$root/tests/fuzz/regressions" ] && ls "$root"/tests/fuzz/regressions/* >/dev/null 2>&1; then
  "$b/fuzz_compile" "$root"/tests/fuzz/regressions/*
fi
exec "$b/fuzz_compile" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -dict="$root/tests/fuzz/fuse.dict" \
     -print_final_stats=1 -artifact_prefix="$b/crashes/" "$corpus"
