# Shared by the benchmark scripts (source it after setting BENCH_NAME and cd'ing to the repo root):
# logging, leaving no process behind, installing the tools, the reproducible test audio, and the
# statistics helpers. Defines ROOT, BENCH (.bench/, git-ignored), TMP and SCRATCH.

ROOT=$(pwd)
BENCH="$ROOT/.bench"

log() { printf '==> %s\n' "$*" >&2; }
die() { printf '%s: %s\n' "$BENCH_NAME" "$*" >&2; exit 1; }

# --- leave no process behind ------------------------------------------------
# Job control puts every background job in its own process group, so the trap can kill a job
# together with anything it started. Commands run in the background and the script waits for them,
# so that a signal is handled at once rather than after a long run.
set -m
TMP=$(mktemp -d)
SCRATCH=()   # files to remove on exit
# Processes started by others (daemon-bench start) to kill on exit, one pid a line. A file, not an
# array: the functions that start them run inside $(...), whose changes to variables are lost.
KILL_PIDS="$TMP/kill-pids"
cleanup() {
    local rc=$? pids pid
    trap - EXIT INT TERM HUP
    if [[ -f $KILL_PIDS ]]; then
        while read -r pid; do kill -KILL "$pid" 2>/dev/null || true; done <"$KILL_PIDS"
    fi
    pids=$(jobs -p)
    if [[ -n $pids ]]; then
        # shellcheck disable=SC2046 # one "-PGID" word per job
        kill -TERM -- $(sed 's/^/-/' <<<"$pids") 2>/dev/null || true
        { wait; } 2>/dev/null || true
    fi
    rm -rf "$TMP" "${SCRATCH[@]}"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# run CMD...: runs a command as a background job, waits for it, fails like it.
run() {
    "$@" &
    wait "$!"
}

# need_tools TOOL...: installs the Debian packages of the same names where the commands are missing.
need_tools() {
    local missing=() tool sudo=()
    for tool in "$@"; do
        type -P "$tool" >/dev/null || missing+=("$tool")  # -P: a keyword (time) does not count
    done
    ((${#missing[@]})) || return 0
    log "installing ${missing[*]}"
    ((EUID == 0)) || sudo=(sudo)
    run "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    run "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
}

if ! command -v swift >/dev/null && [[ -x /opt/swift/usr/bin/swift ]]; then
    PATH="/opt/swift/usr/bin:$PATH"
fi
mkdir -p "$BENCH"
RELEASE="$ROOT/.build/release"

# build_release PRODUCT...: builds the products as `make release` does (static Swift runtime, lld),
# so that what is measured is what is installed; the log goes to .bench/build.log.
build_release() {
    local product
    command -v swift >/dev/null || die "swift not found"
    for product in "$@"; do
        log "building $product (release)"
        if ! run swift build -c release --static-swift-stdlib --product "$product" >"$BENCH/build.log" 2>&1; then
            cat "$BENCH/build.log" >&2
            die "building $product failed"
        fi
    done
}

# cpu_threads PID: the CPU time of each of the process's threads so far, "TID NANOSECONDS" a line, from
# /proc/PID/task/*/schedstat (nanosecond resolution, where /proc/PID/stat counts 10 ms ticks).
cpu_threads() {
    local task
    for task in /proc/"$1"/task/*; do
        [[ -r $task/schedstat ]] && printf '%s %s\n' "${task##*/}" "$(cut -d' ' -f1 "$task/schedstat" 2>/dev/null)"
    done
    return 0
}
# cpu_spent BEFORE AFTER: the nanoseconds the threads listed in AFTER (cpu_threads) ran since BEFORE;
# a thread born since counts whole. Thread by thread, because a thread that ended in between takes
# its time with it: a plain sum then went down, and read as less than nothing. (%.0f: mawk prints
# %d no higher than 2^31 - 1, which is 2.1 s of CPU.)
cpu_spent() {
    awk 'NR == FNR { before[$1] = $2; next } $2 != "" { spent += $2 - before[$1] } END { printf "%.0f\n", spent }' \
        <(printf '%s\n' "$1") <(printf '%s\n' "$2")
}

# kv KEY: the value of the first "KEY value" line on standard input.
kv() { awk -v k="$1" '$1 == k { print $2; exit }'; }

# --- test audio -------------------------------------------------------------
# make_wav SECONDS OUT.wav: two tones (220 Hz left, 330 Hz right), a C-major chord and pink noise at
# low volume, mixed by sox with a fixed seed (-R). The rate and channels come before -n so that synth
# runs at 44.1 kHz stereo.
make_wav() {
    local s=$1 out=$2 gen="sox -R -r 44100 -c 2 -n -p synth $1"
    run sox -R -m \
        -v 0.25 "|$gen sine 220 sine 330" \
        -v 0.20 "|$gen sine 261.63 synth $s sine mix 329.63 synth $s sine mix 392" \
        -v 0.08 "|$gen pinknoise" \
        -b 16 "$out"
}

# make_mp3 SECONDS OUT.mp3 LAME-OPTIONS...: the test signal encoded by lame, unless OUT.mp3 exists.
# Written to OUT.mp3.part and renamed when complete, so that an interrupted run leaves no truncated
# MP3 behind.
make_mp3() {
    local seconds=$1 mp3=$2 wav="$TMP/audio-$1.wav"
    shift 2
    [[ -s $mp3 ]] && return 0
    log "making ${seconds} s of test audio: ${mp3#"$ROOT/"} (lame $*)"
    SCRATCH+=("$mp3.part")
    [[ -s $wav ]] || make_wav "$seconds" "$wav"
    run lame --quiet --noreplaygain "$@" "$wav" "$mp3.part"
    mv "$mp3.part" "$mp3"
}

# --- statistics ---------------------------------------------------------------
# stats: reads numbers, one a line; prints "median min max".
stats() {
    sort -g | awk '{ v[NR] = $1 }
        END {
            if (NR == 0) exit 1
            m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            print m, v[1], v[NR]
        }'
}

# fmt FORMAT "median min max": prints "median (min-max)" in that format.
fmt() {
    local f=$1
    awk -v f="$f" '{ printf f " (" f "-" f ")\n", $1, $2, $3 }' <<<"$2"
}

# cpu_time CMD...: runs CMD with stdout discarded; prints "wall user sys" (seconds, from bash's time
# keyword in a child shell: millisecond resolution).
cpu_time() {
    local out="$TMP/time.$RANDOM"
    run bash -c 'out=$1; shift; TIMEFORMAT="%3R %3U %3S"
        { time "$@" >/dev/null 2>&3 3>&-; } 3>&2 2>"$out"' _ "$out" "$@"
    cat "$out"
    rm -f "$out"
}

# print_table PEER-VERSION HEADER: the report: a title line, then ROWS ("figure|mine|peer|ratio", or more
# columns)
# under HEADER as aligned columns, then NOTES; also written to .bench/$BENCH_NAME.txt.
print_table() {
    local peer=$1 header=$2
    {
        printf '%s %s, commit %s, %s, %s cores\n' "$BENCH_NAME" "$(date -u +%Y-%m-%dT%H:%MZ)" \
            "$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo '?')" "$peer" "$(nproc)"
        printf '%s\n' "$header" "${ROWS[@]}" |
            awk -F'|' '
                {
                    for (i = 1; i <= NF; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) }
                    if (NF > nf) nf = NF
                    n = NR
                }
                END {
                    for (r = 1; r <= n; r++) {
                        line = ""
                        for (i = 1; i <= nf; i++) line = line sprintf(i < nf ? "%-" w[i] "s | " : "%s", c[r, i])
                        print line
                        if (r == 1) { gsub(/./, "-", line); print line }
                    }
                }'
        printf '%s\n' "${NOTES[@]}"
    } | tee "$BENCH/$BENCH_NAME.txt"
}
