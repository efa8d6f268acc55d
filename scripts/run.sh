#!/usr/bin/env bash
# The main job: sets up, builds playerd and playerctl in release mode, starts playerd on a private
# socket and plays two bundled fixtures through it, showing `playerctl status --follow` until the
# queue has played. It plays on ALSA's default device, or on the paced null output (with a one-line
# warning) on a machine without a sound card. playerd is stopped when the job ends.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh build
swift build -c release --static-swift-stdlib --product playerd
swift build -c release --static-swift-stdlib --product playerctl
bin=.build/release

output=alsa
if [[ ! -e /proc/asound/cards ]] || grep -q "no soundcards" /proc/asound/cards; then
    echo "run: no sound card found: playing on the null output (silent, in real time)" >&2
    output=null
fi

work=$(mktemp -d)
socket=$work/socket
"$bin/playerd" --socket "$socket" --output "$output" --music-dir "$PWD/Fixtures" --state-file none \
    --log-level warning &
playerd=$!
follow=
cleanup() {
    [[ -n $follow ]] && kill -INT "$follow" 2>/dev/null && wait "$follow" 2>/dev/null
    kill -TERM "$playerd" 2>/dev/null && wait "$playerd" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

"$bin/playerctl" --socket "$socket" wait ready --timeout 10s
"$bin/playerctl" --socket "$socket" play Fixtures/stereo-44k-cbr.mp3 Fixtures/tagged-id3v24.mp3
"$bin/playerctl" --socket "$socket" status --follow &
follow=$!
"$bin/playerctl" --socket "$socket" wait stop --timeout 60s
