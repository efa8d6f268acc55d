#!/usr/bin/env bash
# The soak: a real playerd (paced null output, private socket, state file and music tree in a temporary
# directory) against ~50 hostile clients for SECONDS (default 150), while two observers time `status`.
# It fails if an observer waits more than 1 s, if a hostile client misses an answer it is owed, if
# playerd dies, answers a fresh client wrongly, keeps more than 8 MB of the storm's memory, or does not
# stop cleanly on SIGTERM. The soak itself is `daemon-bench soak` (Sources/daemon-bench/Soak.swift).
#   scripts/soak.sh [SECONDS]
#   SOAK_SEED=N         repeat a run (every run prints its seed)
#   SOAK_CLIENTS=N      hostile clients (default 48; the daemon allows 64 clients)
#   SOAK_CONFIGURATION  debug (the default: what scripts/test.sh built) or release
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-150}
configuration=${SOAK_CONFIGURATION:-debug}
if ! command -v swift >/dev/null && [[ -x /opt/swift/usr/bin/swift ]]; then
    PATH="/opt/swift/usr/bin:$PATH"
fi

mkdir -p .build
for product in playerd daemon-bench; do
    if ! swift build -c "$configuration" --product "$product" >.build/soak-build.log 2>&1; then
        cat .build/soak-build.log >&2
        echo "soak: building $product failed" >&2
        exit 1
    fi
done
bin=$(swift build -c "$configuration" --show-bin-path)

# Leave no process behind: job control gives each background job its own process group, which the
# trap kills whole.
set -m
tmp=$(mktemp -d /tmp/playerd-soak.XXXXXX)
cleanup() {
    local rc=$? pids
    trap - EXIT INT TERM HUP
    pids=$(jobs -p)
    if [[ -n $pids ]]; then
        # shellcheck disable=SC2046 # one "-PGID" word per job
        kill -KILL -- $(sed 's/^/-/' <<<"$pids") 2>/dev/null || true
        { wait; } 2>/dev/null || true
    fi
    rm -rf "$tmp"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# A small tree: songs at the top and two levels down, one of another rate and channel count, one with
# a name that is not ASCII.
music="$tmp/music"
mkdir -p "$music/sub/deeper"
cp Fixtures/one-second.mp3 Fixtures/stereo-44k-cbr.mp3 "$music/"
cp Fixtures/gapless-a.mp3 Fixtures/gapless-b.mp3 "$music/sub/"
cp Fixtures/tagged-id3v24.mp3 "$music/sub/Ünïcødé — ☃.mp3"
cp Fixtures/mono-48k-vbr.mp3 "$music/sub/deeper/"

# A queue limit far below the default, so that hostile adds run into it too.
"$bin/playerd" --socket "$tmp/socket" --output null --music-dir "$music" --state-file "$tmp/state" --library "$tmp/library.db" --playlist-dir "$tmp/playlists" \
    --max-queue-length 2000 2>"$tmp/playerd.log" &
playerd=$!

status=0
options=(--seconds "$seconds")
[[ -z ${SOAK_SEED:-} ]] || options+=(--seed "$SOAK_SEED")
[[ -z ${SOAK_CLIENTS:-} ]] || options+=(--clients "$SOAK_CLIENTS")
"$bin/daemon-bench" soak "$tmp/socket" "$playerd" "$music" "${options[@]}" &
wait "$!" || status=$?

# Stop playerd as systemd would: SIGTERM, then it must be gone within 10 s, with status 0 and its
# socket file removed.
if kill -TERM "$playerd" 2>/dev/null; then
    (sleep 10 && kill -KILL "$playerd" 2>/dev/null) &
    watchdog=$!
    stopped=0
    wait "$playerd" || stopped=$?
    kill -- -"$watchdog" 2>/dev/null || true
    { wait "$watchdog"; } 2>/dev/null || true  # reaped here, so job control does not report it
    if ((stopped != 0)); then
        echo "soak: playerd ended with status $stopped after SIGTERM (137: killed after 10 s)" >&2
        status=1
    elif [[ -e $tmp/socket ]]; then
        echo "soak: playerd left its socket file behind" >&2
        status=1
    fi
else
    echo "soak: playerd was gone before the end" >&2
    status=1
fi
if ((status != 0)); then
    cp "$tmp/playerd.log" .build/soak-playerd.log
    echo "soak: playerd's log is in .build/soak-playerd.log; its first lines about a crash, if any:" >&2
    grep -m 5 -E 'Fatal error|Crash|fault|Illegal' .build/soak-playerd.log >&2 || true
fi
exit "$status"
