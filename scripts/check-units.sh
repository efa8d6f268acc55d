#!/usr/bin/env bash
# Checks the systemd units: `systemd-analyze verify` must print nothing at all (it warns with exit 0),
# for the system and the user units, and for the system units with the drop-ins of systemd/tcp/ (MPD's
# port), of systemd/http/ (the web remote) and with both; the system service must rate 2.0 or lower in
# `systemd-analyze security`, alone and with each set of drop-ins. verify needs ExecStart's binary to
# exist, so the units are checked in a scratch copy whose ExecStart points at the built playerd (default
# .build/debug/playerd), and the MPRIS bridge's user unit at the playerd-mpris built beside it.
set -euo pipefail
cd "$(dirname "$0")/.."

binary=$(realpath "${1:-.build/debug/playerd}")
[[ -x $binary ]] || { echo "check-units: $binary is not built" >&2; exit 1; }
bridge=$(dirname "$binary")/playerd-mpris
[[ -x $bridge ]] || { echo "check-units: $bridge is not built" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/system" "$scratch/user" "$scratch/runtime"
chmod 700 "$scratch/runtime"
for unit in playerd.service playerd.socket; do
    sed "s#/usr/local/bin/playerd#$binary#" "systemd/$unit" > "$scratch/system/$unit"
    sed "s#/usr/local/bin/playerd#$binary#" "systemd/user/$unit" > "$scratch/user/$unit"
done
sed "s#/usr/local/bin/playerd-mpris#$bridge#" systemd/user/playerd-mpris.service > "$scratch/user/playerd-mpris.service"

failed=0
output=$(systemd-analyze verify "$scratch/system/playerd.service" "$scratch/system/playerd.socket" 2>&1) || failed=1
if [[ -n $output || $failed -ne 0 ]]; then
    echo "check-units: systemd-analyze verify of the system units failed:" >&2
    echo "$output" >&2
    exit 1
fi
output=$(XDG_RUNTIME_DIR="$scratch/runtime" systemd-analyze verify --user \
    "$scratch/user/playerd.service" "$scratch/user/playerd.socket" "$scratch/user/playerd-mpris.service" 2>&1) ||
    failed=1
if [[ -n $output || $failed -ne 0 ]]; then
    echo "check-units: systemd-analyze verify of the user units failed:" >&2
    echo "$output" >&2
    exit 1
fi

# The system units with drop-ins: DIR... are folders holding playerd.service.d/ or playerd.socket.d/,
# copied into a scratch folder beside the units in the order given.
with_drop_ins() {
    local name=$1 dir
    shift
    mkdir -p "$scratch/$name"
    cp "$scratch/system/playerd.service" "$scratch/system/playerd.socket" "$scratch/$name/"
    for dir in "$@"; do
        cp -r "$dir"/. "$scratch/$name/"
    done
    output=$(systemd-analyze verify "$scratch/$name/playerd.service" "$scratch/$name/playerd.socket" 2>&1) || failed=1
    if [[ -n $output || $failed -ne 0 ]]; then
        echo "check-units: systemd-analyze verify of the system units with the drop-ins of $* failed:" >&2
        echo "$output" >&2
        exit 1
    fi
}
with_drop_ins tcp systemd/tcp          # MPD's port 6600
with_drop_ins http systemd/http        # the web remote, playerd --http on port 6680
with_drop_ins both systemd/tcp systemd/http

rating_of() {
    systemd-analyze security --offline=true "$1" 2>&1 |
        sed -n 's/.*Overall exposure level for playerd.service: \([0-9.]*\).*/\1/p'
}
# rated DIR WHAT: playerd.service's rating in DIR, which must be 2.0 or lower.
rated() {
    local rating
    rating=$(rating_of "$scratch/$1/playerd.service")
    if [[ -z $rating ]] || awk -v r="$rating" 'BEGIN { exit !(r > 2.0) }'; then
        echo "check-units: systemd-analyze security rates playerd.service$2 ${rating:-unknown}; it must be 2.0 or lower" >&2
        exit 1
    fi
    printf '%s\n' "$rating"
}
rating=$(rated system "")
tcp_rating=$(rated tcp " with the TCP drop-ins")
http_rating=$(rated http " with the web remote's drop-in")
both_rating=$(rated both " with the TCP and web remote's drop-ins")
echo "check-units: units verify cleanly; playerd.service's exposure rating is $rating ($tcp_rating with the TCP" \
    "drop-ins, $http_rating with the web remote's, $both_rating with both)"
