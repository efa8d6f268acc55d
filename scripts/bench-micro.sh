#!/usr/bin/env bash
# bench-micro.sh (`make bench-micro`): the micro-benchmarks of the hot paths in Benchmarks/, a package
# of its own so that the main build and the tests never build the benchmark framework
# (ordo-one/benchmark). Arguments go to the benchmark plugin, e.g. `--filter 'Volume.*'`, or
# `baseline update before` then `baseline compare before`. See Benchmarks/README.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH
scripts/setup.sh build >&2
cd Benchmarks
exec swift package --disable-sandbox benchmark --no-progress "$@"
