#!/usr/bin/env bash
# bench-radio.sh (section J of `make bench`; alone: `make bench-radio`): internet radio, playerd against
# mpd 0.23 on the same local station. BENCHMARKS.md (section J) says how each figure is measured and
# shows a run.
#
# The station: Tests/RadioServer/radio_server.py on 127.0.0.1 serving /icy.mp3 — 60 s of the benchmark
# signal (sox, fixed seed) encoded by lame at CBR 128 kbit/s, 44.1 kHz, looped, in real time after a first
# burst of 64 KiB (as Icecast's burst-size), with an ICY title every 8192 bytes, changing every 5 s.
#   1. `play` of the queued URL to the first audio at the output: each daemon alone, its only output a
#      FIFO (playerd `wav:FIFO`, whose 44-byte header is skipped; mpd's fifo output), read by
#      engine-bench daemon-latency as fast as it is filled; BENCH_RADIO_ITERATIONS (20) times `stop`
#      then `play` — each `play` a new connection to the station.
#   2. CPU while streaming: both daemons at the same time, each on the paced null output (mpd: null,
#      sync "yes"), playing the station; BENCH_RADIO_ROUNDS (3) windows of BENCH_RADIO_SECONDS (20) s
#      after 5 s of playing, user + sys of every thread from /proc/PID/task/*/schedstat; RSS at the end.
# mpd decodes the stream with its default MP3 plugin (libmad: libmpg123's plugin has no stream input)
# and reads it with its curl input. Printed as ratios and written to .bench/bench-radio.txt; no process
# is left behind, also on Ctrl-C.
# Knobs (environment): BENCH_RADIO_ITERATIONS (20), BENCH_RADIO_ROUNDS (3), BENCH_RADIO_SECONDS (20),
# BENCH_SKIP_BUILD (1: use the release build as it is; bench.sh sets it).
set -euo pipefail

ITERATIONS=${BENCH_RADIO_ITERATIONS:-20}
ROUNDS=${BENCH_RADIO_ROUNDS:-3}
SECONDS_PER_WINDOW=${BENCH_RADIO_SECONDS:-20}

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BENCH_NAME=bench-radio
# shellcheck source=bench-common.sh
source scripts/bench-common.sh
started=$(date +%s)

# --- 0: tools, build, the station ---------------------------------------------------------
need_tools mpd mpc python3 sox lame
if [[ ${BENCH_SKIP_BUILD:-} != 1 ]]; then
    scripts/setup.sh build >&2
    build_release playerd engine-bench
fi
PLAYERD="$RELEASE/playerd"
EB="$RELEASE/engine-bench"
[[ -x $PLAYERD && -x $EB ]] || die "$PLAYERD or $EB is not built"
STATION_AUDIO="$BENCH/radio-one-minute-cbr128.mp3"
make_mp3 60 "$STATION_AUDIO" --cbr -b 128

python3 Tests/RadioServer/radio_server.py --audio "$STATION_AUDIO" --log "$TMP/radio.log" \
    >"$TMP/radio.out" 2>"$TMP/radio.err" &
for _ in $(seq 100); do
    grep -q '^PORT ' "$TMP/radio.out" 2>/dev/null && break
    sleep 0.1
done
PORT=$(awk '$1 == "PORT" { print $2 }' "$TMP/radio.out")
[[ -n $PORT ]] || die "the radio server did not start: $(cat "$TMP/radio.err")"
URL="http://127.0.0.1:$PORT/icy.mp3"

# --- daemons ------------------------------------------------------------------------------
MUSIC="$TMP/music"
DAEMONS="$TMP/daemons"
mkdir -p "$MUSIC" "$DAEMONS"
# mpd_conf NAME OUTPUT-TYPE [EXTRA-OUTPUT-LINES]: a private mpd configuration in $DAEMONS/NAME/.
mpd_conf() {
    local dir="$DAEMONS/$1"
    mkdir -p "$dir"
    cat >"$dir/mpd.conf" <<CONF
music_directory "$MUSIC"
db_file "$dir/db"
bind_to_address "$dir/socket"
pid_file "$dir/pid"
log_file "$dir/log"
state_file "$dir/state"
zeroconf_enabled "no"
audio_output {
    type "$2"
    name "$2"
    $3
}
CONF
    printf '%s\n' "$dir/mpd.conf"
}
# answers SOCKET: waits up to 10 s for the daemon on SOCKET to answer.
answers() {
    for _ in $(seq 100); do
        mpc --host "$1" status >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}
# start_playerd NAME OUTPUT: a playerd of its own in $DAEMONS/NAME, in the background; sets PID.
start_playerd() {
    local dir="$DAEMONS/$1"
    mkdir -p "$dir"
    "$PLAYERD" --socket "$dir/socket" --output "$2" --music-dir "$MUSIC" --library "$dir/library.db" \
        --state-file none --log-level warning 2>"$dir/stderr" &
    PID=$!
    answers "$dir/socket" || die "playerd did not start: $(cat "$dir/stderr")"
}
# start_mpd NAME CONF: mpd in the background; sets PID.
start_mpd() {
    /usr/bin/mpd --no-daemon "$2" 2>"$DAEMONS/$1/stderr" &
    PID=$!
    answers "$DAEMONS/$1/socket" || die "mpd did not start: $(cat "$DAEMONS/$1/stderr")"
}
# stop_daemon PID: SIGTERM, and wait until it is gone.
stop_daemon() {
    kill -TERM "$1" 2>/dev/null || return 0
    wait "$1" 2>/dev/null || true
}
# playing NAME SOCKET: fails the run unless the daemon says it is playing.
playing() {
    local status
    status=$(mpc --host "$2" status 2>&1) || die "$1 does not answer: $status"
    grep -q '^\[playing\]' <<<"$status" || die "$1 is not playing: $(tr '\n' ' ' <<<"$status")"
}

# --- recording (as in bench.sh) ---------------------------------------------------------------
mkdir -p "$TMP/samples"
add() { printf '%s\n' "$2" >>"$TMP/samples/$1"; }
summary() { stats <"$TMP/samples/$1"; }
ROWS=()
NOTES=()
row() {
    local figure=$1 f=$2 mine peer ratio
    mine=$(summary "$3")
    peer=$(summary "$5")
    ratio=$(awk -v a="${mine%% *}" -v b="${peer%% *}" 'BEGIN { if (a > 0 && b > 0) printf "%.3f", a / b; else print "-" }')
    ROWS+=("$figure|$(fmt "$f" "$mine")|$4|$(fmt "$f" "$peer")|$ratio|$6")
}

# --- 1: play to the first audio -------------------------------------------------------------
log "J1: play of the station to its first audio at a FIFO, $ITERATIONS times each"
# latency WHO SOCKET FIFO HEADER: engine-bench's play figures (ms) into the samples; its every play.
latency() {
    local out
    out=$("$EB" daemon-latency "$2" "$3" "$URL" "$ITERATIONS" "$4") || die "engine-bench on $1: $out"
    grep -q '^missed' <<<"$out" && die "$1: $(grep '^missed' <<<"$out") of $ITERATIONS plays gave no audio within 3 s"
    awk -v who="$1" '$1 == "latency" && $2 == "play" { print $3 > (ENVIRON["TMP"] "/samples/play50-" who) ;
        print $4 > (ENVIRON["TMP"] "/samples/play99-" who) }' <<<"$out"
}
export TMP
mkdir -p "$DAEMONS/playerd-fifo"
mkfifo "$DAEMONS/playerd-fifo/fifo"
start_playerd playerd-fifo "wav:$DAEMONS/playerd-fifo/fifo"
latency mine "$DAEMONS/playerd-fifo/socket" "$DAEMONS/playerd-fifo/fifo" 44
stop_daemon "$PID"
MPD_FIFO=$(mpd_conf mpd-fifo fifo "path \"$DAEMONS/mpd-fifo/fifo\"")
mkfifo "$DAEMONS/mpd-fifo/fifo"
start_mpd mpd-fifo "$MPD_FIFO"
latency peer "$DAEMONS/mpd-fifo/socket" "$DAEMONS/mpd-fifo/fifo" 0
stop_daemon "$PID"
row "play to first audio p50 (ms)" %.1f play50-mine mpd play50-peer "<= 1.0"
row "play to first audio p99 (ms)" %.1f play99-mine mpd play99-peer ""

# --- 2: CPU while streaming -------------------------------------------------------------------
log "J2: CPU while streaming, $ROUNDS windows of $SECONDS_PER_WINDOW s, both daemons at once"
start_playerd playerd-null null
MINE_PID=$PID MINE_SOCKET="$DAEMONS/playerd-null/socket"
start_mpd mpd-null "$(mpd_conf mpd-null null 'sync "yes"')"
PEER_PID=$PID PEER_SOCKET="$DAEMONS/mpd-null/socket"
for socket in "$MINE_SOCKET" "$PEER_SOCKET"; do
    run mpc --host "$socket" -q clear
    run mpc --host "$socket" -q add "$URL"
    run mpc --host "$socket" -q play
done
sleep 5
playing playerd "$MINE_SOCKET"
playing mpd "$PEER_SOCKET"
for ((i = 0; i < ROUNDS; i++)); do
    t0=$(date +%s%N)
    m0=$(cpu_threads "$MINE_PID") && p0=$(cpu_threads "$PEER_PID")
    sleep "$SECONDS_PER_WINDOW"
    m1=$(cpu_threads "$MINE_PID") && p1=$(cpu_threads "$PEER_PID")
    t1=$(date +%s%N)
    playing playerd "$MINE_SOCKET"
    playing mpd "$PEER_SOCKET"
    add cpu-mine "$(awk -v c="$(cpu_spent "$m0" "$m1")" -v w="$((t1 - t0))" 'BEGIN { printf "%.4f", 100 * c / w }')"
    add cpu-peer "$(awk -v c="$(cpu_spent "$p0" "$p1")" -v w="$((t1 - t0))" 'BEGIN { printf "%.4f", 100 * c / w }')"
done
rss() { awk '/^VmRSS:/ { print $2 / 1024 }' "/proc/$1/status"; }
add rss-mine "$(rss "$MINE_PID")"
add rss-peer "$(rss "$PEER_PID")"
title_mine=$(mpc --host "$MINE_SOCKET" -f '%title%' current)
title_peer=$(mpc --host "$PEER_SOCKET" -f '%title%' current)
stop_daemon "$MINE_PID"
stop_daemon "$PEER_PID"
row "CPU while streaming (% of a core)" %.3f cpu-mine mpd cpu-peer "<= 1.0"
row "RSS while streaming (MB)" %.1f rss-mine mpd rss-peer ""

NOTES+=("Ratio: the medians' playerd / mpd. The station: $URL (CBR 128 kbit/s, 44.1 kHz, 64 KiB burst, ICY every \
8192 bytes); its log counted $(grep -c '"target"' "$TMP/radio.log") connections.")
NOTES+=("Titles at the end: playerd \"$title_mine\", mpd \"$title_peer\".")
NOTES+=("Took $(($(date +%s) - started)) s. Peer: $(mpd --version | head -n 1).")
print_table "$(uname -r), $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)" \
    "figure|playerd median (min-max)|peer|peer median (min-max)|ratio|target"
