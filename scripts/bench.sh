#!/usr/bin/env bash
# bench.sh (`make bench`): playerd measured side by side with its peers, Debian's mpg123 and mpd, in
# one run, and a table of ratios. BENCHMARKS.md says how each figure is measured and shows a full run.
#
#   0. Installs mpg123, mpd, mpc, sox, lame, pv and valgrind with apt-get where missing; builds playerd, playfile,
#      daemon-bench and engine-bench as `make release` does; makes the test audio in .bench/ unless it
#      is there (sox with a fixed seed, lame: 60 s and 10 min, CBR 320, CBR 128, VBR V2).
#   A. Throughput: playfile into the unpaced null output against `mpg123 -t`, the 10-minute files; the
#      CPU that decoding the CBR 320 file costs each, the floor of any libmpg123 player's CPU; and the
#      instructions each executes decoding the 1-minute file, counted by callgrind (exact, repeatable).
#   B. Start to ready (spawn to the greeting on the socket) and idle RSS, each daemon started afresh.
#   C. Then one playerd (null output) and one mpd (null output, sync "yes", libmpg123: mad disabled),
#      each on private sockets and files, play the 10-minute file: `status` round trip (10,000 requests
#      on one connection), RSS while playing, and CPU while playing in real time (from /proc, over
#      windows of BENCH_CPU_SECONDS, at the same time as mpg123 paced into pv, the bare player).
#   D. Growth, both daemons stopped: status round trip (BENCH_ROUNDS runs of 2,000) and RSS with 0,
#      1,000, 10,000 and 100,000 queue entries, and the time to add them (command lists of 1,000 adds);
#      then, on fresh daemons, 1,000 idle clients connected (memory per client, and one active client's
#      round trip meanwhile).
#   E. `play` to the first frame at the output, and `pause` to the last: playerd writing WAV to a
#      FIFO, mpd its fifo output, each read by engine-bench as fast as it is filled.
#   F. One `add` of a directory of 20,000 MP3s (20 artists x 50 albums x 20 songs, hard links to one
#      file): playerd walks the tree, mpd reads its database (updated beforehand); meanwhile a second
#      client's `repeat 0` and `status` round trips (mpd's null output has no mixer for `setvol`).
#      The tree exists only during F.
#   G. The music library (scripts/bench-library.sh, its own table, also in .bench/bench-library.txt):
#      scans, no-op and 1,000-file updates, start to ready and RSS at 20,000 and 200,000 songs (and
#      1,000,000 with `make bench-library-million`), search, list, find, lsinfo, listallinfo, search
#      and list title of every song, add from the library, on generated trees kept in .bench/.library-N;
#      with a full scan of a mixed tree (MP3, FLAC, Ogg Vorbis, Opus in equal parts).
#   H. The formats (scripts/bench-formats.sh, its own table, also in .bench/bench-formats.txt): each
#      decoder's throughput against its reference tool (mpg123 -s, flac -d, oggdec, opusdec) and the
#      CPU of playing each format in real time against mpd's, on the same 3 minutes in every format.
#   I. The web remote (scripts/bench-web.sh, its own table, also in .bench/bench-web.txt): CPU while
#      playing with `--http` against without, no page open, and what one open page adds against what
#      mpd's idle client (`mpc idleloop`) adds.
#   J. Internet radio (scripts/bench-radio.sh, its own table, also in .bench/bench-radio.txt): `play` of a
#      queued URL of a loopback station to the first audio at a FIFO, and the CPU and RSS of streaming
#      it, against mpd on the same station.
# Every measurement alternates playerd and the peer (or runs them at the same moment: CPU). The table
# is printed and written to .bench/bench.txt; no process is left behind, also on Ctrl-C.
# Knobs (environment): BENCH_ROUNDS (5), BENCH_CPU_ROUNDS (3), BENCH_CPU_SECONDS (35),
# BENCH_REQUESTS (10000), BENCH_LATENCY_ITERATIONS (60), BENCH_CLIENTS (1000).
set -euo pipefail

ROUNDS=${BENCH_ROUNDS:-5}
CPU_ROUNDS=${BENCH_CPU_ROUNDS:-3}
CPU_SECONDS=${BENCH_CPU_SECONDS:-35}
REQUESTS=${BENCH_REQUESTS:-10000}
LATENCY_ITERATIONS=${BENCH_LATENCY_ITERATIONS:-60}
CLIENTS=${BENCH_CLIENTS:-1000}
QUEUE_SIZES=(0 1000 10000 100000)

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BENCH_NAME=bench
# shellcheck source=bench-common.sh
source scripts/bench-common.sh
started=$(date +%s)

# --- 0: tools, build, audio ---------------------------------------------------
need_tools mpg123 mpd mpc sox lame pv valgrind flac
# Both daemons' music directory: hard links to the test audio only. .bench also holds the library
# benchmark's trees (G), which each daemon would otherwise spend minutes scanning at every start, with
# the CPU, RSS and database of that scan counted in this table's figures. F adds its tree here.
MUSIC="$BENCH/daemon-music"
SCRATCH+=("$MUSIC")
LIBRARY="$MUSIC/library"
LIBRARY_SONGS=20000
rm -rf "$MUSIC" "$BENCH/library"
mkdir -p "$MUSIC"
scripts/setup.sh build >&2
build_release playerd playfile daemon-bench engine-bench
PLAYERD="$RELEASE/playerd"
PLAYFILE="$RELEASE/playfile"
DB="$RELEASE/daemon-bench"
EB="$RELEASE/engine-bench"

LONG_FILES=(
    "CBR 320|ten-minutes-cbr320.mp3|-b 320"
    "CBR 128|ten-minutes-cbr128.mp3|-b 128"
    "VBR V2|ten-minutes-vbr-v2.mp3|-V 2"
)
for entry in "${LONG_FILES[@]}"; do
    IFS='|' read -r _ name opts <<<"$entry"
    # shellcheck disable=SC2086 # opts is a word list like "-b 320"
    make_mp3 600 "$BENCH/$name" $opts
done
make_mp3 60 "$BENCH/one-minute-cbr320.mp3" -b 320
LONG=ten-minutes-cbr320.mp3
SHORT=one-minute-cbr320.mp3
for name in "$LONG" "$SHORT"; do ln "$BENCH/$name" "$MUSIC/$name"; done

# --- recording ----------------------------------------------------------------
# Samples go to $TMP/samples/NAME, one a line; rows name them.
mkdir -p "$TMP/samples"
add() { printf '%s\n' "$2" >>"$TMP/samples/$1"; }
summary() { stats <"$TMP/samples/$1"; }
ROWS=()
NOTES=()
# row FIGURE FORMAT MINE PEER-NAME PEER TARGET: a table row from two sample sets; the ratio is the
# medians' mine / peer's.
row() {
    local figure=$1 f=$2 mine peer ratio
    mine=$(summary "$3")
    peer=$(summary "$5")
    ratio=$(awk -v a="${mine%% *}" -v b="${peer%% *}" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }')
    ROWS+=("$figure|$(fmt "$f" "$mine")|$4|$(fmt "$f" "$peer")|$ratio|$6")
}

# --- daemons ------------------------------------------------------------------
DAEMONS="$TMP/daemons"
mkdir -p "$DAEMONS"
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
zeroconf_enabled "no"
max_connections "$((CLIENTS + 100))"
max_playlist_length "200000"
max_command_list_size "65536"
decoder {
    plugin "mad"
    enabled "no"
}
decoder {
    plugin "wildmidi"
    enabled "no"
}
input {
    plugin "curl"
    enabled "no"
}
audio_output {
    type "$2"
    name "$2"
    $3
}
CONF
    printf '%s\n' "$dir/mpd.conf"
}
MPD_NULL=$(mpd_conf null null 'sync "yes"')
MPD_FIFO=$(mpd_conf fifo fifo "path \"$DAEMONS/fifo/fifo\"")
mkfifo "$DAEMONS/fifo/fifo"
mkdir -p "$DAEMONS/playerd"
mkfifo "$DAEMONS/playerd/fifo"
ulimit -n "$(ulimit -Hn)" # room for the idle clients, in this shell and the daemons it starts

# start NAME SOCKET COMMAND...: starts a daemon through daemon-bench, which times it until its socket
# answers and then reads its RSS; prints daemon-bench's report ("pid N" among it).
start() {
    local out
    rm -f "$2"
    out=$("$DB" start "$2" -- "${@:3}") || die "$1 did not start: $out"
    kv pid <<<"$out" >>"$KILL_PIDS"
    printf '%s\n' "$out"
}
# stop PID: SIGTERM, and wait until it is gone (it is daemon-bench's child, not ours).
stop() {
    kill -TERM "$1" 2>/dev/null || return 0
    for _ in $(seq 250); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.02; done
    kill -KILL "$1" 2>/dev/null || true
}
PLAYERD_SOCKET="$DAEMONS/playerd/socket"
MPD_SOCKET="$DAEMONS/null/socket"
start_playerd() {
    start playerd "$PLAYERD_SOCKET" "$PLAYERD" --socket "$PLAYERD_SOCKET" --output "${1:-null}" \
        --music-dir "$MUSIC" --library "$DAEMONS/playerd/library.db" --state-file none --log-level warning \
        --max-clients "$((CLIENTS + 100))"
}
start_mpd() { start mpd "$2" /usr/bin/mpd --no-daemon "$1"; }
# ready_mpd SOCKET: waits for mpd's database to hold the test audio.
ready_mpd() { run mpc --host "$1" -q update --wait; }
# playing NAME SOCKET: fails the run unless the daemon says it is playing (a figure of a daemon that
# stopped would be wrong, not slow).
playing() {
    local status
    status=$(mpc --host "$2" status 2>&1) || die "$1 does not answer: $status"
    grep -q '^\[playing\]' <<<"$status" || die "$1 is not playing: $(tr '\n' ' ' <<<"$status")"
}
# play SOCKET SONG: the queue holds SONG alone, on repeat, playing.
play() {
    run mpc --host "$1" -q clear
    run mpc --host "$1" -q add "$2"
    run mpc --host "$1" -q repeat on
    run mpc --host "$1" -q play
}

# --- A: throughput, decode cost --------------------------------------------------
# measure WHO FILE CMD...: one run; records its real-time multiple, and its CPU (user + sys) as a
# percentage of the audio's 600 s.
measure() {
    local who=$1 name=$2 times
    shift 2
    times=$(cpu_time "$@")
    add "tp-$who-$name" "$(awk '{ printf "%.0f", 600 / $1 }' <<<"$times")"
    add "dc-$who-$name" "$(awk '{ printf "%.4f", 100 * ($2 + $3) / 600 }' <<<"$times")"
}
for entry in "${LONG_FILES[@]}"; do
    IFS='|' read -r label name _ <<<"$entry"
    log "A: throughput, $label ($ROUNDS rounds)"
    cpu_time mpg123 -q -t "$BENCH/$name" >/dev/null # warm-ups
    cpu_time "$PLAYFILE" --quiet --output null:unpaced "$BENCH/$name" >/dev/null
    for ((i = 0; i < ROUNDS; i++)); do
        for who in $( ((i % 2)) && echo "peer mine" || echo "mine peer"); do
            if [[ $who == mine ]]; then
                measure mine "$name" "$PLAYFILE" --quiet --output null:unpaced "$BENCH/$name"
            else
                measure peer "$name" mpg123 -q -t "$BENCH/$name"
            fi
        done
    done
    row "throughput $label (x real time)" %.0f "tp-mine-$name" "mpg123 -t" "tp-peer-$name" ">= 1.0"
done
row "decoding CBR 320 (% of a core)" %.3f "dc-mine-$LONG" "mpg123 -t" "dc-peer-$LONG" ""
# Instructions are counted exactly, where times on a shared machine vary by 10 % from run to run.
log "A: instructions to decode the 1-minute file (callgrind)"
instructions() {
    run valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
        awk '/Collected :/ { printf "%.2f\n", $4 / 1e6 }'
}
add ir-mine "$(instructions "$PLAYFILE" --quiet --output null:unpaced "$BENCH/$SHORT")"
add ir-peer "$(instructions mpg123 -q -t "$BENCH/$SHORT")"
row "instructions, 1 min CBR 320 (millions)" %.1f ir-mine "mpg123 -t" ir-peer ""

# --- B: start to ready, idle RSS --------------------------------------------------
log "B: start to ready and idle RSS ($ROUNDS rounds, after a warm-up)"
for ((i = 0; i <= ROUNDS; i++)); do
    out=$(start_playerd)
    stop "$(kv pid <<<"$out")"
    if ((i > 0)); then
        add start-mine "$(kv start_to_ready_ms <<<"$out")"
        add idle-mine "$(awk '{ print $1 / 1024 }' <<<"$(kv idle_rss_kb <<<"$out")")"
    fi
    out=$(start_mpd "$MPD_NULL" "$MPD_SOCKET")
    stop "$(kv pid <<<"$out")"
    if ((i > 0)); then
        add start-peer "$(kv start_to_ready_ms <<<"$out")"
        add idle-peer "$(awk '{ print $1 / 1024 }' <<<"$(kv idle_rss_kb <<<"$out")")"
    fi
done
row "start to ready (ms)" %.1f start-mine mpd start-peer "<= 0.25"
row "idle RSS (MB)" %.1f idle-mine mpd idle-peer "<= 0.25"

# --- C: playing: round trip, RSS, CPU ------------------------------------------------
MINE_PID=$(kv pid <<<"$(start_playerd)")
PEER_PID=$(kv pid <<<"$(start_mpd "$MPD_NULL" "$MPD_SOCKET")")
ready_mpd "$MPD_SOCKET"
play "$PLAYERD_SOCKET" "$LONG"
play "$MPD_SOCKET" "$LONG"
sleep 2
log "C: status round trip while playing ($ROUNDS x $REQUESTS requests)"
for ((i = 0; i < ROUNDS; i++)); do
    for who in $( ((i % 2)) && echo "peer mine" || echo "mine peer"); do
        socket=$([[ $who == mine ]] && echo "$PLAYERD_SOCKET" || echo "$MPD_SOCKET")
        out=$("$DB" roundtrip "$socket" "$REQUESTS")
        add "rt50-$who" "$(kv roundtrip_p50_us <<<"$out")"
        add "rt99-$who" "$(kv roundtrip_p99_us <<<"$out")"
        add "rtmax-$who" "$(kv roundtrip_max_us <<<"$out")"
    done
done
row "status round trip p50 (us)" %.1f rt50-mine mpd rt50-peer "<= 1.0"
row "status round trip p99 (us)" %.1f rt99-mine mpd rt99-peer "<= 1.0"
row "status round trip max (us)" %.0f rtmax-mine mpd rtmax-peer ""

log "C: CPU while playing in real time ($CPU_ROUNDS windows of $CPU_SECONDS s, all at once)"
mpg123 -q -s --loop -1 "$BENCH/$LONG" | pv -q -L 176400 >/dev/null &
sleep 5
BARE_PID=$(pgrep -n -x mpg123) || die "mpg123 did not start"
stolen() { awk '/^cpu / { print $9 }' /proc/stat; }
steal0=$(stolen)
t_start=$(date +%s%N)
for ((i = 0; i < CPU_ROUNDS; i++)); do
    playing playerd "$PLAYERD_SOCKET" && playing mpd "$MPD_SOCKET"
    t0=$(date +%s%N)
    a0=$(cpu_threads "$MINE_PID") && b0=$(cpu_threads "$PEER_PID") && c0=$(cpu_threads "$BARE_PID")
    sleep "$CPU_SECONDS"
    a1=$(cpu_threads "$MINE_PID") && b1=$(cpu_threads "$PEER_PID") && c1=$(cpu_threads "$BARE_PID")
    t1=$(date +%s%N)
    playing playerd "$PLAYERD_SOCKET" && playing mpd "$MPD_SOCKET"
    kill -0 "$BARE_PID" 2>/dev/null || die "mpg123 stopped playing"
    pct() { awk -v c="$(cpu_spent "$1" "$2")" -v w="$((t1 - t0))" 'BEGIN { printf "%.4f", 100 * c / w }'; }
    add cpu-mine "$(pct "$a0" "$a1")"
    add cpu-peer "$(pct "$b0" "$b1")"
    add cpu-bare "$(pct "$c0" "$c1")"
    add rss-play-mine "$(awk '{ print $1 / 1024 }' <<<"$("$DB" rss "$MINE_PID" | kv rss_kb)")"
    add rss-play-peer "$(awk '{ print $1 / 1024 }' <<<"$("$DB" rss "$PEER_PID" | kv rss_kb)")"
done
steal_pct=$(awk -v s="$(($(stolen) - steal0))" -v w="$(($(date +%s%N) - t_start))" -v n="$(nproc)" \
    'BEGIN { printf "%.1f", 100 * s * 10000000 / (w * n) }')
kill %?mpg123 2>/dev/null || true
row "CPU while playing (% of a core)" %.3f cpu-mine mpd cpu-peer "<= 0.5"
row "CPU while playing (% of a core)" %.3f cpu-mine "mpg123 paced by pv" cpu-bare "<= 1.3"
row "RSS playing a 10-min file (MB)" %.1f rss-play-mine mpd rss-play-peer ""

# --- D: growth ----------------------------------------------------------------------
run mpc --host "$PLAYERD_SOCKET" -q stop
run mpc --host "$MPD_SOCKET" -q stop
log "D: growth: ${QUEUE_SIZES[*]} queue entries"
for n in "${QUEUE_SIZES[@]}"; do
    for who in mine peer; do
        socket=$([[ $who == mine ]] && echo "$PLAYERD_SOCKET" || echo "$MPD_SOCKET")
        pid=$([[ $who == mine ]] && echo "$MINE_PID" || echo "$PEER_PID")
        out=$("$DB" fill "$socket" "$n" "$SHORT" 1000) || die "filling $who's queue with $n: $out"
        add "fill$n-$who" "$(kv fill_ms <<<"$out")"
        add "qrss$n-$who" "$(awk '{ print $1 / 1024 }' <<<"$("$DB" rss "$pid" | kv rss_kb)")"
    done
    # The round trips alternate between the daemons, ROUNDS runs of 2,000 each.
    for ((i = 0; i < ROUNDS; i++)); do
        for who in $( ((i % 2)) && echo "peer mine" || echo "mine peer"); do
            socket=$([[ $who == mine ]] && echo "$PLAYERD_SOCKET" || echo "$MPD_SOCKET")
            add "q$n-$who" "$("$DB" roundtrip "$socket" 2000 | kv roundtrip_p50_us)"
        done
    done
    row "status p50 with $n queued (us)" %.1f "q$n-mine" mpd "q$n-peer" ""
    row "RSS with $n queued (MB)" %.1f "qrss$n-mine" mpd "qrss$n-peer" ""
    ((n == 0)) || row "adding $n entries (ms)" %.0f "fill$n-mine" mpd "fill$n-peer" ""
done
flat=$(awk -v a="$(summary q0-mine | cut -d' ' -f1)" -v b="$(summary q100000-mine | cut -d' ' -f1)" \
    'BEGIN { printf "%+.0f %%", 100 * (b - a) / a }')
stop "$MINE_PID"
stop "$PEER_PID"
# On freshly started daemons: memory a cleared queue gave back would absorb the clients' and hide it.
log "D: $CLIENTS idle clients"
for who in mine peer; do
    if [[ $who == mine ]]; then
        socket=$PLAYERD_SOCKET pid=$(kv pid <<<"$(start_playerd)")
    else
        socket=$MPD_SOCKET pid=$(kv pid <<<"$(start_mpd "$MPD_NULL" "$MPD_SOCKET")")
    fi
    out=$("$DB" clients "$socket" "$CLIENTS" "$pid" "$REQUESTS") || die "$CLIENTS clients on $who: $out"
    add "client-$who" "$(awk '{ print $1 / 1024 }' <<<"$(kv per_client_bytes <<<"$out")")"
    add "crt-$who" "$(kv roundtrip_p50_us <<<"$out")"
    stop "$pid"
done
row "memory per idle client (KB)" %.1f client-mine mpd client-peer "< 64 KB"
row "status p50, $CLIENTS clients idle (us)" %.1f crt-mine mpd crt-peer ""

# --- E: command to output ----------------------------------------------------------
log "E: play and pause to the output ($LATENCY_ITERATIONS times each)"
latency() {
    local out
    out=$("$EB" daemon-latency "$2" "$3" "$SHORT" "$LATENCY_ITERATIONS" "$4")
    awk -v who="$1" '$1 == "latency" { print $3 > (ENVIRON["TMP"] "/samples/" $2 "50-" who) ;
        print $4 > (ENVIRON["TMP"] "/samples/" $2 "99-" who) }' <<<"$out"
}
export TMP
pid=$(kv pid <<<"$(start_playerd "wav:$DAEMONS/playerd/fifo")")
latency mine "$PLAYERD_SOCKET" "$DAEMONS/playerd/fifo" 44
stop "$pid"
pid=$(kv pid <<<"$(start_mpd "$MPD_FIFO" "$DAEMONS/fifo/socket")")
ready_mpd "$DAEMONS/fifo/socket"
latency peer "$DAEMONS/fifo/socket" "$DAEMONS/fifo/fifo" 0
stop "$pid"
row "play to first frame p50 (ms)" %.2f play50-mine mpd play50-peer "<= 0.5"
row "play to first frame p99 (ms)" %.2f play99-mine mpd play99-peer ""
row "pause to last frame p50 (ms)" %.2f pause50-mine mpd pause50-peer ""

# --- F: adding a large directory ----------------------------------------------------
log "F: add of a directory of $LIBRARY_SONGS songs ($ROUNDS rounds), another client's round trips meanwhile"
make_mp3 5 "$BENCH/five-seconds-cbr128.mp3" -b 128
mkdir -p "$LIBRARY/artist-01/album-01"
for song in $(seq -w 1 20); do ln "$BENCH/five-seconds-cbr128.mp3" "$LIBRARY/artist-01/album-01/$song.mp3"; done
for album in $(seq -w 2 50); do cp -al "$LIBRARY/artist-01/album-01" "$LIBRARY/artist-01/album-$album"; done
for artist in $(seq -w 2 20); do cp -al "$LIBRARY/artist-01" "$LIBRARY/artist-$artist"; done
MINE_PID=$(kv pid <<<"$(start_playerd)")
PEER_PID=$(kv pid <<<"$(start_mpd "$MPD_NULL" "$MPD_SOCKET")")
ready_mpd "$MPD_SOCKET"
for ((i = 0; i < ROUNDS; i++)); do
    for who in $( ((i % 2)) && echo "peer mine" || echo "mine peer"); do
        socket=$([[ $who == mine ]] && echo "$PLAYERD_SOCKET" || echo "$MPD_SOCKET")
        out=$("$DB" add-dir "$socket" library "$LIBRARY_SONGS") || die "adding the library on $who: $out"
        add "adddir-$who" "$(kv add_ms <<<"$out")"
        add "addwait50-$who" "$(awk '{ print $1 / 1000 }' <<<"$(kv others_p50_us <<<"$out")")"
        add "addwaitmax-$who" "$(awk '{ print $1 / 1000 }' <<<"$(kv others_max_us <<<"$out")")"
    done
done
stop "$MINE_PID"
stop "$PEER_PID"
rm -rf "$LIBRARY"
row "add of a $LIBRARY_SONGS-song directory (ms)" %.0f adddir-mine mpd adddir-peer "< 2000 ms"
row "another client's wait during it, p50 (ms)" %.3f addwait50-mine mpd addwait50-peer ""
row "another client's wait during it, max (ms)" %.1f addwaitmax-mine mpd addwaitmax-peer "as when idle"

# --- the table --------------------------------------------------------------------------
NOTES+=("Ratio: playerd / peer; below 1 is better, except for throughput, where above 1 is.")
NOTES+=("Status round trip flat with the queue: 0 -> 100,000 entries changed playerd's p50 by $flat (target within 10 %).")
NOTES+=("Hypervisor steal during the CPU windows: $steal_pct % of the machine.")
NOTES+=("Decoding = CPU (user + sys) of decoding the 10-minute CBR 320 file as fast as possible, as % of its 600 s:")
NOTES+=("the least any libmpg123 player can spend playing it; half of mpd's CPU while playing is $(awk \
    -v m="$(summary cpu-peer | cut -d' ' -f1)" 'BEGIN { printf "%.3f", m / 2 }') % of a core.")
NOTES+=("Took $(($(date +%s) - started)) s. Peers: $(mpd --version | head -n 1); $(mpg123 --version | head -n 1).")
print_table "$(uname -r), $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)" \
    "figure|playerd median (min-max)|peer|peer median (min-max)|ratio|target"

# --- G: the music library ---------------------------------------------------------------
log "G: the music library (scripts/bench-library.sh)"
BENCH_SKIP_BUILD=1 run scripts/bench-library.sh

# --- H: the formats ------------------------------------------------------------------------
log "H: the formats (scripts/bench-formats.sh)"
BENCH_SKIP_BUILD=1 run scripts/bench-formats.sh

# --- I: the web remote ---------------------------------------------------------------------
log "I: the web remote (scripts/bench-web.sh)"
BENCH_SKIP_BUILD=1 run scripts/bench-web.sh

# --- J: internet radio -----------------------------------------------------------------------
log "J: internet radio (scripts/bench-radio.sh)"
BENCH_SKIP_BUILD=1 run scripts/bench-radio.sh
