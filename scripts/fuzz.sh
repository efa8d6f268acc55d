#!/usr/bin/env bash
# fuzz.sh: builds the libFuzzer targets in Fuzz/ (a package of their own, so that the main build never
# sees sanitizer flags) with AddressSanitizer and LeakSanitizer, and runs each from its seed corpus.
#   scripts/fuzz.sh [TARGET] [SECONDS]
#     TARGET   request, arguments, filter, statefile, mp3, flac, vorbis, opus, session, or all (the default)
#     SECONDS  how long each target runs (default 60)
# New inputs the fuzzer finds go to .build-fuzz/fuzz/corpus/TARGET, never to the committed corpus in
# Fuzz/Corpus/TARGET. Exits non-zero when any target crashed, hung, leaked or ran out of memory, after
# printing the report and the path of the input that reproduces it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH

all_targets=(request arguments filter statefile mp3 flac vorbis opus stream session)
target=${1:-all}
seconds=${2:-60}
case "$target" in
    all) targets=("${all_targets[@]}") ;;
    request | arguments | filter | statefile | mp3 | flac | vorbis | opus | stream | session) targets=("$target") ;;
    *) echo "usage: scripts/fuzz.sh [request|arguments|filter|statefile|mp3|flac|vorbis|opus|stream|session|all] [SECONDS]" >&2; exit 2 ;;
esac
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
    echo "fuzz: SECONDS must be a positive whole number, not '$seconds'" >&2
    exit 2
fi

scripts/setup.sh build >&2

# The executable target of each name, and the longest input worth trying: argument values are short,
# filters a request line, request streams, sessions and state files a few lines, MP3s a tag and a few
# frames.
declare -A products=([request]=FuzzRequest [arguments]=FuzzArguments [filter]=FuzzFilter [statefile]=FuzzStateFile
    [mp3]=FuzzMP3 [session]=FuzzSession)
declare -A max_len=([request]=4096 [arguments]=128 [filter]=4096 [statefile]=4096 [mp3]=16384 [session]=4096)
# FLAC, Ogg Vorbis and Ogg Opus: their headers (a Vorbis setup alone takes a few KiB) and some audio.
products+=([flac]=FuzzFLAC [vorbis]=FuzzVorbis [opus]=FuzzOpus)
max_len+=([flac]=16384 [vorbis]=16384 [opus]=16384)
# A station's first bytes in pieces: headers and some audio of any of the four formats.
products+=([stream]=FuzzStream)
max_len+=([stream]=16384)

scratch=$PWD/.build-fuzz
work=$scratch/fuzz
mkdir -p "$work"

# `-sanitize=fuzzer,address` in one flag: given as two, swiftc keeps only the last. `--sanitize fuzzer`
# as well, because it is what tells SwiftPM that libFuzzer provides `main`: without it SwiftPM links
# executables with `--defsym main=<Target>_main`, which these targets do not define. lld, as the release
# build uses, because gold warns about every ASan symbol it cannot export. Release (-O keeps every
# precondition and overflow trap): 2.5 to 7 times the executions per second of a debug build, for
# half a minute more of building from scratch.
flags=(-c release --sanitize fuzzer -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
    -Xswiftc -use-ld=lld)
build=(swift build --package-path Fuzz --scratch-path "$scratch" "${flags[@]}")
if ((${#targets[@]} == 1)); then
    build+=(--product "${products[$target]}")
fi
echo "== fuzz: build (${targets[*]})"
start=$SECONDS
if ! "${build[@]}" >"$work/build.log" 2>&1; then
    grep -v '^\[' "$work/build.log" | tail -n 60 >&2
    echo "fuzz: the build failed (log: $work/build.log)" >&2
    exit 1
fi
grep -v '^\[' "$work/build.log"
if grep -E '^/.*: warning: ' "$work/build.log"; then
    echo "fuzz: the build printed warnings (above)" >&2
    exit 1
fi
echo "fuzz: built in $((SECONDS - start)) s"
bin=$(swift build --package-path Fuzz --scratch-path "$scratch" "${flags[@]}" --show-bin-path)

# Swift's own crash backtracer hangs under ASan; libFuzzer and ASan report crashes themselves.
export SWIFT_BACKTRACE=enable=no
# Leak detection is on by default with ASan; said here so that nobody turns it off by accident. The
# suppressions are for allocations LeakSanitizer cannot see held (each is explained in the file).
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1
export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$PWD/Fuzz/lsan.supp:print_suppressions=0

artifacts=$work/artifacts
failed=()
summary=()
for name in "${targets[@]}"; do
    corpus=$work/corpus/$name
    log=$work/$name.log
    mkdir -p "$corpus" "$artifacts"
    echo "== fuzz: $name for $seconds s"
    # The first corpus folder receives what the run finds; the committed seeds are only read.
    status=0
    "$bin/${products[$name]}" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="${max_len[$name]}" \
        -detect_leaks=1 -print_final_stats=1 -artifact_prefix="$artifacts/$name-" \
        "$corpus" "Fuzz/Corpus/$name" >"$log" 2>&1 || status=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    if ((status != 0)); then
        failed+=("$name")
        summary+=("$(printf '%-10s FAILED (exit %d)' "$name" "$status")")
        echo "fuzz: $name failed; the end of its log ($log):" >&2
        tail -n 60 "$log" >&2
        reproducer=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
        if [[ -n $reproducer ]]; then
            echo "fuzz: reproduce with: SWIFT_BACKTRACE=enable=no $bin/${products[$name]} $reproducer" >&2
        fi
    else
        summary+=("$(printf '%-10s %10s runs  %7s exec/s  %s inputs in %s' "$name" "${runs:-?}" "${rate:-?}" \
            "$(find "$corpus" -type f | wc -l)" "${corpus#"$PWD/"}")")
    fi
done

echo "== fuzz: summary ($seconds s each)"
printf '%s\n' "${summary[@]}"
echo "fuzz: $((${#targets[@]} - ${#failed[@]})) passed, ${#failed[@]} failed"
if ((${#failed[@]} > 0)); then
    echo "fuzz: FAILED: ${failed[*]} (reproducers in ${artifacts#"$PWD/"})" >&2
    exit 1
fi
