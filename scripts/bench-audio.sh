#!/usr/bin/env bash
# bench-audio.sh: compares playerd's command-line player (playfile) with
# Debian's mpg123, which uses the same libmpg123.
#
# Run it with `make bench-audio`, or directly as scripts/bench-audio.sh from
# any directory. It takes about 3-4 minutes on 2 cores (about 1 minute more
# the first time, while it makes the test audio).
#
# What it does:
#   0. Installs mpg123, sox and lame with apt-get if they are missing, and
#      builds the release playfile as `make release` does (build_release).
#   1. Makes reproducible test audio in .bench/ if it is not there yet: a
#      44.1 kHz stereo mix of two tones, a C-major chord and quiet pink noise
#      (sox -R, so the noise is the same every time), encoded with lame as
#      10 minutes at CBR 320, CBR 128 and VBR -V 2, and 1 minute at CBR 320.
#   A. Throughput. For each 10-minute file, one warm-up run of each program,
#      then BENCH_ROUNDS (5) rounds alternating
#          mpg123 -q -t FILE                                  (decode only)
#          playfile --quiet --output null:unpaced FILE        (as fast as it can)
#      (the order flips every round). Wall time per run from date +%s%N.
#      Reports median (min-max) seconds, the realtime multiple (600 s / wall)
#      and ratio = playfile throughput / mpg123 throughput
#                = mpg123 median time / playfile median time.  Target: >= 0.95.
#   B. CPU of real-time playback. playfile --quiet --output null on the
#      1-minute file (paced like a sound card, so ~60 s of wall time),
#      BENCH_PACED_RUNS (2) times. CPU = (user + sys) / wall, as % of one
#      core. Target: under 1 %. The peer is the decode floor: the CPU time of
#      mpg123 -q -t on the same file as % of its 60 s of audio, the least any
#      libmpg123-based player can spend. For a like-for-like decode figure,
#      playfile --output null:unpaced on that file is measured the same way.
#      User and sys times come from bash's `time` keyword (millisecond
#      resolution; GNU time only prints hundredths).
#
# The table is printed at the end and also written to .bench/bench-audio.txt.
#
# Knobs (environment): BENCH_ROUNDS (default 5), BENCH_PACED_RUNS (default 2),
# BENCH_CPU_ROUNDS (runs of the 1-minute decode-only figures, default 5).

set -euo pipefail

ROUNDS=${BENCH_ROUNDS:-5}
PACED_RUNS=${BENCH_PACED_RUNS:-2}
CPU_ROUNDS=${BENCH_CPU_ROUNDS:-5}
LONG_SECONDS=600
SHORT_SECONDS=60

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BENCH_NAME=bench-audio
# shellcheck source=bench-common.sh
source scripts/bench-common.sh
PLAYFILE="$ROOT/.build/release/playfile"
need_tools mpg123 sox lame
command -v swift >/dev/null || die "swift not found"

# --- build ------------------------------------------------------------------
build_release playfile
[[ -x $PLAYFILE ]] || die "no $PLAYFILE after the build"

# --- test audio -------------------------------------------------------------
LONG_FILES=(
    "cbr320|$BENCH/ten-minutes-cbr320.mp3|-b 320"
    "cbr128|$BENCH/ten-minutes-cbr128.mp3|-b 128"
    "vbr-V2|$BENCH/ten-minutes-vbr-v2.mp3|-V 2"
)
SHORT_FILE="$BENCH/one-minute-cbr320.mp3"
for entry in "${LONG_FILES[@]}"; do
    IFS='|' read -r _ mp3 opts <<<"$entry"
    # shellcheck disable=SC2086 # opts is a word list like "-b 320"
    make_mp3 "$LONG_SECONDS" "$mp3" $opts
done
make_mp3 "$SHORT_SECONDS" "$SHORT_FILE" -b 320

# --- helpers for measuring --------------------------------------------------
# calc EXPRESSION: awk arithmetic.
calc() { awk "BEGIN { print $1 }"; }

# wall_time CMD...: runs CMD with stdout discarded, prints its wall seconds.
wall_time() {
    local t0 t1
    t0=$(date +%s%N)
    run "$@" >/dev/null
    t1=$(date +%s%N)
    calc "($t1 - $t0) / 1e9"
}

MPG123=(mpg123 -q -t)
UNPACED=("$PLAYFILE" --quiet --output null:unpaced)
PACED=("$PLAYFILE" --quiet --output null)

ROWS=()   # "figure|playfile|mpg123|ratio"
NOTES=()

# --- A: throughput ----------------------------------------------------------
for entry in "${LONG_FILES[@]}"; do
    IFS='|' read -r name mp3 _ <<<"$entry"
    log "A: throughput, $name (${ROUNDS} rounds)"
    wall_time "${MPG123[@]}" "$mp3" >/dev/null    # warm-ups
    wall_time "${UNPACED[@]}" "$mp3" >/dev/null
    : >"$TMP/m" && : >"$TMP/p"
    for ((i = 1; i <= ROUNDS; i++)); do
        if ((i % 2)); then
            wall_time "${MPG123[@]}" "$mp3" >>"$TMP/m"
            wall_time "${UNPACED[@]}" "$mp3" >>"$TMP/p"
        else
            wall_time "${UNPACED[@]}" "$mp3" >>"$TMP/p"
            wall_time "${MPG123[@]}" "$mp3" >>"$TMP/m"
        fi
    done
    m=$(stats <"$TMP/m")
    p=$(stats <"$TMP/p")
    ratio=$(awk -v m="${m%% *}" -v p="${p%% *}" 'BEGIN { printf "%.3f", m / p }')
    # Realtime multiples: 600 s / wall, so min and max swap places.
    mx=$(awk -v d=$LONG_SECONDS '{ print d / $1, d / $3, d / $2 }' <<<"$m")
    px=$(awk -v d=$LONG_SECONDS '{ print d / $1, d / $3, d / $2 }' <<<"$p")
    ROWS+=("A $name wall s|$(fmt %.3f "$p")|$(fmt %.3f "$m")|$ratio")
    ROWS+=("A $name x realtime|$(fmt %.0f "$px")|$(fmt %.0f "$mx")|$ratio")
done

# --- B: CPU -----------------------------------------------------------------
# cpu_pct FILE wall|audio: "wall user sys" lines -> "median min max" of CPU %,
# of the wall time (paced playback) or of the 60 s of audio (decode only).
cpu_pct() {
    awk -v per="$2" -v d=$SHORT_SECONDS \
        '{ print 100 * ($2 + $3) / (per == "wall" ? $1 : d) }' <"$1" | stats
}

log "B: decode-only CPU on the 1-minute file (${CPU_ROUNDS} rounds)"
cpu_time "${MPG123[@]}" "$SHORT_FILE" >/dev/null    # warm-ups
cpu_time "${UNPACED[@]}" "$SHORT_FILE" >/dev/null
: >"$TMP/m" && : >"$TMP/p"
for ((i = 1; i <= CPU_ROUNDS; i++)); do
    cpu_time "${MPG123[@]}" "$SHORT_FILE" >>"$TMP/m"
    cpu_time "${UNPACED[@]}" "$SHORT_FILE" >>"$TMP/p"
done
floor=$(cpu_pct "$TMP/m" audio)
unpaced=$(cpu_pct "$TMP/p" audio)

log "B: paced playback CPU (${PACED_RUNS} x ~${SHORT_SECONDS} s)"
: >"$TMP/paced"
for ((i = 1; i <= PACED_RUNS; i++)); do
    cpu_time "${PACED[@]}" "$SHORT_FILE" >>"$TMP/paced"
done
paced=$(cpu_pct "$TMP/paced" wall)
paced_wall=$(awk '{ print $1 }' "$TMP/paced" | stats)

# ratio "median min max" "median min max": first median / second median.
ratio() {
    awk -v a="${1%% *}" -v b="${2%% *}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }'
}
ROWS+=("B decode CPU % of audio|$(fmt %.3f "$unpaced")|$(fmt %.3f "$floor")|$(ratio "$unpaced" "$floor")")
ROWS+=("B paced CPU % of core|$(fmt %.3f "$paced")|$(fmt %.3f "$floor")|$(ratio "$paced" "$floor")")

NOTES+=("A: playfile --output null:unpaced vs mpg123 -q -t on 10-minute files; ${ROUNDS} rounds after a warm-up.")
NOTES+=("   ratio = mpg123 median wall / playfile median wall (playfile throughput relative to mpg123); target >= 0.95.")
NOTES+=("B: decode CPU = (user+sys) / 60 s of audio, playfile null:unpaced vs mpg123 -q -t, ${CPU_ROUNDS} runs each.")
NOTES+=("   paced CPU = playfile --output null (user+sys) / wall, ${PACED_RUNS} run(s), wall $(fmt %.2f "$paced_wall") s;")
NOTES+=("   mpg123 column = its decode-only CPU as % of the audio (the floor); ratio = playfile / mpg123; target < 1 %.")

# --- table ------------------------------------------------------------------
print_table "$(mpg123 --version 2>/dev/null | head -n 1)" \
    "figure|playfile median (min-max)|mpg123 median (min-max)|ratio"
