#!/usr/bin/env bash
# The main job: sets up, builds playerd and playerctl in release mode, starts playerd on a private
# socket and plays two bundled fixtures through it, showing `playerctl status --follow` until the
# queue has played. It plays on ALSA's default device, or on the paced null output (with a one-line
# warning) on a machine without a sound card. The demo leaves the machine's own playerd state alone:
# its socket, state file and stored playlists live in a temporary directory, it keeps no library (it
# plays files by path; a scan of Fixtures/ would only warn about the broken ones made for the tests),
# and playerd is stopped and that directory removed when the job ends.
#   RUN_BIN_DIR=DIR    use the playerd and playerctl already built in DIR (no setup, no build)
#   RUN_OUTPUT=SPEC    play on this output instead (null:unpaced plays silently, at once)
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${RUN_BIN_DIR:-}
if [[ -z $bin ]]; then
    scripts/setup.sh build
    swift build -c release --static-swift-stdlib --product playerd
    swift build -c release --static-swift-stdlib --product playerctl
    bin=.build/release
fi

output=${RUN_OUTPUT:-alsa}
if [[ -z ${RUN_OUTPUT:-} ]] && { [[ ! -e /proc/asound/cards ]] || grep -q "no soundcards" /proc/asound/cards; }; then
    echo "run: no sound card found: playing on the null output (silent, in real time)" >&2
    output=null
fi

work=$(mktemp -d)
playerd=
follow=
cleanup() {
    set +e  # whatever fails here, the directory goes
    [[ -n $follow ]] && kill -INT "$follow" 2>/dev/null && wait "$follow" 2>/dev/null
    [[ -n $playerd ]] && kill -TERM "$playerd" 2>/dev/null && wait "$playerd" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

socket=$work/socket
"$bin/playerd" --socket "$socket" --output "$output" --music-dir "$PWD/Fixtures" --state-file "$work/state" \
    --library none --playlist-dir "$work/playlists" --log-level warning &
playerd=$!

"$bin/playerctl" --socket "$socket" wait ready --timeout 10s
"$bin/playerctl" --socket "$socket" play Fixtures/stereo-44k-cbr.mp3 Fixtures/tagged-id3v24.mp3
"$bin/playerctl" --socket "$socket" status --follow &
follow=$!
"$bin/playerctl" --socket "$socket" wait stop --timeout 60s
