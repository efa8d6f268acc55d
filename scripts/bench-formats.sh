#!/usr/bin/env bash
# bench-formats.sh (section H of `make bench`; alone: `make bench-formats`): playerd's decoders of MP3,
# FLAC, Ogg Vorbis and Opus measured side by side with each format's reference tool and with mpd, in one
# run, and a table of ratios. BENCHMARKS.md (section H) says how each figure is measured.
#
#   0. The same 3 minutes of test audio (bench-common.sh's make_wav: sox, a fixed seed) at 16-bit
#      44.1 kHz and 24-bit 96 kHz, encoded by each format's reference encoder into .bench/formats/:
#      lame CBR 320, flac -5 (16/44.1 and 24/96), oggenc -q 5, opusenc 128 kbit/s. Kept for later runs.
#   1. Each file decoded once by `engine-bench decode` (AudioDecoders.open and read, as the engine
#      does): the frames and the format it gives are checked against the file (every frame, 24-bit
#      stays 24-bit); a file the decoder refuses gets "refused" rows and no figures.
#   2. Decoding throughput, BENCH_ROUNDS (5) runs alternating with the reference tool: `engine-bench
#      decode FILE --stdout > /dev/null` against `mpg123 -s`, `flac -d -c`, `oggdec -o /dev/null` and
#      `opusdec --rate 48000 --no-dither` (each writing all its PCM, playerd's too); audio seconds per
#      second of wall time, and per second of CPU (user + sys: what the machine's other load does not
#      change). Target >= 1.0 x the tool. And the instructions each executes decoding 30 s of the same
#      audio (the same recipe), counted by callgrind: exact where times on a shared machine are not.
#   3. CPU while playing in real time: one playerd (paced null output) and one mpd (null output, sync
#      "yes", libmpg123 for MP3: mad disabled) play the same file on repeat at the same time;
#      BENCH_FORMAT_CPU_ROUNDS (2) windows of BENCH_FORMAT_CPU_SECONDS (30) s each, the daemons' threads'
#      CPU from /proc/PID/task/*/schedstat. Both must say they are playing it, at the file's own format,
#      before and after each window. Target <= 0.5 x mpd.
# The table is printed and written to .bench/bench-formats.txt; no process is left behind, also on Ctrl-C.
# Knobs (environment): BENCH_ROUNDS (5), BENCH_FORMAT_CPU_ROUNDS (2), BENCH_FORMAT_CPU_SECONDS (30),
# BENCH_SKIP_BUILD (1: use the release build as it is; bench.sh sets it).
set -euo pipefail

ROUNDS=${BENCH_ROUNDS:-5}
CPU_ROUNDS=${BENCH_FORMAT_CPU_ROUNDS:-2}
CPU_SECONDS=${BENCH_FORMAT_CPU_SECONDS:-30}
LENGTH=180

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BENCH_NAME=bench-formats
# shellcheck source=bench-common.sh
source scripts/bench-common.sh
started=$(date +%s)

# --- 0: tools, build, audio ----------------------------------------------------------
need_tools flac sox lame mpg123 mpd mpc valgrind
# The Ogg tools come in packages of other names.
for pair in oggenc:vorbis-tools oggdec:vorbis-tools opusenc:opus-tools opusdec:opus-tools; do
    type -P "${pair%%:*}" >/dev/null && continue
    log "installing ${pair#*:}"
    sudo=()
    ((EUID == 0)) || sudo=(sudo)
    run "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${pair#*:}"
done
if [[ ${BENCH_SKIP_BUILD:-} != 1 ]]; then
    scripts/setup.sh build >&2
    build_release playerd daemon-bench engine-bench
fi
PLAYERD="$RELEASE/playerd"
DB="$RELEASE/daemon-bench"
EB="$RELEASE/engine-bench"

AUDIO="$BENCH/formats"
mkdir -p "$AUDIO"
# encode OUT SECONDS RATE BITS COMMAND...: unless OUT exists, makes the WAV of SECONDS at RATE and BITS
# and runs COMMAND with IN and OUT replaced by the WAV and OUT.part; OUT.part is renamed when complete.
encode() {
    local out=$1 wav="$TMP/audio-$3-$4-$2.wav" word args=()
    shift 4
    [[ -s $out ]] && return 0
    log "making ${out#"$ROOT/"} ($1)"
    SCRATCH+=("$out.part")
    [[ -s $wav ]] || make_wav_at "${wav#"$TMP/audio-"}" "$wav"
    for word in "$@"; do
        case $word in
            IN) args+=("$wav") ;;
            OUT) args+=("$out.part") ;;
            *) args+=("$word") ;;
        esac
    done
    run "${args[@]}" >/dev/null
    mv "$out.part" "$out"
}
# make_wav_at RATE-BITS-SECONDS.wav OUT.wav: make_wav's signal (bench-common.sh) at that rate,
# resolution and length.
make_wav_at() {
    local rate bits seconds gen
    IFS=- read -r rate bits seconds <<<"${1%.wav}"
    gen="sox -R -r $rate -c 2 -n -p synth $seconds"
    run sox -R -m \
        -v 0.25 "|$gen sine 220 sine 330" \
        -v 0.20 "|$gen sine 261.63 synth $seconds sine mix 329.63 synth $seconds sine mix 392" \
        -v 0.08 "|$gen pinknoise" \
        -b "$bits" "$2"
}

# Each format: label | file | expected "frames rate:bits:channels" | peer's name | peer's command (FILE
# for the file).
FORMATS=(
    "MP3 CBR 320|three-minutes-cbr320.mp3|$((LENGTH * 44100)) 44100:16:2|mpg123 -s|mpg123 -q -s FILE"
    "FLAC 16-bit 44.1 kHz|three-minutes-16-44.flac|$((LENGTH * 44100)) 44100:16:2|flac -d -c|flac -s -d -c -f FILE"
    "FLAC 24-bit 96 kHz|three-minutes-24-96.flac|$((LENGTH * 96000)) 96000:24:2|flac -d -c|flac -s -d -c -f FILE"
    "Ogg Vorbis q5|three-minutes-q5.ogg|$((LENGTH * 44100)) 44100:16:2|oggdec|oggdec -Q -o /dev/null FILE"
    "Opus 128 kbit/s|three-minutes-128k.opus|$((LENGTH * 48000)) 48000:16:2|opusdec --no-dither|opusdec --quiet --rate 48000 --no-dither FILE /dev/null"
)
# The same in 30 s, for the instruction counts (callgrind runs some 50 times slower).
SHORT=30
for length in "three-minutes:$LENGTH" "thirty-seconds:$SHORT"; do
    prefix=${length%:*} seconds=${length#*:}
    encode "$AUDIO/$prefix-cbr320.mp3" "$seconds" 44100 16 lame --quiet --noreplaygain -b 320 IN OUT
    encode "$AUDIO/$prefix-16-44.flac" "$seconds" 44100 16 flac --silent -5 -f -o OUT IN
    encode "$AUDIO/$prefix-24-96.flac" "$seconds" 96000 24 flac --silent -5 -f -o OUT IN
    encode "$AUDIO/$prefix-q5.ogg" "$seconds" 44100 16 oggenc -Q -q 5 -s 1 -o OUT IN
    encode "$AUDIO/$prefix-128k.opus" "$seconds" 44100 16 opusenc --quiet --bitrate 128 --serial 1 IN OUT
done

# --- recording (as in bench.sh) ----------------------------------------------------------
mkdir -p "$TMP/samples"
add() { printf '%s\n' "$2" >>"$TMP/samples/$1"; }
summary() { stats <"$TMP/samples/$1"; }
ROWS=()
NOTES=()
# row FIGURE FORMAT MINE PEER-NAME PEER TARGET: a table row from two sample sets; the ratio is the
# medians' mine / peer's; "met" compares it with a target of the form "<= X" or ">= X".
row() {
    local mine peer ratio met=""
    mine=$(summary "$3")
    peer=$(summary "$5")
    ratio=$(awk -v a="${mine%% *}" -v b="${peer%% *}" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }')
    if [[ $6 == [\<\>]"= "* && $ratio != - ]]; then
        met=$(awk -v r="$ratio" -v t="${6#?= }" -v op="${6:0:1}" \
            'BEGIN { print ((op == "<") ? (r <= t) : (r >= t)) ? "yes" : "no" }')
    fi
    ROWS+=("$1|$(fmt "$2" "$mine")|$4|$(fmt "$2" "$peer")|$ratio|$6|$met")
}
# refused FIGURE PEER-NAME [REASON]: a row for a figure that could not be measured, and why.
refused() {
    ROWS+=("$1|refused|$2|-|-|-|no")
    [[ -z ${3:-} ]] || NOTES+=("$1: $3")
}

# --- 1: what the decoders give ------------------------------------------------------------------
declare -A DECODES
for entry in "${FORMATS[@]}"; do
    IFS='|' read -r label name expected _ _ <<<"$entry"
    log "H: decoding $label once"
    report=$("$EB" decode "$AUDIO/$name" --stdout 2>&1 >/dev/null) || true
    report=$(tail -n 1 <<<"$report")
    if [[ $report == "decoded "* ]]; then
        DECODES[$name]=yes
        read -r _ frames format kind _ <<<"$report"
        [[ "$frames $format" == "$expected" ]] ||
            NOTES+=("$label: the decoder ($kind) gave $frames frames at $format; the file holds $expected.")
    else
        DECODES[$name]=no
        NOTES+=("$label: $report")
    fi
done

# --- 2: throughput ---------------------------------------------------------------------------
# measure WHO NAME CMD...: one run; records audio seconds per wall second and per CPU second.
measure() {
    local who=$1 name=$2 times
    shift 2
    times=$(cpu_time "$@" 2>/dev/null)
    add "tp-$who-$name" "$(awk -v l="$LENGTH" '{ printf "%.2f", l / $1 }' <<<"$times")"
    add "cpu-$who-$name" "$(awk -v l="$LENGTH" '{ c = $2 + $3; if (c < 0.001) c = 0.001; printf "%.2f", l / c }' <<<"$times")"
}
for entry in "${FORMATS[@]}"; do
    IFS='|' read -r label name _ peer command <<<"$entry"
    if [[ ${DECODES[$name]} != yes ]]; then
        refused "decoding $label (x real time)" "$peer"
        continue
    fi
    read -r -a peer_command <<<"${command//FILE/$AUDIO/$name}"
    log "H: decoding throughput, $label ($ROUNDS rounds against $peer)"
    cpu_time "${peer_command[@]}" >/dev/null 2>&1 # warm-ups: the file in the page cache
    cpu_time "$EB" decode "$AUDIO/$name" --stdout >/dev/null 2>&1
    for ((i = 0; i < ROUNDS; i++)); do
        for who in $( ((i % 2)) && echo "peer mine" || echo "mine peer"); do
            if [[ $who == mine ]]; then
                measure mine "$name" "$EB" decode "$AUDIO/$name" --stdout
            else
                measure peer "$name" "${peer_command[@]}"
            fi
        done
    done
    row "decoding $label (x real time)" %.1f "tp-mine-$name" "$peer" "tp-peer-$name" ">= 1.0"
    row "decoding $label (x real time per CPU s)" %.1f "cpu-mine-$name" "$peer" "cpu-peer-$name" ">= 1.0"
done
# Instructions are counted exactly, where times on a shared machine vary from run to run.
instructions() {
    run valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
        awk '/Collected :/ { printf "%.2f\n", $4 / 1e6 }'
}
for entry in "${FORMATS[@]}"; do
    IFS='|' read -r label name _ peer command <<<"$entry"
    [[ ${DECODES[$name]} == yes ]] || continue
    short=thirty-seconds-${name#three-minutes-}
    read -r -a peer_command <<<"${command//FILE/$AUDIO/$short}"
    log "H: instructions to decode 30 s of $label (callgrind)"
    add "ir-mine-$name" "$(instructions "$EB" decode "$AUDIO/$short" --stdout)"
    add "ir-peer-$name" "$(instructions "${peer_command[@]}")"
    row "instructions, 30 s of $label (millions)" %.1f "ir-mine-$name" "$peer" "ir-peer-$name" ""
done

# --- 3: CPU while playing ----------------------------------------------------------------------
MUSIC="$BENCH/formats-music"
SCRATCH+=("$MUSIC")
rm -rf "$MUSIC"
mkdir -p "$MUSIC"
for entry in "${FORMATS[@]}"; do
    IFS='|' read -r _ name _ _ _ <<<"$entry"
    ln "$AUDIO/$name" "$MUSIC/$name"
done
DAEMONS="$TMP/daemons"
mkdir -p "$DAEMONS/playerd" "$DAEMONS/mpd"
cat >"$DAEMONS/mpd/mpd.conf" <<CONF
music_directory "$MUSIC"
db_file "$DAEMONS/mpd/db"
bind_to_address "$DAEMONS/mpd/socket"
pid_file "$DAEMONS/mpd/pid"
log_file "$DAEMONS/mpd/log"
zeroconf_enabled "no"
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
    type "null"
    name "null"
    sync "yes"
}
CONF
PLAYERD_SOCKET="$DAEMONS/playerd/socket"
MPD_SOCKET="$DAEMONS/mpd/socket"
# start SOCKET COMMAND...: starts a daemon through daemon-bench (until its socket answers); prints its pid.
start() {
    local out
    rm -f "$1"
    out=$("$DB" start "$1" -- "${@:2}") || die "${2##*/} did not start: $out"
    kv pid <<<"$out" >>"$KILL_PIDS"
    kv pid <<<"$out"
}
stop() {
    kill -TERM "$1" 2>/dev/null || return 0
    for _ in $(seq 250); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.02; done
    kill -KILL "$1" 2>/dev/null || true
}
MINE_PID=$(start "$PLAYERD_SOCKET" "$PLAYERD" --socket "$PLAYERD_SOCKET" --output null --music-dir "$MUSIC" \
    --library "$DAEMONS/playerd/library.db" --state-file none --log-level warning)
PEER_PID=$(start "$MPD_SOCKET" /usr/bin/mpd --no-daemon "$DAEMONS/mpd/mpd.conf")
run mpc --host "$MPD_SOCKET" -q update --wait
# playing SOCKET NAME: whether the daemon says it plays NAME.
playing() {
    local out
    out=$("$DB" playing "$1" 2>&1) || return 1
    [[ $(kv state <<<"$out") == play && $(awk '$1 == "file" { sub(/^file /, ""); print }' <<<"$out") == "$2" ]]
}
# play SOCKET NAME: the queue holds NAME alone, on repeat, playing; fails if the daemon refuses it.
play() {
    mpc --host "$1" -q clear &&
        mpc --host "$1" -q add "$2" &&
        mpc --host "$1" -q repeat on &&
        mpc --host "$1" -q play
}
stolen() { awk '/^cpu / { print $9 }' /proc/stat; }
steal0=$(stolen)
t_start=$(date +%s%N)
for entry in "${FORMATS[@]}"; do
    IFS='|' read -r label name expected _ _ <<<"$entry"
    format=${expected#* }
    figure="CPU playing $label (% of a core)"
    if ! play "$PLAYERD_SOCKET" "$name" >"$TMP/play.log" 2>&1; then
        refused "$figure" mpd "playerd did not play it: $(tr '\n' ' ' <"$TMP/play.log")"
        continue
    fi
    run play "$MPD_SOCKET" "$name"
    sleep 3
    if ! playing "$PLAYERD_SOCKET" "$name"; then
        refused "$figure" mpd "playerd took it but does not play it: $("$DB" playing "$PLAYERD_SOCKET" | tr '\n' ' ')"
        continue
    fi
    log "H: CPU while playing $label ($CPU_ROUNDS windows of $CPU_SECONDS s, both daemons at once)"
    mine_audio=$("$DB" playing "$PLAYERD_SOCKET" | kv audio)
    peer_audio=$("$DB" playing "$MPD_SOCKET" | kv audio)
    NOTES+=("$label ($format) played at $mine_audio by playerd, at $peer_audio by mpd.")
    [[ $mine_audio == "$format" ]] || NOTES+=("  playerd does not play $label at the file's own format ($format).")
    for ((i = 0; i < CPU_ROUNDS; i++)); do
        for socket in "$PLAYERD_SOCKET" "$MPD_SOCKET"; do
            playing "$socket" "$name" || die "$socket is not playing $name: $("$DB" playing "$socket" | tr '\n' ' ')"
        done
        t0=$(date +%s%N)
        a0=$(cpu_threads "$MINE_PID") && b0=$(cpu_threads "$PEER_PID")
        sleep "$CPU_SECONDS"
        a1=$(cpu_threads "$MINE_PID") && b1=$(cpu_threads "$PEER_PID")
        t1=$(date +%s%N)
        for socket in "$PLAYERD_SOCKET" "$MPD_SOCKET"; do
            playing "$socket" "$name" || die "$socket stopped playing $name"
        done
        pct() { awk -v c="$(cpu_spent "$1" "$2")" -v w="$((t1 - t0))" 'BEGIN { printf "%.4f", 100 * c / w }'; }
        add "play-mine-$name" "$(pct "$a0" "$a1")"
        add "play-peer-$name" "$(pct "$b0" "$b1")"
    done
    row "$figure" %.3f "play-mine-$name" mpd "play-peer-$name" "<= 0.5"
    # The least any player of this decoder can spend: decoding alone, per second of audio (from 2).
    if [[ -s $TMP/samples/cpu-mine-$name ]]; then
        floor=$(awk -v x="$(summary "cpu-mine-$name" | cut -d' ' -f1)" 'BEGIN { printf "%.3f", 100 / x }')
        NOTES+=("  $label: decoding alone costs playerd's decoder $floor % of a core; half of mpd's CPU playing it is $(awk \
            -v m="$(summary "play-peer-$name" | cut -d' ' -f1)" 'BEGIN { printf "%.3f", m / 2 }') %.")
    fi
done
steal_pct=$(awk -v s="$(($(stolen) - steal0))" -v w="$(($(date +%s%N) - t_start))" -v n="$(nproc)" \
    'BEGIN { printf "%.1f", 100 * s * 10000000 / (w * n) }')
stop "$MINE_PID"
stop "$PEER_PID"

# --- the table --------------------------------------------------------------------------------
NOTES+=("Ratio: playerd / peer; for decoding above 1 is better, for CPU below 1. Met: the ratio against the target.")
NOTES+=("Decoding: engine-bench decode (AudioDecoders.open, read 4096 frames at a time, the PCM to /dev/null), $LENGTH s of audio, $ROUNDS runs each.")
NOTES+=("Hypervisor steal during the CPU windows: $steal_pct % of the machine. Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg).")
NOTES+=("Took $(($(date +%s) - started)) s. Peers: $(mpd --version | head -n 1); $(flac --version); $(oggdec --version 2>&1 | head -n 1); $(opusdec --version 2>&1 | head -n 1); $(mpg123 --version | head -n 1).")
print_table "$(uname -r), $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)" \
    "figure|playerd median (min-max)|peer|peer median (min-max)|ratio|target|met"
