#!/usr/bin/env bash
# Takes the README's pictures of the web remote, docs/web-remote-phone.png (390x844) and
# docs/web-remote-desktop.png (1280x800): a debug playerd (built here if missing) with --http on a free
# loopback port, on the browser tests' music tree (Tests/PlayerDaemonTests/python/web_music.py: songs
# with covers), playing a queue, photographed by headless chromium (web_screenshots.py, the venv's
# selenium). An explicit step, not run by the tests: run it after changing the page, look at the
# pictures, commit them. Needs `scripts/setup.sh test` (chromium, chromium-driver, .venv).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh test
if [[ ! -x .build/debug/playerd ]]; then
    swift build --product playerd
fi

scratch=$(mktemp -d /tmp/playerd-shots-XXXXXX)
daemon=
cleanup() {
    if [[ -n $daemon ]] && kill -0 "$daemon" 2>/dev/null; then
        kill "$daemon"
        wait "$daemon" || true
    fi
    rm -rf "$scratch"
}
trap cleanup EXIT

python=.venv/bin/python
tests=Tests/PlayerDaemonTests/python
"$python" "$tests/web_music.py" "$scratch/music" >/dev/null
port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
.build/debug/playerd --socket "$scratch/socket" --output null --music-dir "$scratch/music" \
    --library "$scratch/library.db" --playlist-dir "$scratch/playlists" --state-file none \
    --no-play-statistics --mpris off --http "127.0.0.1:$port" >"$scratch/playerd.log" 2>&1 &
daemon=$!
for _ in $(seq 100); do
    if mpc -h "$scratch/socket" status >/dev/null 2>&1 && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        break
    fi
    sleep 0.1
done
mpc -q -h "$scratch/socket" update --wait
mkdir -p docs
if ! "$python" "$tests/web_screenshots.py" "http://127.0.0.1:$port/" "$scratch/socket" docs; then
    echo "web-screenshots: failed; playerd's log:" >&2
    tail -20 "$scratch/playerd.log" >&2
    exit 1
fi
