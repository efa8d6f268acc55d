#!/usr/bin/env bash
# Checks the systemd units: `systemd-analyze verify` must print nothing at all (it warns with exit 0),
# for the system and the user units, and the system service must rate 2.0 or lower in
# `systemd-analyze security`. verify needs ExecStart's binary to exist, so the units are checked in a
# scratch copy whose ExecStart points at the built playerd (default .build/debug/playerd), and the
# MPRIS bridge's user unit at the playerd-mpris built beside it.
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

rating=$(systemd-analyze security --offline=true "$scratch/system/playerd.service" 2>&1 |
    sed -n 's/.*Overall exposure level for playerd.service: \([0-9.]*\).*/\1/p')
if [[ -z $rating ]] || awk -v r="$rating" 'BEGIN { exit !(r > 2.0) }'; then
    echo "check-units: systemd-analyze security rates playerd.service ${rating:-unknown}; it must be 2.0 or lower" >&2
    exit 1
fi
echo "check-units: units verify cleanly; playerd.service's exposure rating is $rating"
