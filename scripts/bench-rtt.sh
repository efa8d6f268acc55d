#!/usr/bin/env bash
# bench-rtt.sh: the `status` round trip of playerd and mpd, both stopped with an empty queue, side by
# side in one run: bench.sh's section D figure ("status p50 with 0 queued"), alone and quickly.
#
# One playerd (release, null output) and one mpd (null output) start on private sockets; then
# RTT_ROUNDS times, alternating which goes first, `daemon-bench roundtrip SOCKET RTT_REQUESTS` asks
# each daemon, unpinned, and then with the daemon's threads and daemon-bench on one core (taskset),
# which leaves out the cost of waking a thread on the other core. Prints the p50 of every run and the
# medians, min and max of the runs, and the ratio of the medians (playerd / mpd).
# Knobs (environment): RTT_ROUNDS (9), RTT_REQUESTS (2000), RTT_CORE (1), RTT_BUILD (1; 0 skips the
# release build), RTT_MODES ("unpinned pinned").
set -euo pipefail

ROUNDS=${RTT_ROUNDS:-9}
REQUESTS=${RTT_REQUESTS:-2000}
CORE=${RTT_CORE:-1}
MODES=${RTT_MODES:-unpinned pinned}

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BENCH_NAME=bench-rtt
# shellcheck source=bench-common.sh
source scripts/bench-common.sh

type -P mpd >/dev/null || die "mpd is not installed (apt-get install mpd)"
if [[ ${RTT_BUILD:-1} != 0 ]]; then
    build_release playerd daemon-bench
fi
PLAYERD="$RELEASE/playerd"
DB="$RELEASE/daemon-bench"

DIR="$TMP/daemons"
mkdir -p "$DIR/music" "$DIR/mpd" "$DIR/playerd"
cat >"$DIR/mpd/mpd.conf" <<CONF
music_directory "$DIR/music"
db_file "$DIR/mpd/db"
bind_to_address "$DIR/mpd/socket"
pid_file "$DIR/mpd/pid"
log_file "$DIR/mpd/log"
zeroconf_enabled "no"
audio_output {
    type "null"
    name "null"
    sync "yes"
}
CONF

# start SOCKET COMMAND...: starts a daemon through daemon-bench (which waits for its greeting); prints
# its pid.
start() {
    local out
    out=$("$DB" start "$1" -- "${@:2}") || die "${2##*/} did not start: $out"
    kv pid <<<"$out" | tee -a "$KILL_PIDS"
}
PLAYERD_SOCKET="$DIR/playerd/socket"
MPD_SOCKET="$DIR/mpd/socket"
MINE_PID=$(start "$PLAYERD_SOCKET" "$PLAYERD" --socket "$PLAYERD_SOCKET" --output null \
    --music-dir "$DIR/music" --library "$DIR/playerd/library.db" --state-file none --log-level warning)
PEER_PID=$(start "$MPD_SOCKET" /usr/bin/mpd --no-daemon "$DIR/mpd/mpd.conf")
for socket in "$PLAYERD_SOCKET" "$MPD_SOCKET"; do
    "$DB" fill "$socket" 0 unused >/dev/null || die "clearing the queue on $socket failed"
done

# affinity CPUS: puts every thread of both daemons on CPUS.
affinity() {
    taskset -a -p -c "$1" "$MINE_PID" >/dev/null
    taskset -a -p -c "$1" "$PEER_PID" >/dev/null
}
ALL_CPUS="0-$(($(nproc) - 1))"
mkdir -p "$TMP/samples"
for mode in $MODES; do
    pin=()
    if [[ $mode == pinned ]]; then
        affinity "$CORE"
        pin=(taskset -c "$CORE")
    else
        affinity "$ALL_CPUS"
    fi
    for ((i = 0; i < ROUNDS; i++)); do
        for who in $( ((i % 2)) && echo "peer mine" || echo "mine peer"); do
            socket=$([[ $who == mine ]] && echo "$PLAYERD_SOCKET" || echo "$MPD_SOCKET")
            p50=$("${pin[@]}" "$DB" roundtrip "$socket" "$REQUESTS" | kv roundtrip_p50_us)
            printf '%s\n' "$p50" >>"$TMP/samples/$mode-$who"
        done
    done
done
affinity "$ALL_CPUS"

printf '%-9s %-8s %-22s %s\n' mode daemon "p50 us: median (min-max)" runs
for mode in $MODES; do
    for who in mine peer; do
        name=$([[ $who == mine ]] && echo playerd || echo mpd)
        printf '%-9s %-8s %-22s %s\n' "$mode" "$name" "$(fmt %.1f "$(stats <"$TMP/samples/$mode-$who")")" \
            "$(tr '\n' ' ' <"$TMP/samples/$mode-$who")"
    done
    awk -v a="$(stats <"$TMP/samples/$mode-mine" | cut -d' ' -f1)" \
        -v b="$(stats <"$TMP/samples/$mode-peer" | cut -d' ' -f1)" \
        -v m="$mode" 'BEGIN { printf "%-9s ratio    %.3f (playerd / mpd, medians of %d runs)\n", m, a / b, '"$ROUNDS"' }'
done
