#!/usr/bin/env bash
# Runs the test suite under a sanitizer: `bash Scripts/sanitizers.sh thread|address [swift test args]`.
#
#   thread   ThreadSanitizer, with Scripts/Sanitizers/mutex-tsan-shim.c preloaded so that TSan sees
#            Synchronization.Mutex's contended lock hand-overs (without it, every contended Mutex
#            access is reported as a race).
#   address  AddressSanitizer with LeakSanitizer; Scripts/Sanitizers/leak-suppressions.txt lists the
#            allocations that only look leaked.
#
# Every process the tests start (our executables, built with the same sanitizer) writes its reports
# to one folder; the run fails if any report appears or a test fails. The tests run one at a time:
# under a sanitizer the code runs several times slower, and in parallel on two cores the tests that
# check elapsed times (keep-alives, timeouts) miss their windows. Not part of CI (see
# Docs/Sanitizers.md); the build goes to .build/sanitize-<kind>.
set -euo pipefail
cd "$(dirname "$0")/.."

kind="${1:-}"
case "$kind" in
thread | address) shift ;;
*)
    echo "usage: bash Scripts/sanitizers.sh thread|address [swift test arguments]" >&2
    exit 64
    ;;
esac

bash Scripts/test-dependencies.sh

scratch=".build/sanitize-$kind"
reports="$scratch/reports"
rm -rf "$reports"
mkdir -p "$reports"

echo "==> swift build --sanitize $kind"
swift build --build-tests --sanitize "$kind" --scratch-path "$scratch"

status=0
if [ "$kind" = thread ]; then
    shim="$scratch/mutex-tsan-shim.so"
    # Swift's clang, for the swiftcall convention.
    clang="$(dirname "$(readlink -f "$(command -v swift)")")/clang"
    "$clang" -shared -fPIC -O2 Scripts/Sanitizers/mutex-tsan-shim.c -o "$shim" -ldl
    echo "==> swift test (ThreadSanitizer)"
    environment=(LD_PRELOAD="$PWD/$shim" TSAN_OPTIONS="halt_on_error=0 log_path=$PWD/$reports/report")
else
    echo "==> swift test (AddressSanitizer, LeakSanitizer)"
    environment=(
        ASAN_OPTIONS="detect_leaks=1 log_path=$PWD/$reports/report"
        LSAN_OPTIONS="suppressions=$PWD/Scripts/Sanitizers/leak-suppressions.txt print_suppressions=0"
    )
fi
env "${environment[@]}" timeout 3000 swift test --skip-build --sanitize "$kind" --scratch-path "$scratch" --no-parallel "$@" \
    || status=$?

# A report file can also hold only statistics; list the files with a finding.
mapfile -t found < <(grep -l -E "^(WARNING: ThreadSanitizer|==[0-9]+==ERROR: )" "$reports"/* 2>/dev/null || true)
if [ "${#found[@]}" -gt 0 ]; then
    echo "==> ${#found[@]} process(es) reported problems:"
    for report in "${found[@]}"; do
        echo "--- $report"
        cat "$report"
    done
    exit 1
fi
echo "==> no sanitizer reports"
exit "$status"
