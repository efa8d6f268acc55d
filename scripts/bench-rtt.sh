#!/usr/bin/env bash
# bench-rtt.sh: the `status` round trip of playerd and mpd, both stopped with an empty queue, side by
# side in one run: bench.sh's section D figure ("status p50 with 0 queued"), alone and quickly.
#
# One playerd (release, null output) and one mpd (null output) start on private sockets; then
# RTT_ROUNDS times, rotating which goes first, `daemon-bench roundtrip SOCKET RTT_REQUESTS` asks each
# daemon, unpinned, and then with the daemons' threads and daemon-bench on one core (taskset), which
# leaves out the cost of waking a thread on the other core; mode `split` (run only when asked for)
# puts the daemons on one core and daemon-bench on the other, so that every round trip wakes both.
# Prints the p50 of every run; the median, min and max of the runs; the ratio of the medians
# (playerd / mpd); and the median of the rounds' own ratios, with the number of rounds in which
# playerd was the faster. The machine is noisy, and unpinned round trips are either fast (both ends on
# one core) or slow (a wake-up on the other core): compare many runs, 15 at least.
# Knobs (environment): RTT_ROUNDS (15), RTT_REQUESTS (2000), RTT_CORE (1), RTT_BUILD (1; 0 skips the
# release build), RTT_MODES ("unpinned pinned"), RTT_PLAYERD (the playerd binary; default the release
# build), RTT_BASELINE (another playerd binary, an older build say, measured in the same runs as
# "baseline").
set -euo pipefail

ROUNDS=${RTT_ROUNDS:-15}
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
PLAYERD=${RTT_PLAYERD:-$RELEASE/playerd}
DB="$RELEASE/daemon-bench"

DIR="$TMP/daemons"
mkdir -p "$DIR/music" "$DIR/mpd"
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
# start_playerd NAME BINARY: a playerd of its own in $DIR/NAME.
start_playerd() {
    mkdir -p "$DIR/$1"
    start "$DIR/$1/socket" "$2" --socket "$DIR/$1/socket" --output null --music-dir "$DIR/music" \
        --library "$DIR/$1/library.db" --state-file none --log-level warning
}

# The daemons measured: names, sockets and pids, in the order of the first round.
NAMES=(playerd mpd)
declare -A SOCKET PID
SOCKET[playerd]="$DIR/playerd/socket"
PID[playerd]=$(start_playerd playerd "$PLAYERD")
SOCKET[mpd]="$DIR/mpd/socket"
PID[mpd]=$(start "${SOCKET[mpd]}" /usr/bin/mpd --no-daemon "$DIR/mpd/mpd.conf")
if [[ -n ${RTT_BASELINE:-} ]]; then
    NAMES+=(baseline)
    SOCKET[baseline]="$DIR/baseline/socket"
    PID[baseline]=$(start_playerd baseline "$RTT_BASELINE")
fi
for name in "${NAMES[@]}"; do
    "$DB" fill "${SOCKET[$name]}" 0 unused >/dev/null || die "clearing $name's queue failed"
done

# affinity CPUS: puts every thread of every daemon on CPUS.
affinity() {
    for name in "${NAMES[@]}"; do
        taskset -a -p -c "$1" "${PID[$name]}" >/dev/null
    done
}
ALL_CPUS="0-$(($(nproc) - 1))"
OTHER_CORE=$((CORE == 0 ? 1 : 0))
mkdir -p "$TMP/samples"
for mode in $MODES; do
    pin=()
    case $mode in
        pinned)
            affinity "$CORE"
            pin=(taskset -c "$CORE")
            ;;
        split)
            affinity "$OTHER_CORE"
            pin=(taskset -c "$CORE")
            ;;
        *) affinity "$ALL_CPUS" ;;
    esac
    for ((i = 0; i < ROUNDS; i++)); do
        # Each round starts with the next daemon, so that none is always measured first.
        for ((j = 0; j < ${#NAMES[@]}; j++)); do
            name=${NAMES[$(((i + j) % ${#NAMES[@]}))]}
            p50=$("${pin[@]}" "$DB" roundtrip "${SOCKET[$name]}" "$REQUESTS" | kv roundtrip_p50_us)
            printf '%s\n' "$p50" >>"$TMP/samples/$mode-$name"
        done
    done
done
affinity "$ALL_CPUS"

median() { stats <"$TMP/samples/$1" | cut -d' ' -f1; }
printf '%-9s %-9s %-24s %s\n' mode daemon "p50 us: median (min-max)" "runs in order"
for mode in $MODES; do
    for name in "${NAMES[@]}"; do
        printf '%-9s %-9s %-24s %s\n' "$mode" "$name" "$(fmt %.1f "$(stats <"$TMP/samples/$mode-$name")")" \
            "$(tr '\n' ' ' <"$TMP/samples/$mode-$name")"
    done
    for name in "${NAMES[@]}"; do
        [[ $name == mpd ]] && continue
        # Also per round: the two runs of a round are measured one right after the other, so their
        # ratio leaves out most of the drift of a shared machine.
        paired=$(paste "$TMP/samples/$mode-$name" "$TMP/samples/$mode-mpd" |
            awk '{ print $1 / $2 } $1 < $2 { below++ } END { print "below " below + 0 > "/dev/stderr" }' \
                2>"$TMP/below" | stats | cut -d' ' -f1)
        awk -v a="$(median "$mode-$name")" -v b="$(median "$mode-mpd")" -v m="$mode" -v n="$name" -v r="$ROUNDS" \
            -v p="$paired" -v w="$(cut -d' ' -f2 <"$TMP/below")" \
            'BEGIN { printf "%-9s ratio     %s / mpd %.3f (medians of %d runs); per round %.3f, below mpd in %d\n",
                m, n, a / b, r, p, w }'
    done
done
