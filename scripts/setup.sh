#!/usr/bin/env bash
# Installs, with apt-get, the system packages playerd needs where they are missing.
#   scripts/setup.sh build   what building needs: pkg-config, the decoders' libraries (libmpg123-dev,
#                            libflac-dev, libvorbis-dev, libopusfile-dev), libasound2-dev,
#                            libsqlite3-dev (the library's store: GRDB links the system SQLite),
#                            libsystemd-dev (sd-bus, for MPRIS on D-Bus), libsoxr-dev (the FIFO
#                            output's resampler), libchromaprint-dev (getfingerprint) and
#                            ca-certificates (the trust roots https stations are checked against)
#   scripts/setup.sh test    that, plus what the tests use as references and real peers: mpg123,
#                            flac, vorbis-tools and opus-tools (each format's reference decoder), sox,
#                            lame, Debian's mpd, mpc and python3-mpd (python-mpd2), the curses
#                            clients ncmpcpp and ncmpc with tmux to drive them, systemd's tools
#                            (systemd-analyze, systemd-socket-activate, busctl) for the unit checks
#                            and D-Bus, dbus (dbus-daemon for a private session bus, dbus-monitor),
#                            the desktop's playerctl (MPRIS's client) and mpdris2 (stock mpDris2,
#                            bridging an MPD socket to MPRIS), pulseaudio with libasound2-plugins
#                            (a private sound server whose ALSA `pulse` control is the hardware
#                            mixer's test card), and snapserver with snapclient (the FIFO output's
#                            end-to-end test), Debian's chromium and chromium-driver with python3-venv
#                            for the web remote's browser tests: they run in the project's own Python
#                            virtual environment .venv (gitignored), which gets the pip packages of
#                            scripts/python-requirements.txt (selenium, axe-selenium-python,
#                            schemathesis) when it is new or when that file changed, and openssl (a
#                            loopback https station's certificate)
# Swift itself is not installed here: it comes from swift.org (6.2 or newer).
set -euo pipefail

purpose=${1:-build}
packages=(pkg-config libmpg123-dev libflac-dev libvorbis-dev libopusfile-dev libasound2-dev libsqlite3-dev libsystemd-dev libsoxr-dev libchromaprint-dev ca-certificates)
case "$purpose" in
    build) ;;
    test) packages+=(mpg123 flac vorbis-tools opus-tools sox lame mpd mpc python3-mpd ncmpcpp ncmpc tmux systemd dbus playerctl mpdris2 pulseaudio libasound2-plugins snapserver snapclient chromium chromium-driver python3-venv openssl) ;;
    *) echo "usage: scripts/setup.sh [build|test]" >&2; exit 2 ;;
esac

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done

if ((${#missing[@]} > 0)); then
    sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        sudo=(sudo)
    fi
    echo "setup: installing ${missing[*]}"
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v swift >/dev/null; then
    echo "setup: swift is not on PATH: install Swift 6.2 or newer from https://www.swift.org/install/linux/" >&2
    exit 1
fi

if [[ $purpose == test ]]; then
    # The venv is made from Debian's python (/usr/bin/python3, 3.11 on Debian 12, whose venv module
    # python3-venv brings), not whatever python3 comes first on PATH: the development machines put a
    # pyenv 3.11.7 first, whose venv works too, but it is on no other machine, and .venv must be the same
    # on every machine this script sets up. Its pip packages are pinned in scripts/python-requirements.txt.
    cd "$(dirname "$0")/.."
    requirements=scripts/python-requirements.txt
    stamp=.venv/requirements.stamp
    if [[ ! -x .venv/bin/python ]]; then
        echo "setup: making the Python virtual environment .venv"
        /usr/bin/python3 -m venv .venv
    fi
    if ! cmp -s "$requirements" "$stamp"; then
        echo "setup: installing the pip packages of $requirements into .venv"
        .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$requirements"
        cp "$requirements" "$stamp"
    fi
fi
