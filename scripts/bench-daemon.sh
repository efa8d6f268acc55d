#!/usr/bin/env bash
# bench-daemon.sh: playerd against Debian's mpd, side by side in one run, measured from the outside
# by the same client (daemon-bench):
#   - start to ready: from spawning the daemon to its socket answering the MPD greeting;
#   - idle RSS: the daemon's resident memory one second after it became ready, nothing queued;
#   - `status` round trip: 10,000 sequential requests on one Unix-socket connection while each daemon
#     plays the same file on its null output, paced in real time (mpd: `sync "yes"`); p50, p99, max.
# Rounds alternate playerd and mpd (BENCH_ROUNDS, default 5, after one warm-up round each), and the
# table gives each figure's median (min-max) and the ratio playerd / mpd (below 1 is better).
# Run: make bench-daemon, or scripts/bench-daemon.sh from anywhere. About 2 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH

rounds=${BENCH_ROUNDS:-5}
requests=${BENCH_REQUESTS:-10000}

missing=()
command -v mpd >/dev/null || missing+=(mpd)
command -v mpc >/dev/null || missing+=(mpc)
if ((${#missing[@]})); then
    sudo=(); [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi
scripts/setup.sh build
swift build -c release --product playerd >/dev/null
swift build -c release --product daemon-bench >/dev/null
bench=.build/release/daemon-bench
playerd=.build/release/playerd
fixtures=$(realpath Fixtures)

work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

cat > "$work/mpd.conf" <<CONF
music_directory "$fixtures"
db_file "$work/mpd.db"
bind_to_address "$work/mpd.sock"
pid_file "$work/mpd.pid"
log_file "$work/mpd.log"
zeroconf_enabled "no"
decoder {
    plugin "mad"
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
    mixer_type "software"
}
CONF

declare -A results
record() { results[$1]+="$2 "; }

# run_one NAME SOCKET COMMAND...: start, measure, play, measure round trips, stop.
run_one() {
    local name=$1 socket=$2
    shift 2
    rm -f "$socket"
    local out
    out=$("$bench" start "$socket" -- "$@")
    local pid
    pid=$(awk '/^pid /{print $2}' <<<"$out")
    pids+=("$pid")
    if [[ $measure -eq 1 ]]; then
        record "$name:start_to_ready_ms" "$(awk '/^start_to_ready_ms /{print $2}' <<<"$out")"
        record "$name:idle_rss_kb" "$(awk '/^idle_rss_kb /{print $2}' <<<"$out")"
    fi
    mpc --host "$socket" -q clear
    mpc --host "$socket" -q add stereo-44k-cbr.mp3
    mpc --host "$socket" -q repeat on
    mpc --host "$socket" -q play
    sleep 0.5
    out=$("$bench" roundtrip "$socket" "$requests")
    if [[ $measure -eq 1 ]]; then
        for key in roundtrip_p50_us roundtrip_p99_us roundtrip_max_us; do
            record "$name:$key" "$(awk -v k=$key '$1==k{print $2}' <<<"$out")"
        done
    fi
    kill -TERM "$pid"
    # Not our child (daemon-bench started it): wait for it to be gone.
    for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
}

for ((round = 0; round <= rounds; round++)); do
    measure=$((round > 0 ? 1 : 0))
    run_one playerd "$work/playerd.sock" "$playerd" --socket "$work/playerd.sock" --output null \
        --music-dir "$fixtures" --state-file none --log-level warning
    run_one mpd "$work/mpd.sock" /usr/bin/mpd --no-daemon "$work/mpd.conf"
    echo "round $round of $rounds done" >&2
done

stats() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {
    m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2; printf "%.3f %.3f %.3f", m, v[1], v[NR] }'; }
{
    echo "bench-daemon $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD), $(mpd --version | head -1), $(nproc) cores"
    printf '%-26s | %-28s | %-28s | %s\n' figure "playerd median (min-max)" "mpd median (min-max)" "ratio"
    for key in start_to_ready_ms idle_rss_kb roundtrip_p50_us roundtrip_p99_us roundtrip_max_us; do
        read -r pm pmin pmax <<<"$(stats "${results[playerd:$key]}")"
        read -r mm mmin mmax <<<"$(stats "${results[mpd:$key]}")"
        ratio=$(awk -v a="$pm" -v b="$mm" 'BEGIN { printf "%.2f", a / b }')
        printf '%-26s | %-28s | %-28s | %s\n' "$key" "$pm ($pmin-$pmax)" "$mm ($mmin-$mmax)" "$ratio"
    done
} | tee .bench-daemon.txt
mkdir -p .bench && mv .bench-daemon.txt .bench/bench-daemon.txt
