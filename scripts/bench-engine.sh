#!/usr/bin/env bash
# bench-engine.sh: measures PlayerCore's audio engine directly (no daemon) with
# the engine-bench program, next to Debian's mpd doing the same things.
#
# Run it as scripts/bench-engine.sh from any directory. It takes about 5
# minutes on 2 cores (about 1 minute more the first time, while it builds and
# makes the test audio).
#
# What it does:
#   0. Installs mpg123, sox and lame with apt-get if they are missing, builds
#      engine-bench as `make release` does (build_release) and makes
#      the test audio in .bench/ if it is not there yet: the same recipe and
#      file names as scripts/bench-audio.sh (1 minute and 10 minutes at CBR
#      320), so either script reuses the other's files.
#   A. Command to effect at the output, BENCH_ITERATIONS (200) times each, on
#      the paced null output in real time. engine-bench wraps the output and
#      time-stamps its calls with CLOCK_MONOTONIC:
#        play   handle(.play) on a stopped engine -> the first write()
#        pause  handle(.pause) while playing -> the output's pause()
#        seek   handle(.seek) while playing -> the first write() after drop()
#      Commands come after random waits, so they land at every phase of the
#      engine's write cycle. p50, p99 and max in ms; target p99 <= 20 ms.
#      Peer: mpd with a fifo output, driven over its Unix socket; engine-bench
#      reads the fifo as fast as mpd fills it:
#        play   `play` on a stopped mpd -> the first byte on the fifo
#        pause  `pause 1` while playing -> mpd's reply (it answers once its
#               player and output threads have paused) or the last byte on
#               the fifo, whichever comes later (mpd writes ~23 ms chunks as
#               their time comes, so a pause shows as no further chunk)
#        seek   not measured: on a fifo the new position cannot be told from
#               the old one without matching the PCM.
#   B. CPU of real-time playback, as % of one core. engine-bench plays the
#      1-minute file to its end on the paced null output: (user + sys) of
#      its whole process from getrusage, over the wall time, and its
#      voluntary context switches (wake-ups) per second. At the same time
#      (side by side, so both see the same machine) mpd plays the same file on
#      its null output with sync "yes": CPU from /proc/PID/stat over
#      BENCH_PEER_SECONDS (45) of steady playback after a 5 s start, and its
#      threads' voluntary switches from /proc/PID/task/*/status. The decode
#      floor is mpg123 -q -t on the file, CPU time / 60 s of audio, measured
#      as in bench-audio.sh (BENCH_CPU_ROUNDS, 5 runs).
#   C. Memory. RSS of engine-bench idle (engine made, stopped), the largest
#      of one sample a second while playing the 10-minute file in real time
#      for BENCH_MEMORY_SECONDS (10), and the largest while playing all of
#      it on the unpaced null output (sampled every 20 ms). Target: playing
#      <= idle + 20 MB. Peer: mpd's RSS idle and while playing the 10-minute
#      file for 10 s, from /proc/PID/status.
#
# mpd runs from a configuration generated in a temporary directory (socket,
# fifo, database and log there; music_directory is .bench; the mad decoder
# off, so libmpg123 decodes for both). Every process the script starts is
# killed on exit, also on Ctrl-C. Without /usr/bin/mpd, or when it fails,
# the peer columns say so and the rest still runs.
#
# The table is printed at the end and also written to .bench/bench-engine.txt.
# The notes say how much CPU time the hypervisor stole during the run: on a
# busy host, that is where the latency tails come from.
#
# Knobs (environment): BENCH_ITERATIONS (200), BENCH_PEER_SECONDS (45),
# BENCH_MEMORY_SECONDS (10), BENCH_CPU_ROUNDS (5), ENGINE_BENCH (a prebuilt
# engine-bench to run instead of building one, e.g. to compare two builds).

set -euo pipefail

ITERATIONS=${BENCH_ITERATIONS:-200}
PEER_SECONDS=${BENCH_PEER_SECONDS:-45}
MEMORY_SECONDS=${BENCH_MEMORY_SECONDS:-10}
CPU_ROUNDS=${BENCH_CPU_ROUNDS:-5}
SHORT_SECONDS=60
LONG_SECONDS=600
# The output that stalls in B: a fifo output (the snapcast feed) whose reader has stopped reading.
STALLED_SPEC=fifo:

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BENCH_NAME=bench-engine
# shellcheck source=bench-common.sh
source scripts/bench-common.sh
SHORT_NAME=one-minute-cbr320.mp3
LONG_NAME=ten-minutes-cbr320.mp3
SHORT_FILE="$BENCH/$SHORT_NAME"
LONG_FILE="$BENCH/$LONG_NAME"
need_tools mpg123 sox lame pv time

# --- build ------------------------------------------------------------------
mkdir -p "$BENCH"
if [[ -n ${ENGINE_BENCH:-} ]]; then
    [[ -x $ENGINE_BENCH ]] || die "ENGINE_BENCH=$ENGINE_BENCH is not an executable"
else
    build_release engine-bench
    ENGINE_BENCH="$RELEASE/engine-bench"
    [[ -x $ENGINE_BENCH ]] || die "no $ENGINE_BENCH after the build"
fi

# --- test audio -------------------------------------------------------------
make_mp3 "$SHORT_SECONDS" "$SHORT_FILE" -b 320
make_mp3 "$LONG_SECONDS" "$LONG_FILE" -b 320

# --- helpers ----------------------------------------------------------------
# ratio A B: A / B with two decimals, or "-" when either is missing or B is 0.
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN {
        if (a == "" || b == "" || a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.2f\n", a / b }'
}

# field FILE KEY N: the Nth word of the line of FILE that starts with KEY, or "-".
field() {
    awk -v key="$2" -v n="$3" 'index($0, key " ") == 1 { v = $n } END { print (v == "" ? "-" : v) }' "$1" 2>/dev/null ||
        echo -
}

# steal: the CPU time stolen by the hypervisor and the total, in ticks.
steal() { awk '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; print $9, t }' /proc/stat; }

# mpd_start NAME OUTPUT_BLOCK: starts mpd from a configuration in $TMP/NAME
# with the given audio_output block; sets MPD_DIR and MPD_PID.
MPD_PID=
mpd_start() {
    MPD_DIR="$TMP/$1"
    mkdir -p "$MPD_DIR"
    # Only the two files it plays: .bench also holds the library benchmark's trees, which mpd would
    # spend minutes scanning before it knew these.
    mkdir -p "$TMP/music"
    ln -sf "$SHORT_FILE" "$TMP/music/$SHORT_NAME"
    ln -sf "$LONG_FILE" "$TMP/music/$LONG_NAME"
    cat >"$MPD_DIR/mpd.conf" <<EOF
music_directory "$TMP/music"
db_file "$MPD_DIR/database"
log_file "$MPD_DIR/log"
bind_to_address "$MPD_DIR/socket"
zeroconf_enabled "no"
decoder {
    plugin "mad"
    enabled "no"
}
$2
EOF
    mpd --no-daemon "$MPD_DIR/mpd.conf" >"$MPD_DIR/stdout" 2>&1 &
    MPD_PID=$!
}

# mpd_stop: ends the mpd that mpd_start started.
mpd_stop() {
    if [[ -n $MPD_PID ]]; then
        kill -TERM "$MPD_PID" 2>/dev/null || true
        wait "$MPD_PID" 2>/dev/null || true
        MPD_PID=
    fi
}

# mpd_failed WHAT: notes that the peer's WHAT could not be measured, with the
# end of mpd's log.
mpd_failed() {
    NOTES+=("mpd $1 failed: $(tail -n 3 "$MPD_DIR/log" "$MPD_DIR/stdout" 2>/dev/null | tr '\n' ' ' | cut -c1-300)")
}

NOTES=()
MPD=$(command -v mpd || true)
[[ -n $MPD ]] || NOTES+=("mpd is not installed: no peer figures for it.")
read -r steal0 total0 < <(steal)
started=$(date +%s)

# --- A: command to effect ---------------------------------------------------
log "A: command to effect, engine (${ITERATIONS} x play, pause, seek)"
run "$ENGINE_BENCH" latency "$SHORT_FILE" "$ITERATIONS" >"$TMP/latency"

: >"$TMP/mpd-latency"
if [[ -n $MPD ]]; then
    log "A: command to effect, mpd on a fifo (${ITERATIONS} x play, pause)"
    mpd_start fifo 'audio_output {
    type "fifo"
    name "fifo"
    path "'"$TMP"'/fifo/fifo"
    format "44100:16:2"
}'
    if ! run "$ENGINE_BENCH" mpd-latency "$MPD_DIR/socket" "$MPD_DIR/fifo" "$SHORT_NAME" "$ITERATIONS" \
        >"$TMP/mpd-latency" 2>"$TMP/mpd-latency.err"; then
        mpd_failed "latency ($(cat "$TMP/mpd-latency.err"))"
    fi
    mpd_stop
    missed=$(field "$TMP/mpd-latency" missed 2)
    [[ $missed == - ]] || NOTES+=("mpd: ${missed} commands showed no effect within 3 s and were left out.")
fi

# --- B: CPU -----------------------------------------------------------------
log "B: decode floor, mpg123 -q -t (${CPU_ROUNDS} runs)"
cpu_time mpg123 -q -t "$SHORT_FILE" >/dev/null    # warm-up
: >"$TMP/floor"
for ((i = 1; i <= CPU_ROUNDS; i++)); do
    cpu_time mpg123 -q -t "$SHORT_FILE" >>"$TMP/floor"
done
floor=$(awk -v d=$SHORT_SECONDS '{ print 100 * ($2 + $3) / d }' "$TMP/floor" | stats)

log "B: real-time playback CPU, engine and mpd side by side (~${SHORT_SECONDS} s)"
: >"$TMP/mpd-usage"
if [[ -n $MPD ]]; then
    mpd_start null 'audio_output {
    type "null"
    name "null"
    sync "yes"
}'
    "$ENGINE_BENCH" mpd-usage "$MPD_DIR/socket" "$MPD_PID" "$SHORT_NAME" "$PEER_SECONDS" "$LONG_NAME" \
        >"$TMP/mpd-usage" 2>"$TMP/mpd-usage.err" &
    peer_job=$!
fi
# mpg123 paced too: its PCM goes through pv, which lets it through at the real-time byte rate
# (44100 Hz x 2 channels x 2 bytes), so mpg123 blocks on the pipe as it would on a sound card.
# GNU time measures mpg123 alone, not pv.
( /usr/bin/time -f "%e %U %S" -o "$TMP/mpg123-paced" mpg123 -q -s "$SHORT_FILE" |
    pv -q -L 176400 >/dev/null ) &
paced_job=$!
run "$ENGINE_BENCH" cpu "$SHORT_FILE" >"$TMP/cpu"
wait "$paced_job"
if [[ -n $MPD ]]; then
    log "C: mpd memory (10 s of the 10-minute file)"
    wait "$peer_job" || mpd_failed "CPU and memory ($(cat "$TMP/mpd-usage.err"))"
    mpd_stop
fi

log "B: CPU with a second (null) output, and beside a stalled output (~2 x ${SHORT_SECONDS} s)"
run "$ENGINE_BENCH" cpu "$SHORT_FILE" two >"$TMP/cpu-two"
# A FIFO this script holds open for reading and never reads: once its pipe is full, the output
# writing into it can put nothing more in, as when snapserver stops reading.
mkfifo "$TMP/stalled"
exec {stall_fd}<>"$TMP/stalled"
run "$ENGINE_BENCH" cpu "$SHORT_FILE" "stalled:$STALLED_SPEC$TMP/stalled,name=stalled" >"$TMP/cpu-stalled"
exec {stall_fd}>&-

# --- C: memory --------------------------------------------------------------
log "C: engine memory (idle, ${MEMORY_SECONDS} s playing, the whole 10-minute file unpaced)"
run "$ENGINE_BENCH" memory "$LONG_FILE" "$MEMORY_SECONDS" >"$TMP/memory"

read -r steal1 total1 < <(steal)
elapsed=$(($(date +%s) - started))

# --- table ------------------------------------------------------------------
ROWS=()   # "figure|engine|peer|ratio"
for command in play pause seek; do
    for column in 3:p50 4:p99 5:max; do
        n=${column%%:*}
        name=${column#*:}
        mine=$(field "$TMP/latency" "latency $command" "$n")
        peer=$(field "$TMP/mpd-latency" "latency $command" "$n")
        ROWS+=("A $command to effect, ms, $name|$mine|$peer|$(ratio "$mine" "$peer")")
    done
done

# cpu_figures FILE: "percent switches-per-second wall underruns least-queued-ms dropped" from a line
# "cpu WALL USER SYS SWITCHES UNDERRUNS LEAST_QUEUED_MS DROPPED" (mpd's lines end after SWITCHES).
cpu_figures() {
    awk '$1 == "cpu" { printf "%.3f %.1f %.3f %s %s %s\n", 100 * ($3 + $4) / $2, $5 / $2, $2, $6, $7, $8 }' \
        "$1" 2>/dev/null
}
read -r cpu_mine wake_mine wall_mine underruns _ _ < <(cpu_figures "$TMP/cpu" || true) || true
read -r cpu_peer wake_peer _ _ < <(cpu_figures "$TMP/mpd-usage" || true) || true
cpu_mine=${cpu_mine:--} cpu_peer=${cpu_peer:--} wake_mine=${wake_mine:--} wake_peer=${wake_peer:--}
ROWS+=("B playback CPU, % of a core|$cpu_mine|$cpu_peer|$(ratio "$cpu_mine" "$cpu_peer")")
paced_mpg123=$(awk '{ printf "%.3f\n", 100 * ($2 + $3) / $1 }' "$TMP/mpg123-paced")
ROWS+=("B playback CPU vs mpg123 paced, %|$cpu_mine|$paced_mpg123|$(ratio "$cpu_mine" "$paced_mpg123")")
ROWS+=("B playback CPU vs decode floor, %|$cpu_mine|$(fmt %.3f "$floor")|$(ratio "$cpu_mine" "${floor%% *}")")
ROWS+=("B wake-ups per second|$wake_mine|$wake_peer|$(ratio "$wake_mine" "$wake_peer")")
read -r _ _ _ _ queued_one _ < <(cpu_figures "$TMP/cpu" || true) || true
read -r cpu_two wake_two _ underruns_two _ _ < <(cpu_figures "$TMP/cpu-two" || true) || true
read -r cpu_stalled _ _ underruns_stalled queued_stalled dropped_stalled < <(cpu_figures "$TMP/cpu-stalled" || true) ||
    true
extra=$(awk -v a="${cpu_two:--}" -v b="$cpu_mine" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%.3f\n", a - b }')
ROWS+=("B playback CPU, two null outputs, % (peer: one)|${cpu_two:--}|$cpu_mine|$(ratio "${cpu_two:--}" "$cpu_mine")")
ROWS+=("B extra CPU of the 2nd output, % (peer: one output's)|$extra|$cpu_mine|$(ratio "$extra" "$cpu_mine")")
ROWS+=("B playback CPU beside a stalled output, % (peer: alone)|${cpu_stalled:--}|$cpu_mine|$(ratio "${cpu_stalled:--}" "$cpu_mine")")
ROWS+=("B leader's least queued audio, ms, stalled beside (peer: alone)|${queued_stalled:--}|${queued_one:--}|$(ratio "${queued_stalled:--}" "${queued_one:--}")")

# mb KB: kilobytes as megabytes with one decimal, "-" passes through.
mb() { awk -v k="$1" 'BEGIN { if (k == "-" || k == "") print "-"; else printf "%.1f\n", k / 1024 }'; }
idle_mine=$(mb "$(field "$TMP/memory" memory 2)")
play_mine=$(mb "$(field "$TMP/memory" memory 3)")
fast_mine=$(mb "$(field "$TMP/memory" memory 4)")
idle_peer=$(mb "$(field "$TMP/mpd-usage" memory 2)")
play_peer=$(mb "$(field "$TMP/mpd-usage" memory 3)")
growth() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%.1f\n", a - b }'; }
ROWS+=("C RSS idle, MB|$idle_mine|$idle_peer|$(ratio "$idle_mine" "$idle_peer")")
ROWS+=("C RSS playing (real time), MB|$play_mine|$play_peer|$(ratio "$play_mine" "$play_peer")")
ROWS+=("C RSS growth playing - idle, MB|$(growth "$play_mine" "$idle_mine")|$(growth "$play_peer" "$idle_peer")|-")
ROWS+=("C RSS peak, whole file unpaced, MB|$fast_mine|-|-")

steal_pct=$(awk -v s=$((steal1 - steal0)) -v t=$((total1 - total0)) 'BEGIN { printf "%.1f", t ? 100 * s / t : 0 }')
NOTES+=("A: ${ITERATIONS} commands each, after random waits; engine on the paced null output (real clock),")
NOTES+=("   mpd on a fifo output (pause = its reply or the last byte, whichever is later; seek cannot be seen on a fifo).")
NOTES+=("   Target p99 <= 20 ms.")
NOTES+=("B: engine = getrusage over playing the 1-minute file to its end (wall ${wall_mine:--} s, ${underruns:--} underruns);")
NOTES+=("   mpd = /proc/PID/stat over ${PEER_SECONDS} s of steady playback on its null output (sync yes), at the same time.")
NOTES+=("   Decode floor = mpg123 -q -t CPU time / 60 s of audio, ${CPU_ROUNDS} runs. Wake-ups = voluntary context switches.")
NOTES+=("   mpg123 paced = mpg123 -s piped through pv -L 176400 (real-time rate), at the same time; GNU time, 10 ms resolution.")
NOTES+=("   Two outputs: the timed paced null output and a second paced null output (${wake_two:--} wake-ups/s, ${underruns_two:--} underruns).")
NOTES+=("   Stalled: beside a ${STALLED_SPEC%%:*} output into a FIFO nobody reads (it dropped ${dropped_stalled:--} frames; ${underruns_stalled:--} underruns")
NOTES+=("   of the leader). Least queued = the least audio the leader's device held when a write came: a held-up audio thread shows there.")
NOTES+=("   Targets: extra CPU of the 2nd output <= 0.25 x one output's; the stalled output changes the leader's timing by nothing.")
NOTES+=("C: RSS from /proc; engine playing = largest of ${MEMORY_SECONDS} samples, one a second, 10-minute file in real time;")
NOTES+=("   mpd playing = the same over 10 s. Target: engine playing <= idle + 20 MB.")
NOTES+=("Ratio = engine / mpd (or / floor). Hypervisor steal during the run: ${steal_pct} % of all CPU time; ${elapsed} s in all.")

print_table "$({ [[ -n $MPD ]] && "$MPD" --version 2>/dev/null | head -n 1; } || echo 'no mpd')" \
    "figure|playerd engine median (min-max)|peer median (min-max)|ratio"
