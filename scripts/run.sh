#!/usr/bin/env bash
# The main job: sets up, builds playerd's player in release mode and plays a bundled fixture through
# the best output there is: ALSA's default device, or the paced null output (with a one-line warning)
# on a machine without a sound card.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh build
swift build -c release --product playfile
exec .build/release/playfile "$@" Fixtures/stereo-44k-cbr.mp3 Fixtures/tagged-id3v24.mp3
