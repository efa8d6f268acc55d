#!/usr/bin/env bash
# bench-web.sh (section I of `make bench`; alone: `make bench-web`): what the web remote (`playerd
# --http`) costs while playing, with no page open and with one, against what mpd 0.23 pays for one idle
# client. BENCHMARKS.md (section I) says how each figure is measured and shows a run.
#
# Three daemons play the same fixture song (Fixtures/stereo-44k-cbr.mp3, 3 s) queued twice, on repeat (a
# song change, and so a `player` event, every 3 s: playerd reports none when a one-song queue repeats)
# on the paced null output, at the same time, for the whole run:
#   playerd without --http;  playerd with --http 127.0.0.1:PORT;  mpd (null output, sync "yes").
# Their CPU (user + sys of every thread, /proc/PID/task/*/schedstat) is read over BENCH_WEB_ROUNDS (4)
# rounds of two windows of BENCH_WEB_SECONDS (30) s each, in alternating order (on-off, off-on, ...):
#   off: no client but the benchmark's checks between windows;
#   on:  one page open on the playerd with --http — a client that loads the page and its data as the
#        page does, holds the WebSocket /api/events open and, at each change it reports, makes the
#        page's requests (GET /api/status for player, mixer and options; the queue for playlist, ...) —
#        and one `mpc idleloop` on mpd (MPD's idle client: `idle` in a loop).
# The table: playerd with --http against without, no page open (target: nothing measurable, 1.0); the
# CPU one page adds (on minus off, round by round) against the CPU mpd's idle client adds (target: no
# more); the same difference on the playerd without --http, which nothing changed between the
# windows: the noise floor of a difference; and the CPU of the HTTP server's own threads alone. Printed and written to .bench/bench-web.txt; no process is
# left behind, also on Ctrl-C.
# Knobs (environment): BENCH_WEB_ROUNDS (4, at least 3), BENCH_WEB_SECONDS (30), BENCH_SKIP_BUILD (1: use
# the release build as it is; bench.sh sets it).
set -euo pipefail

ROUNDS=${BENCH_WEB_ROUNDS:-4}
SECONDS_PER_WINDOW=${BENCH_WEB_SECONDS:-30}

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BENCH_NAME=bench-web
# shellcheck source=bench-common.sh
source scripts/bench-common.sh
started=$(date +%s)
((ROUNDS >= 3)) || die "BENCH_WEB_ROUNDS must be 3 or more"

# --- 0: tools, build, the song ---------------------------------------------------------
need_tools mpd mpc python3
if [[ ${BENCH_SKIP_BUILD:-} != 1 ]]; then
    scripts/setup.sh build >&2
    build_release playerd
fi
PLAYERD="$RELEASE/playerd"
[[ -x $PLAYERD ]] || die "$PLAYERD is not built"
SONG=stereo-44k-cbr.mp3
MUSIC="$TMP/music"
mkdir -p "$MUSIC"
cp "Fixtures/$SONG" "$MUSIC/"

# --- the page, as a client ------------------------------------------------------------------
# page.py HOST PORT: loads the page and its data as the page does, then holds the WebSocket
# /api/events open (Python's standard library only: a WebSocket client of RFC 6455's plain frames) and,
# at each change it reports, makes the page's requests on one kept-alive connection with the session's
# cookie, as the browser does. Prints "ready" once the first frame (the subscription standing) came and
# the initial requests are answered ("ready REQUESTS"), then "frame N REQUESTS NAMES" for every later
# frame (REQUESTS: all it has made so far); fails on any
# answer but 2xx (404 for a cover: there is none).
cat >"$TMP/page.py" <<'PY'
import base64, http.client, json, os, socket, struct, sys

host, port = sys.argv[1], int(sys.argv[2])
http_connection = http.client.HTTPConnection(host, port, timeout=10)
cookie = None
requests = 0


def get(path, allowed=(200, 204, 304)):
    global cookie, requests
    headers = {"Cookie": cookie} if cookie else {}
    http_connection.request("GET", path, headers=headers)
    response = http_connection.getresponse()
    body = response.read()
    requests += 1
    for name, value in response.getheaders():
        if name.lower() == "set-cookie" and value.startswith("playerd_session="):
            cookie = value.split(";", 1)[0]
    if response.status not in allowed:
        sys.exit(f"page.py: GET {path} answered {response.status}: {body[:200]!r}")
    return body


# What the page fetches for each name in a frame (app.js's REFRESH_FOR).
FETCHES = {
    "player": ["/api/status"],
    "mixer": ["/api/status"],
    "options": ["/api/status"],
    "update": ["/api/status"],
    "playlist": ["/api/queue", "/api/status"],
    "stored_playlist": ["/api/playlists"],
    "output": ["/api/outputs"],
    "database": ["/api/library/folder?path="],
    "partition": ["/api/status", "/api/queue", "/api/playlists", "/api/outputs"],
}
last_cover = None


def refetch(changed):
    global last_cover
    paths = []
    for name in changed:
        paths += [p for p in FETCHES.get(name, []) if p not in paths]
    for path in paths:
        body = get(path)
        if path == "/api/status":
            current = json.loads(body).get("current") or {}
            cover = current.get("cover")
            if cover and cover != last_cover:  # the browser caches a cover it has (max-age 3600)
                last_cover = cover
                get(cover, allowed=(200, 304, 404))


for path in ["/", "/app.css", "/app.js", "/icon.svg", "/api/session"]:
    get(path)
if cookie is None:
    sys.exit("page.py: /api/session set no playerd_session cookie")

events = socket.create_connection((host, port), timeout=None)
key = base64.b64encode(os.urandom(16)).decode()
events.sendall(
    (
        f"GET /api/events HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nOrigin: http://{host}:{port}\r\n"
        f"Cookie: {cookie}\r\n\r\n"
    ).encode()
)
buffer = b""
while b"\r\n\r\n" not in buffer:
    chunk = events.recv(4096)
    if not chunk:
        sys.exit("page.py: /api/events closed during the handshake")
    buffer += chunk
head, buffer = buffer.split(b"\r\n\r\n", 1)
if not head.startswith(b"HTTP/1.1 101"):
    sys.exit(f"page.py: /api/events answered {head.splitlines()[0]!r}")


def take(count):
    global buffer
    while len(buffer) < count:
        chunk = events.recv(65536)
        if not chunk:
            sys.exit("page.py: /api/events closed")
        buffer += chunk
    data, buffer = buffer[:count], buffer[count:]
    return data


def send(opcode, payload):
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    assert len(payload) < 126
    events.sendall(bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + masked)


def frames():
    message = b""
    while True:
        first, second = take(2)
        opcode, length = first & 0x0F, second & 0x7F
        if length == 126:
            (length,) = struct.unpack("!H", take(2))
        elif length == 127:
            (length,) = struct.unpack("!Q", take(8))
        mask = take(4) if second & 0x80 else None
        payload = take(length)
        if mask:
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        if opcode == 0x8:
            sys.exit("page.py: the server closed /api/events")
        if opcode == 0x9:
            send(0xA, payload)
        elif opcode in (0x0, 0x1):
            message += payload
            if first & 0x80:
                yield json.loads(message)
                message = b""


count = 0
for frame in frames():
    if count == 0:
        if frame != {"changed": []}:
            sys.exit(f"page.py: the first frame was {frame!r}, not {{'changed': []}}")
        # The page's first load, once the subscription stands.
        for path in ["/api/status", "/api/queue", "/api/outputs", "/api/playlists", "/api/library/folder?path="]:
            get(path)
        refetch(["player"])
        print(f"ready {requests}", flush=True)
    else:
        refetch(frame["changed"])
        print(f"frame {count} {requests} {','.join(frame['changed'])}", flush=True)
    count += 1
PY

# --- daemons ------------------------------------------------------------------------------
DAEMONS="$TMP/daemons"
mkdir -p "$DAEMONS/mpd"
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
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE="http://127.0.0.1:$PORT"

# answers SOCKET: waits up to 10 s for the daemon on SOCKET to answer.
answers() {
    for _ in $(seq 100); do
        mpc --host "$1" status >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}
# start_playerd NAME ARGUMENT...: a playerd of its own (socket, library, log in $DAEMONS/NAME), in the
# background; sets PID.
start_playerd() {
    local dir="$DAEMONS/$1"
    shift
    mkdir -p "$dir"
    "$PLAYERD" --socket "$dir/socket" --output null --music-dir "$MUSIC" --library "$dir/library.db" \
        --state-file none --log-level warning "$@" 2>"$dir/log" &
    PID=$!
    answers "$dir/socket" || die "playerd ($*) did not start: $(cat "$dir/log")"
}
start_playerd bare
BARE_PID=$PID BARE_SOCKET="$DAEMONS/bare/socket"
start_playerd web --http "127.0.0.1:$PORT"
WEB_PID=$PID WEB_SOCKET="$DAEMONS/web/socket"
/usr/bin/mpd --no-daemon "$DAEMONS/mpd/mpd.conf" 2>"$DAEMONS/mpd/stderr" &
MPD_PID=$!
MPD_SOCKET="$DAEMONS/mpd/socket"
answers "$MPD_SOCKET" || die "mpd did not start: $(cat "$DAEMONS/mpd/stderr")"
run mpc --host "$MPD_SOCKET" -q update --wait
for _ in $(seq 100); do
    python3 - "$BASE/api/status" 2>/dev/null <<'PY' && break
import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=1).read()
PY
    sleep 0.1
done

# playing NAME SOCKET: fails the run unless the daemon says it is playing the song.
playing() {
    local status
    status=$(mpc --host "$2" status 2>&1) || die "$1 does not answer: $status"
    grep -q '^\[playing\]' <<<"$status" || die "$1 is not playing: $(tr '\n' ' ' <<<"$status")"
}
for socket in "$BARE_SOCKET" "$WEB_SOCKET" "$MPD_SOCKET"; do
    run mpc --host "$socket" -q clear
    run mpc --host "$socket" -q add "$SONG"
    run mpc --host "$socket" -q add "$SONG"
    run mpc --host "$socket" -q repeat on
    run mpc --host "$socket" -q play
done
sleep 3
playing "playerd" "$BARE_SOCKET"
playing "playerd --http" "$WEB_SOCKET"
playing mpd "$MPD_SOCKET"
python3 - "$BASE/api/status" <<'PY' || die "playerd --http's /api/status does not say it plays"
import json, sys, urllib.request
status = json.load(urllib.request.urlopen(sys.argv[1], timeout=5))
sys.exit(0 if status.get("state") == "play" else f"/api/status: {status!r}")
PY

# --- recording (as in bench.sh) ---------------------------------------------------------------
mkdir -p "$TMP/samples"
add() { printf '%s\n' "$2" >>"$TMP/samples/$1"; }
summary() { stats <"$TMP/samples/$1"; }
ROWS=()
NOTES=()
row() {
    local figure=$1 f=$2 mine peer ratio
    mine=$(summary "$3")
    peer=$(summary "$5")
    # No ratio of a difference at or below nothing: it would say nothing but the noise's sign.
    ratio=$(awk -v a="${mine%% *}" -v b="${peer%% *}" 'BEGIN { if (a > 0 && b > 0) printf "%.3f", a / b; else print "-" }')
    ROWS+=("$figure|$(fmt "$f" "$mine")|$4|$(fmt "$f" "$peer")|$ratio|$6")
}

# --- the windows ----------------------------------------------------------------------------
# cpu_server_threads PID: cpu_threads of the threads only a playerd with --http runs: SwiftNIO's
# singleton event loops (NIO-SGLTN-...), which carry the HTTP server and its sessions' connections to
# the daemon. The MPD socket's own event loop (NIO-ELT-...) and NIO's thread pool (TP-#..., the
# daemon's file work) run in both.
cpu_server_threads() {
    local task comm
    for task in /proc/"$1"/task/*; do
        comm=$(cat "$task/comm" 2>/dev/null) || continue
        [[ $comm == NIO-SGLTN-* && -r $task/schedstat ]] &&
            printf '%s %s\n' "${task##*/}" "$(cut -d' ' -f1 "$task/schedstat" 2>/dev/null)"
    done
    return 0
}
# requests_so_far: the requests the page's client has made since it started (its last line says).
requests_so_far() { awk '$1 == "ready" { r = $2 } $1 == "frame" { r = $3 } END { print r + 0 }' "$TMP/page.out"; }
# window on|off ROUND: one window; records each daemon's CPU in it as % of a core.
window() {
    local kind=$1 round=$2 page_pid="" idle_pid="" t0 t1 b0 b1 w0 w1 m0 m1 n0 n1 frames0=0 frames1=0 requests0=0 idle0=0
    if [[ $kind == on ]]; then
        : >"$TMP/page.out"
        python3 "$TMP/page.py" 127.0.0.1 "$PORT" >"$TMP/page.out" 2>"$TMP/page.err" &
        page_pid=$!
        : >"$TMP/idle.out"
        mpc --host "$MPD_SOCKET" idleloop >"$TMP/idle.out" &
        idle_pid=$!
        for _ in $(seq 100); do
            grep -q '^ready' "$TMP/page.out" && break
            kill -0 "$page_pid" 2>/dev/null || die "the page's client failed: $(cat "$TMP/page.err")"
            sleep 0.1
        done
        grep -q '^ready' "$TMP/page.out" || die "the page's client is not ready after 10 s"
        sleep 1
        frames0=$(grep -c '^frame' "$TMP/page.out" || true)
        requests0=$(requests_so_far)
        idle0=$(wc -l <"$TMP/idle.out")
    fi
    t0=$(date +%s%N)
    b0=$(cpu_threads "$BARE_PID") && w0=$(cpu_threads "$WEB_PID") && m0=$(cpu_threads "$MPD_PID")
    n0=$(cpu_server_threads "$WEB_PID")
    sleep "$SECONDS_PER_WINDOW"
    b1=$(cpu_threads "$BARE_PID") && w1=$(cpu_threads "$WEB_PID") && m1=$(cpu_threads "$MPD_PID")
    n1=$(cpu_server_threads "$WEB_PID")
    t1=$(date +%s%N)
    if [[ $kind == on ]]; then
        frames1=$(grep -c '^frame' "$TMP/page.out" || true)
        kill -0 "$page_pid" 2>/dev/null || die "the page's client failed: $(cat "$TMP/page.err")"
        kill -0 "$idle_pid" 2>/dev/null || die "mpc idleloop stopped"
        kill -TERM "$page_pid" "$idle_pid" 2>/dev/null || true
        wait "$page_pid" "$idle_pid" 2>/dev/null || true
        add frames "$((frames1 - frames0))"
        add requests "$(($(requests_so_far) - requests0))"
        add idle "$(($(wc -l <"$TMP/idle.out") - idle0))"
        ((frames1 > frames0)) || die "the page saw no change in $SECONDS_PER_WINDOW s of 3 s songs on repeat"
    fi
    playing "playerd" "$BARE_SOCKET" && playing "playerd --http" "$WEB_SOCKET" && playing mpd "$MPD_SOCKET"
    pct() { awk -v c="$(cpu_spent "$1" "$2")" -v w="$((t1 - t0))" 'BEGIN { printf "%.4f", 100 * c / w }'; }
    printf '%s %s %s %s %s %s\n' "$round" "$kind" "$(pct "$b0" "$b1")" "$(pct "$w0" "$w1")" "$(pct "$m0" "$m1")" \
        "$(awk -v c="$(cpu_spent "$n0" "$n1")" 'BEGIN { printf "%.3f", c / 1e6 }')" >>"$TMP/windows"
}
log "I: $ROUNDS rounds of two $SECONDS_PER_WINDOW s windows (one page open and mpd's idle client, or none)"
for ((i = 0; i < ROUNDS; i++)); do
    for kind in $( ((i % 2)) && echo "off on" || echo "on off"); do
        window "$kind" "$i"
    done
done
# Each round: the off window's CPU, and what the on window added to it.
while read -r round bare web mpd server; do
    add server-off "$server"
    add bare-off "$bare"
    add web-off "$web"
    add mpd-off "$mpd"
    on=$(awk -v r="$round" '$1 == r && $2 == "on" { print $3, $4, $5, $6 }' "$TMP/windows")
    read -r bare_on web_on mpd_on server_on <<<"$on"
    add server-on "$server_on"
    add web-on "$web_on"
    add mpd-on "$mpd_on"
    add web-added "$(awk -v a="$web_on" -v b="$web" 'BEGIN { printf "%.4f", a - b }')"
    add mpd-added "$(awk -v a="$mpd_on" -v b="$mpd" 'BEGIN { printf "%.4f", a - b }')"
    add bare-added "$(awk -v a="$bare_on" -v b="$bare" 'BEGIN { printf "%.4f", a - b }')"
done < <(awk '$2 == "off" { print $1, $3, $4, $5, $6 }' "$TMP/windows")

row "CPU while playing, no page open (% of a core)" %.3f web-off "playerd without --http" bare-off "1.0 (none measurable)"
row "CPU added by one open page / idle client (% of a core)" %.3f web-added "mpd, mpc idleloop" mpd-added "<= 1.0"
row "CPU while playing, page open / idle client (% of a core)" %.3f web-on "mpd, mpc idleloop" mpd-on ""

NOTES+=("Ratio: the medians' playerd / peer (none where one is 0 or less). Added = the on window's CPU less the \
off window's, round by round.")
NOTES+=("Noise floor: the same on - off difference on playerd without --http, which nothing changed: $(fmt %.3f \
    "$(summary bare-added)") % of a core.")
NOTES+=("In each on window (medians) the page saw $(summary frames | cut -d' ' -f1) frames and made $(summary requests |
    cut -d' ' -f1) requests for them; mpd's idle client was told of $(summary idle | cut -d' ' -f1) changes. The song: \
Fixtures/$SONG (3 s), queued twice, on repeat; windows of $SECONDS_PER_WINDOW s.")
NOTES+=("The HTTP server's own threads (NIO-SGLTN-*) in playerd --http: $(fmt %.3f "$(summary server-off)") ms of CPU in a \
window with no page open, $(fmt %.3f "$(summary server-on)") ms with one.")
NOTES+=("Every window, in run order (round, kind, CPU % of playerd, playerd --http, mpd; ms of the HTTP server's threads):")
while read -r line; do NOTES+=("  $line"); done <"$TMP/windows"
NOTES+=("Took $(($(date +%s) - started)) s. Peer: $(mpd --version | head -n 1).")
print_table "$(uname -r), $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)" \
    "figure|playerd --http median (min-max)|peer|peer median (min-max)|ratio|target"
