#!/usr/bin/env bash
# Every test: sets up (build and test packages), builds everything with warnings as errors, checks
# the formatting with `swift format lint --strict`, then runs the whole test suite, then the soak
# (scripts/soak.sh: 150 s of hostile clients against the real playerd), then fuzzes every libFuzzer
# target for a minute (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh test

echo "== build (warnings are errors)"
mkdir -p .build
# Package.swift turns warnings into errors for our targets; this also catches any that slip past.
if ! swift build --build-tests 2>&1 | tee .build/test-build.log; then
    exit 1
fi
if grep -E '^/.*: warning: ' .build/test-build.log; then
    echo "test: the build printed warnings (above)" >&2
    exit 1
fi

echo "== systemd units"
scripts/check-units.sh .build/debug/playerd

echo "== swift format lint --strict"
swift format lint --strict --recursive Package.swift Sources Tests Benchmarks/Package.swift Benchmarks/Benchmarks Benchmarks/Sources \
    Fuzz/Package.swift Fuzz/Sources

echo "== tests"
swift test --skip-build --disable-xctest --no-parallel

echo "== soak: 150 s of hostile clients against the real playerd"
scripts/soak.sh 150

# Only once every test passed: each libFuzzer target for a minute from its seed corpus, with ASan and
# LeakSanitizer (about 6 minutes with the sanitized build on 2 cores). Any crash, hang or leak fails.
echo "== fuzz"
scripts/fuzz.sh all 60
