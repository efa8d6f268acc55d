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

# The system units with the drop-ins that open TCP port 6600 (systemd/tcp/).
mkdir -p "$scratch/tcp"
cp "$scratch/system/playerd.service" "$scratch/system/playerd.socket" "$scratch/tcp/"
cp -r systemd/tcp/playerd.service.d systemd/tcp/playerd.socket.d "$scratch/tcp/"
output=$(systemd-analyze verify "$scratch/tcp/playerd.service" "$scratch/tcp/playerd.socket" 2>&1) || failed=1
if [[ -n $output || $failed -ne 0 ]]; then
    echo "check-units: systemd-analyze verify of the system units with the TCP drop-ins failed:" >&2
    echo "$output" >&2
    exit 1
fi

rating_of() {
    systemd-analyze security --offline=true "$1" 2>&1 |
        sed -n 's/.*Overall exposure level for playerd.service: \([0-9.]*\).*/\1/p'
}
rating=$(rating_of "$scratch/system/playerd.service")
if [[ -z $rating ]] || awk -v r="$rating" 'BEGIN { exit !(r > 2.0) }'; then
    echo "check-units: systemd-analyze security rates playerd.service ${rating:-unknown}; it must be 2.0 or lower" >&2
    exit 1
fi
tcp_rating=$(rating_of "$scratch/tcp/playerd.service")
if [[ -z $tcp_rating ]]; then
    echo "check-units: systemd-analyze security gave no rating for playerd.service with the TCP drop-ins" >&2
    exit 1
fi
echo "check-units: units verify cleanly; playerd.service's exposure rating is $rating ($tcp_rating with the TCP drop-ins)"
