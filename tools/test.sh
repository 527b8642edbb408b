#!/usr/bin/env bash
# test.sh -- the whole test suite, as CI runs it (.ci/run is this script).
#
#   1. tools/install-deps.sh, then tools/check-docs.sh over the tracked text
#   2. build/       normal build (-Werror when CI=true) + ctest -LE gpu
#   3. build-asan/  ASan+UBSan build, -Werror, -fno-sanitize-recover=all + ctest -LE gpu
#   4. valgrind memcheck over fusec for every lit test and example input
#      (tools/valgrind-lit.sh: the lit suites again, with %fusec run under
#      valgrind; any memcheck error or definite/indirect leak fails)
#   5. a 60-second libFuzzer run over the whole compiler (tests/fuzz/run.sh;
#      needs clang with libFuzzer: Debian's libclang-rt-14-dev)
# GPU tests (ctest label gpu, lit feature cuda-gpu) are not run here.
# Environment: JOBS (default 2), SKIP_VALGRIND=1, SKIP_ASAN=1, SKIP_FUZZ=1 for quick local runs.
#
# tools/test.sh --quick: the loop to run after each change (55 to 80 s on the
# 2-core machine with the build done; README has the measurements).  Steps 1
# and 2 only, with FUSEC_TEST_QUICK=1, which gives lit the feature `quick`:
# the tests that say `UNSUPPORTED: quick` (nvcc and NVRTC compiles of whole
# modules, the C drivers' and rebuild checks' nvcc builds, the random-program
# compiles, the longest emulator runs) are skipped; every unit test and every
# other lit test runs, on every stage from the parser to the CPU emulator.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/common.sh

quick=0
case "${1:-}" in
    --quick) quick=1 ;;
    "") ;;
    *) echo "usage: tools/test.sh [--quick]" >&2; exit 2 ;;
esac
if ((quick)); then
    export FUSEC_TEST_QUICK=1 SKIP_ASAN=1 SKIP_VALGRIND=1 SKIP_FUZZ=1
fi

if [[ "${CI:-}" == "true" ]]; then werror=ON; else werror=${FUSEC_WERROR:-OFF}; fi
start=$SECONDS
status=0

step "dependencies"
tools/install-deps.sh

step "the repository's text: narration, citations, links (tools/check-docs.sh)"
tools/check-docs.sh || status=1

build_and_test() { # dir, cmake args...
    local dir=$1
    shift
    step "configure $dir ($*)"
    cmake -S . -B "$dir" -DFUSEC_BUILD_RUNTIME="$FUSEC_RUNTIME" "$@" >/dev/null
    step "build $dir"
    cmake --build "$dir" -j"$JOBS"
    step "ctest $dir"
    (cd "$dir" && ctest --output-on-failure -LE gpu -j"$JOBS") || status=1
}

build_and_test build -DFUSEC_WERROR="$werror" -DFUSEC_SANITIZE=OFF
if [[ -z "${SKIP_ASAN:-}" ]]; then
    build_and_test build-asan -DFUSEC_WERROR=ON -DFUSEC_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
fi
if [[ -z "${SKIP_VALGRIND:-}" ]]; then
    step "valgrind memcheck over fusec (every lit test and example)"
    tools/valgrind-lit.sh build || status=1
fi

if [[ -z "${SKIP_FUZZ:-}" ]] && { command -v clang || command -v clang-14; } >/dev/null; then
    step "libFuzzer over the whole compiler, 60 s (tests/fuzz/run.sh)"
    tests/fuzz/run.sh 60 2>&1 | grep -E "^(stat::|==[0-9]+==ERROR|SUMMARY|Done)|crash-|deadly signal" || true
    if ls build-fuzz/crashes/crash-* build-fuzz/crashes/timeout-* build-fuzz/crashes/leak-* >/dev/null 2>&1; then
        echo "libFuzzer found a failing input: build-fuzz/crashes/"; status=1
    fi
fi

step "done in $((SECONDS - start)) s: $([[ $status == 0 ]] && echo PASS || echo FAIL)"
exit $status
