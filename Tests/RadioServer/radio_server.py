#!/usr/bin/env python3
"""A loopback internet-radio server for playerd's tests and benchmarks (issue 26). Python 3.11 stdlib only.

    python3 radio_server.py --audio FILE_OR_DIR [--port 0] [--ogg F] [--opus F] [--flac F]
                            [--log FILE] [--dump DIR]

It listens on 127.0.0.1 only, prints `PORT <n>` as its first line on stdout (flushed), and serves until
killed. HTTP is spoken by hand over raw sockets so that it can be broken on purpose.

The audio: --audio is an MP3 file, or a directory whose *.mp3 files (sorted) are played one after the
other. The streams loop it for ever, without its ID3v2/ID3v1/APE tags and the Xing/Info frame (so that
the loop is plain MP3 frames back to back); /file.mp3 sends the first file as it is. Streams are sent in
real time, paced by the audio's own byte rate (frames walked at start), after a first burst of 64 KiB as
Icecast's burst-size gives a new listener.

Query parameters that every audio path takes:
    pace=0          send as fast as the client reads (default 1: real time)
    rate=N          pace at N bytes per second instead of the audio's rate
    burst=N         the first burst, in bytes (default 65536)
    start=N         begin at byte N of the looped audio (default 0)
    icy=0|1         answer Icy-MetaData: 1 with icy-metaint (default 1 on /icy.mp3, /drop.mp3,
                    /stall.mp3, /icy-status; 0 elsewhere). Metadata is only sent to a client that asked.
    metaint=N       audio bytes between metadata blocks (default 8192)
    titles=A|B|C    the StreamTitle values, in turn (default: three titles, one with quotes, one with é)
    every=S         seconds between title changes (default 5; 0: the first title for ever)
    enc=latin1      titles sent in ISO-8859-1 (default UTF-8)
    repeat=1        send the metadata in every block (default: at the first block and at each change;
                    an empty block, one zero byte, otherwise)
    name=, genre=   icy-name and icy-genre (defaults "playerd test radio", "Test")
    after=N         (drop, stall) audio bytes sent on a connection before it breaks (default 100000)
    times=N         (drop, stall) only the first N connections to this exact URL break (default: all)
    for=S           (stall) how long the stall lasts (default 30); the socket stays open, then sending
                    goes on if the client is still there
    rst=1           (drop) close with a TCP reset rather than a FIN
    down=S          (drop, stall) for S seconds after a connection broke, new connections to the same URL
                    are closed at once without an answer (a station restarting); logged as "down"
    resume=0|1      a new connection to the same URL begins where the last one ended (default 1 on
                    /drop.mp3 and /stall.mp3: a live station that did not move on; 0 elsewhere)
    end=N           (chunked) end the chunked body properly after N audio bytes (default: never)
    loop=0          send the audio once and close (no Content-Length): an end without a declared end

Paths:
    /icy.mp3                 HTTP/1.0 200, audio/mpeg, icy-name/icy-genre/icy-br, icy-metaint when asked
    /plain.mp3               HTTP/1.0 200, audio/mpeg, no ICY, no Content-Length: ends when the socket does
    /chunked.mp3             HTTP/1.1 200, Transfer-Encoding: chunked (chunks of 4096 bytes)
    /file.mp3                HTTP/1.1 200, Content-Length, the first file whole and once (Range: bytes=N-
                             answered with 206)
    /drop.mp3?after=N        as /icy.mp3, the connection closed after N audio bytes (each time, or times=N)
    /stall.mp3?after=N&for=S as /icy.mp3, nothing sent for S seconds after N audio bytes
    /redirect?to=PATH&n=K    a chain of K redirects ending at PATH (code=301|302|303|307|308, default 302;
                             rel=1 gives relative Locations). PATH may carry its own query (URL-encoded).
    /loop                    redirects to itself for ever
    /html                    200 text/html, a small page
    /lie.mp3                 says audio/mpeg, sends an HTML page (body=random: 1 MiB of random bytes,
                             seeded, paced as audio)
    /aac                     200 audio/aacp (ADTS-looking random bytes, paced)
    /404                     404 Not Found (and any unknown path); /500 gives 500 Internal Server Error
    /giant-headers           200 audio/mpeg with about 100 KB of header lines (size=N bytes), then audio
    /endless-headers         a status line then header lines for ever, one every 0.1 s (stops after 10 min)
    /slowloris               accepts and sends nothing (holds the socket until the client leaves, 10 min)
    /icy-status              `ICY 200 OK` status line (SHOUTcast v1), icy headers, audio with metadata
    /station.m3u             a plain m3u of this server's /icy.mp3 and /plain.mp3 (entries=P1|P2 to choose)
    /station-ext.m3u         #EXTM3U with #EXTINF:-1,Title lines for the same
    /station.pls             [playlist] File1/Title1/Length1... for the same
                             (the lists take ct= to override their Content-Type)
    /vorbis.ogg, /opus.ogg   the --ogg / --opus file, looped: each pass a new chained link (serial numbers
                             changed, page CRCs made again)
    /flac                    the --flac file: its fLaC header and metadata, then its frames looped

The log: one JSON line per connection when it ends, on stderr and appended to --log FILE:
    {"id": 3, "target": "/drop.mp3?after=100000", "status": 200, "offset_start": 0, "offset_end": 100000,
     "audio_bytes": 100000, "meta_blocks": 12, "how": "dropped", "request": {"method": "GET", ...headers}}
offset_start/offset_end are byte offsets into the looped audio (the stripped MP3 frames, or the Ogg/FLAC
bytes sent); "how" is finished, dropped, client-gone, stalled-client-gone, down, or error. With --dump DIR each
connection's audio bytes (metadata taken out) are also written to DIR/conn-<id>.bin, for comparing a
player's decoded output with `mpg123 -s` of what was sent.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import socketserver
import struct
import sys
import threading
import time
import urllib.parse
import zlib

MAX_REQUEST_HEAD = 16 * 1024
HOLD_LIMIT_SECONDS = 600.0
DEFAULT_TITLES = ["First Artist - First Song", "O'Neil - \"Quoted\" 'Title'", "Café Müller - Déjà vu"]

# MPEG audio frame headers -------------------------------------------------------------------------

_BITRATES = {
    # (version is MPEG-1, layer) -> kbit/s by index
    (1, 1): [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
    (1, 2): [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
    (1, 3): [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
    (2, 1): [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
    (2, 2): [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
    (2, 3): [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
}
_RATES = {3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000]}


def mp3_frame(data: bytes | memoryview, at: int) -> tuple[int, int, int] | None:
    """(frame length, samples, sample rate) of the MPEG audio frame header at `at`, or None."""
    if at + 4 > len(data):
        return None
    b0, b1, b2 = data[at], data[at + 1], data[at + 2]
    if b0 != 0xFF or (b1 & 0xE0) != 0xE0:
        return None
    version_bits = (b1 >> 3) & 3
    layer_bits = (b1 >> 1) & 3
    if version_bits == 1 or layer_bits == 0:
        return None
    layer = 4 - layer_bits
    bitrate_index = b2 >> 4
    rate_index = (b2 >> 2) & 3
    if bitrate_index in (0, 15) or rate_index == 3:
        return None
    mpeg1 = version_bits == 3
    kbps = _BITRATES[(1 if mpeg1 else 2, layer)][bitrate_index]
    rate = _RATES[version_bits][rate_index]
    padding = (b2 >> 1) & 1
    if layer == 1:
        return ((12 * kbps * 1000 // rate) + padding) * 4, 384, rate
    if layer == 2 or mpeg1:
        return 144 * kbps * 1000 // rate + padding, 1152, rate
    return 72 * kbps * 1000 // rate + padding, 576, rate


def strip_mp3(data: bytes) -> tuple[bytes, float]:
    """The MP3 frames of a file without tags and the Xing/Info frame, and their byte rate."""
    start = 0
    if data[:3] == b"ID3" and len(data) >= 10:
        size = (data[6] << 21) | (data[7] << 14) | (data[8] << 7) | data[9]
        start = 10 + size + (10 if data[5] & 0x10 else 0)
    frames = []
    samples = 0
    rate = 0
    at = start
    first = True
    while at < len(data):
        header = mp3_frame(data, at)
        if header is None:
            # Resync (garbage, or the tags at the end): the next plausible header.
            at += 1
            continue
        length, count, rate = header
        if at + length > len(data):
            break
        frame = data[at : at + length]
        if first and (b"Xing" in frame[:64] or b"Info" in frame[:64]):
            first = False
            at += length
            continue
        first = False
        frames.append(frame)
        samples += count
        at += length
    audio = b"".join(frames)
    if not audio or rate == 0:
        raise SystemExit("no MPEG audio frames found")
    return audio, len(audio) / (samples / rate)


# Ogg and FLAC ---------------------------------------------------------------------------------------


def _ogg_crc_table() -> list[int]:
    table = []
    for index in range(256):
        value = index << 24
        for _ in range(8):
            value = ((value << 1) ^ 0x04C11DB7) if value & 0x80000000 else (value << 1)
        table.append(value & 0xFFFFFFFF)
    return table


_OGG_CRC = _ogg_crc_table()


def ogg_crc(page: bytes) -> int:
    crc = 0
    for byte in page:
        crc = ((crc << 8) & 0xFFFFFFFF) ^ _OGG_CRC[((crc >> 24) & 0xFF) ^ byte]
    return crc


def ogg_pages(data: bytes) -> list[bytes]:
    pages = []
    at = 0
    while at + 27 <= len(data) and data[at : at + 4] == b"OggS":
        segments = data[at + 26]
        body = sum(data[at + 27 : at + 27 + segments])
        length = 27 + segments + body
        pages.append(data[at : at + length])
        at += length
    return pages


def ogg_rate(data: bytes) -> float:
    """Bytes per second of an Ogg Vorbis/Opus file: its size over the last granule position."""
    pages = ogg_pages(data)
    if not pages:
        raise SystemExit("not an Ogg file")
    first = pages[0]
    body = first[27 + first[26] :]
    if body[:8] == b"OpusHead":
        rate = 48000
    elif body[1:7] == b"vorbis":
        rate = struct.unpack_from("<I", body, 12)[0]
    else:
        raise SystemExit("an Ogg file neither Vorbis nor Opus")
    granule = max(struct.unpack_from("<q", page, 6)[0] for page in pages)
    return len(data) / max(granule / rate, 0.001)


def ogg_with_serial(pages: list[bytes], xor: int) -> bytes:
    """The pages with their serial numbers changed (xor) and their CRCs made again: a new chained link."""
    out = []
    for page in pages:
        mutable = bytearray(page)
        serial = struct.unpack_from("<I", mutable, 14)[0] ^ xor
        struct.pack_into("<I", mutable, 14, serial)
        struct.pack_into("<I", mutable, 22, 0)
        struct.pack_into("<I", mutable, 22, ogg_crc(bytes(mutable)))
        out.append(bytes(mutable))
    return b"".join(out)


def flac_split(data: bytes) -> tuple[bytes, bytes, float]:
    """(fLaC + metadata blocks, frames, byte rate) of a FLAC file. The head is made a live stream's:
    STREAMINFO without a total sample count or MD5 (both unknown on a radio), and no SEEKTABLE."""
    if data[:4] != b"fLaC":
        raise SystemExit("not a FLAC file")
    at = 4
    rate = 44100
    samples = 0
    blocks = []
    while True:
        header = data[at]
        length = int.from_bytes(data[at + 1 : at + 4], "big")
        block = bytearray(data[at : at + 4 + length])
        kind = header & 0x7F
        if kind == 0:
            bits = int.from_bytes(block[4 + 10 : 4 + 18], "big")
            rate = bits >> 44
            samples = bits & ((1 << 36) - 1)
            block[4 + 10 : 4 + 18] = (bits & ~((1 << 36) - 1)).to_bytes(8, "big")
            block[4 + 18 : 4 + 34] = bytes(16)
        if kind != 3:
            block[0] = kind
            blocks.append(block)
        at += 4 + length
        if header & 0x80:
            break
    blocks[-1][0] |= 0x80
    frames = data[at:]
    seconds = samples / rate if samples and rate else 1.0
    return b"fLaC" + b"".join(blocks), frames, len(frames) / seconds


# Sources of bytes ------------------------------------------------------------------------------------


class Looped:
    """An endless byte sequence: `head` once, then `body` again and again (or `passes(k)` per pass)."""

    def __init__(self, body: bytes, head: bytes = b"", passes=None):
        self.head = head
        self.body = body
        self.passes = passes
        self._cache: dict[int, bytes] = {}

    def _pass(self, index: int) -> bytes:
        if self.passes is None:
            return self.body
        if index not in self._cache:
            if len(self._cache) > 4:
                self._cache.clear()
            self._cache[index] = self.passes(index)
        return self._cache[index]

    def read(self, offset: int, count: int) -> bytes:
        """`count` bytes from `offset` of the endless sequence."""
        out = bytearray()
        if offset < len(self.head):
            out += self.head[offset : offset + count]
            offset += len(out)
        while len(out) < count:
            within = offset - len(self.head)
            index, position = divmod(within, len(self.body))
            piece = self._pass(index)[position : position + count - len(out)]
            out += piece
            offset += len(piece)
        return bytes(out)

    def once_length(self) -> int:
        return len(self.head) + len(self.body)


class Station:
    def __init__(self, args):
        mp3_files = []
        if os.path.isdir(args.audio):
            mp3_files = sorted(
                os.path.join(args.audio, name) for name in os.listdir(args.audio) if name.lower().endswith(".mp3")
            )
        else:
            mp3_files = [args.audio]
        if not mp3_files:
            raise SystemExit(f"no .mp3 file in {args.audio}")
        parts = []
        seconds = 0.0
        for path in mp3_files:
            with open(path, "rb") as handle:
                audio, rate = strip_mp3(handle.read())
            parts.append(audio)
            seconds += len(audio) / rate
        with open(mp3_files[0], "rb") as handle:
            self.first_file = handle.read()
        _, self.first_file_rate = strip_mp3(self.first_file)
        mp3 = b"".join(parts)
        self.sources = {"mp3": (Looped(mp3), len(mp3) / seconds)}
        for kind, path in (("vorbis", args.ogg), ("opus", args.opus)):
            if path:
                with open(path, "rb") as handle:
                    data = handle.read()
                pages = ogg_pages(data)
                self.sources[kind] = (
                    Looped(data, passes=lambda index, pages=pages: ogg_with_serial(pages, index * 0x01010101)),
                    ogg_rate(data),
                )
        if args.flac:
            with open(args.flac, "rb") as handle:
                head, frames, rate = flac_split(handle.read())
            self.sources["flac"] = (Looped(frames, head=head), rate)
        self.lock = threading.Lock()
        self.connections_by_target: dict[str, int] = {}
        self.resume_offsets: dict[str, int] = {}
        self.down_until: dict[str, float] = {}
        self.next_id = 0
        self.log_path = args.log
        self.dump = args.dump
        if self.dump:
            os.makedirs(self.dump, exist_ok=True)

    def new_connection(self, target: str) -> tuple[int, int]:
        """(connection id, how many connections to this target came before it)."""
        with self.lock:
            self.next_id += 1
            earlier = self.connections_by_target.get(target, 0)
            self.connections_by_target[target] = earlier + 1
            return self.next_id, earlier

    def log(self, record: dict) -> None:
        line = json.dumps(record, ensure_ascii=False)
        with self.lock:
            print(line, file=sys.stderr, flush=True)
            if self.log_path:
                with open(self.log_path, "a", encoding="utf-8") as handle:
                    handle.write(line + "\n")


# The handler -----------------------------------------------------------------------------------------


class ClientGone(Exception):
    pass


class Handler(socketserver.BaseRequestHandler):
    station: Station

    def setup(self):
        self.sock: socket.socket = self.request
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.record: dict = {}
        self.dumped = bytearray()

    # Sending ------------------------------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except OSError as error:
            raise ClientGone(str(error)) from error

    def head(self, status: str, fields: list[tuple[str, str]]) -> None:
        text = status + "\r\n" + "".join(f"{name}: {value}\r\n" for name, value in fields) + "\r\n"
        self.record["status"] = int(status.split()[1])
        self.send(text.encode("latin-1", errors="replace"))

    def simple(self, code: int, reason: str, body: str, content_type: str = "text/html", extra=()) -> None:
        data = body.encode()
        self.head(
            f"HTTP/1.1 {code} {reason}",
            [("Content-Type", content_type), ("Content-Length", str(len(data))), ("Connection", "close"), *extra],
        )
        self.send(data)
        self.record["how"] = "finished"

    # The request --------------------------------------------------------------------------------------

    def read_request(self) -> tuple[str, str, dict[str, str]] | None:
        self.sock.settimeout(10)
        data = b""
        while b"\r\n\r\n" not in data and b"\n\n" not in data:
            if len(data) > MAX_REQUEST_HEAD:
                return None
            try:
                chunk = self.sock.recv(4096)
            except OSError:
                return None
            if not chunk:
                return None
            data += chunk
        self.sock.settimeout(None)
        lines = data.split(b"\n")
        request = lines[0].decode("latin-1").strip().split()
        if len(request) < 2:
            return None
        headers = {}
        for line in lines[1:]:
            line = line.decode("latin-1").strip()
            if not line:
                break
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return request[0], request[1], headers

    def handle(self):
        parsed = self.read_request()
        if parsed is None:
            return
        method, target, headers = parsed
        self.method = method
        self.headers = headers
        self.target = target
        self.connection_id, self.earlier = self.station.new_connection(target)
        url = urllib.parse.urlsplit(target)
        self.path = url.path
        self.query = {key: values[-1] for key, values in urllib.parse.parse_qs(url.query).items()}
        self.record = {"id": self.connection_id, "target": target, "status": 0, "how": "error"}
        self.record["request"] = {"method": method, **headers}
        try:
            self.route()
        except ClientGone:
            if self.record.get("how") in (None, "error", "streaming"):
                self.record["how"] = "client-gone"
        except Exception as error:  # a test server: log it, never die
            self.record["how"] = "error"
            self.record["error"] = repr(error)
        finally:
            if self.dump and self.dumped:
                name = os.path.join(self.dump, f"conn-{self.connection_id}.bin")
                # Whole or not at all: a reader waiting for the file never sees half of it.
                with open(name + ".part", "wb") as handle:
                    handle.write(self.dumped)
                os.replace(name + ".part", name)
            self.station.log(self.record)

    @property
    def dump(self) -> str | None:
        return self.station.dump

    def number(self, name: str, default: float) -> float:
        try:
            return float(self.query[name])
        except (KeyError, ValueError):
            return default

    def flag(self, name: str, default: bool) -> bool:
        value = self.query.get(name)
        if value is None:
            return default
        return value not in ("0", "no", "false", "")

    def base_url(self) -> str:
        host = self.headers.get("host") or f"127.0.0.1:{self.server.server_address[1]}"
        return f"http://{host}"

    def route(self):
        path = self.path
        if path in ("/icy.mp3", "/drop.mp3", "/stall.mp3", "/icy-status"):
            self.stream("mp3", style="icy-status" if path == "/icy-status" else "icy", icy_default=True)
        elif path == "/plain.mp3":
            self.stream("mp3", style="plain", icy_default=False)
        elif path == "/chunked.mp3":
            self.stream("mp3", style="chunked", icy_default=False)
        elif path == "/file.mp3":
            self.whole_file()
        elif path in ("/vorbis.ogg", "/opus.ogg", "/flac"):
            kind = {"/vorbis.ogg": "vorbis", "/opus.ogg": "opus", "/flac": "flac"}[path]
            if kind not in self.station.sources:
                self.simple(404, "Not Found", f"<html><body>no --{kind} file given</body></html>")
                return
            self.stream(kind, style="icy", icy_default=False)
        elif path == "/redirect":
            self.redirect()
        elif path == "/loop":
            self.simple(302, "Found", "", extra=[("Location", self.base_url() + "/loop")])
        elif path == "/html":
            self.simple(200, "OK", "<!DOCTYPE html><html><head><title>Not a radio</title></head>"
                        "<body><p>This is a web page, not audio.</p></body></html>\n")
        elif path == "/lie.mp3":
            self.lie()
        elif path == "/aac":
            self.aac()
        elif path == "/500":
            self.simple(500, "Internal Server Error", "<html><body>broken</body></html>\n")
        elif path == "/giant-headers":
            self.giant_headers()
        elif path == "/endless-headers":
            self.endless_headers()
        elif path == "/slowloris":
            self.hold()
        elif path in ("/station.m3u", "/station-ext.m3u", "/station.pls"):
            self.station_list(path)
        else:
            self.simple(404, "Not Found", "<html><body>Not Found</body></html>\n")

    # Streams ------------------------------------------------------------------------------------------

    def titles(self) -> list[str]:
        if "titles" in self.query:
            return self.query["titles"].split("|")
        return DEFAULT_TITLES

    def metadata_block(self, title: str) -> bytes:
        escaped = title  # ICY has no escaping: the value ends at the last "';"
        encoding = "latin-1" if self.query.get("enc", "").lower() in ("latin1", "latin-1", "iso-8859-1") else "utf-8"
        text = f"StreamTitle='{escaped}';StreamUrl='';".encode(encoding, errors="replace")
        blocks = (len(text) + 15) // 16
        if blocks > 255:
            text = text[: 255 * 16]
            blocks = 255
        return bytes([blocks]) + text.ljust(blocks * 16, b"\0")

    def stream(self, kind: str, style: str, icy_default: bool):
        source, natural_rate = self.station.sources[kind]
        path = self.path
        if path in ("/drop.mp3", "/stall.mp3"):
            with self.station.lock:
                down = self.station.down_until.get(self.target, 0.0) > time.monotonic()
            if down:
                self.record["how"] = "down"
                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return
        asked_icy = self.headers.get("icy-metadata", "").strip() == "1"
        icy = self.flag("icy", icy_default) and asked_icy
        metaint = max(1, int(self.number("metaint", 8192)))
        name = self.query.get("name", "playerd test radio")
        genre = self.query.get("genre", "Test")
        content_type = {"mp3": "audio/mpeg", "vorbis": "audio/ogg", "opus": "audio/ogg", "flac": "audio/flac"}[kind]
        fields = [("Content-Type", content_type)]
        if style in ("icy", "icy-status"):
            fields += [("icy-name", name), ("icy-genre", genre), ("icy-pub", "0")]
            if kind == "mp3":
                fields.append(("icy-br", str(round(natural_rate * 8 / 1000))))
        if icy:
            fields.append(("icy-metaint", str(metaint)))
        if style == "chunked":
            fields.append(("Transfer-Encoding", "chunked"))
        fields += [("Cache-Control", "no-cache"), ("Connection", "close")]
        status = {"icy-status": "ICY 200 OK", "chunked": "HTTP/1.1 200 OK"}.get(style, "HTTP/1.0 200 OK")
        self.head(status, fields)
        if self.method == "HEAD":
            self.record["how"] = "finished"
            return

        breaking = path in ("/drop.mp3", "/stall.mp3")
        times = self.query.get("times")
        if breaking and times is not None and self.earlier >= int(float(times)):
            breaking = False
        after = int(self.number("after", 100000))
        resume = self.flag("resume", path in ("/drop.mp3", "/stall.mp3"))
        start = int(self.number("start", 0))
        if resume:
            with self.station.lock:
                start = self.station.resume_offsets.get(self.target, start)
        once = not self.flag("loop", True)
        limit = source.once_length() if once else None
        end_chunked = int(self.number("end", -1)) if style == "chunked" else -1
        pace = self.flag("pace", True)
        rate = self.number("rate", natural_rate)
        burst = int(self.number("burst", 65536))
        every = self.number("every", 5)
        titles = self.titles()
        repeat = self.flag("repeat", False)

        offset = start
        sent = 0
        stalled = False
        meta_blocks = 0
        until_meta = metaint
        last_title = None
        began = time.monotonic()
        self.record.update(offset_start=start, how="streaming")

        down_seconds = self.number("down", 0)

        def finish(how: str):
            self.record.update(offset_end=offset, audio_bytes=sent, meta_blocks=meta_blocks, how=how)
            with self.station.lock:
                if resume:
                    self.station.resume_offsets[self.target] = offset
                if how in ("dropped", "stalled-client-gone") or (how == "client-gone" and stalled):
                    self.station.down_until[self.target] = time.monotonic() + down_seconds

        try:
            while True:
                if limit is not None and offset >= limit:
                    finish("finished")
                    return
                if end_chunked >= 0 and sent >= end_chunked:
                    self.send(b"0\r\n\r\n")
                    finish("finished")
                    return
                count = 4096
                if icy:
                    count = min(count, until_meta)
                if breaking:
                    if sent >= after:
                        if path == "/drop.mp3":
                            finish("dropped")
                            if self.flag("rst", False):
                                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                            else:
                                self.sock.shutdown(socket.SHUT_RDWR)
                            return
                        # A stall: nothing for `for` seconds, the socket open; then on.
                        stalled = True
                        if not self.wait_for(self.number("for", 30)):
                            finish("stalled-client-gone")
                            return
                        breaking = False
                        began = time.monotonic() - (sent - burst) / rate if pace and rate > 0 else began
                        continue
                    count = min(count, after - sent)
                if limit is not None:
                    count = min(count, limit - offset)
                if end_chunked >= 0:
                    count = min(count, end_chunked - sent)
                if pace and rate > 0:
                    allowed = burst + rate * (time.monotonic() - began) - sent
                    if allowed < count:
                        time.sleep(min(1.0, (count - allowed) / rate))
                        continue
                data = source.read(offset, count)
                out = data
                if style == "chunked":
                    out = f"{len(data):x}\r\n".encode() + data + b"\r\n"
                if icy:
                    until_meta -= len(data)
                    if until_meta == 0:
                        until_meta = metaint
                        index = int((time.monotonic() - began) / every) % len(titles) if every > 0 else 0
                        title = titles[index]
                        if title != last_title or repeat:
                            out += self.metadata_block(title)
                            last_title = title
                        else:
                            out += b"\0"
                        meta_blocks += 1
                self.send(out)
                if self.dump:
                    self.dumped += data
                offset += len(data)
                sent += len(data)
        except ClientGone:
            finish("client-gone")
            raise

    def wait_for(self, seconds: float) -> bool:
        """Sleeps `seconds` with the socket open; False when the client closed it meanwhile."""
        deadline = time.monotonic() + seconds
        self.sock.settimeout(0.2)
        try:
            while time.monotonic() < deadline:
                try:
                    if self.sock.recv(4096) == b"":
                        return False
                except socket.timeout:
                    continue
                except OSError:
                    return False
        finally:
            self.sock.settimeout(None)
        return True

    def whole_file(self):
        data = self.station.first_file
        start = 0
        byte_range = self.headers.get("range", "")
        fields = [("Content-Type", "audio/mpeg"), ("Accept-Ranges", "bytes"), ("Connection", "close")]
        status = "HTTP/1.1 200 OK"
        if byte_range.startswith("bytes=") and byte_range[6:].split("-")[0].isdigit():
            start = int(byte_range[6:].split("-")[0])
            if start >= len(data):
                self.simple(416, "Range Not Satisfiable", "", extra=[("Content-Range", f"bytes */{len(data)}")])
                return
            status = "HTTP/1.1 206 Partial Content"
            fields.append(("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}"))
        fields.append(("Content-Length", str(len(data) - start)))
        self.head(status, fields)
        if self.method == "HEAD":
            self.record["how"] = "finished"
            return
        self.record.update(offset_start=start, how="streaming")
        self.paced_send(data[start:], self.station.first_file_rate)
        self.record.update(offset_end=len(data), audio_bytes=len(data) - start, how="finished")

    def paced_send(self, data: bytes, natural_rate: float):
        pace = self.flag("pace", True)
        rate = self.number("rate", natural_rate)
        burst = int(self.number("burst", 65536))
        began = time.monotonic()
        sent = 0
        while sent < len(data):
            count = min(4096, len(data) - sent)
            if pace and rate > 0:
                allowed = burst + rate * (time.monotonic() - began) - sent
                if allowed < count:
                    time.sleep(min(1.0, (count - allowed) / rate))
                    continue
            self.send(data[sent : sent + count])
            if self.dump:
                self.dumped += data[sent : sent + count]
            sent += count

    def redirect(self):
        to = self.query.get("to", "/icy.mp3")
        hops = int(self.number("n", 1))
        code = int(self.number("code", 302))
        reasons = {301: "Moved Permanently", 302: "Found", 303: "See Other", 307: "Temporary Redirect",
                   308: "Permanent Redirect"}
        if hops <= 1:
            location = to
        else:
            rest = {key: value for key, value in self.query.items()}
            rest["n"] = str(hops - 1)
            location = "/redirect?" + urllib.parse.urlencode(rest)
        if not self.flag("rel", False) and location.startswith("/"):
            location = self.base_url() + location
        self.simple(code, reasons.get(code, "Found"), "", extra=[("Location", location)])

    def lie(self):
        if self.query.get("body") == "random":
            self.head("HTTP/1.0 200 OK", [("Content-Type", "audio/mpeg"), ("Connection", "close")])
            generator = random.Random(26)
            self.record["how"] = "streaming"
            self.paced_send(generator.randbytes(1 << 20), 16000)
            self.record["how"] = "finished"
        else:
            page = b"<!DOCTYPE html><html><body><h1>Radio offline</h1><p>Come back later.</p></body></html>\n"
            self.head("HTTP/1.0 200 OK", [("Content-Type", "audio/mpeg"), ("Connection", "close")])
            self.send(page)
            self.record["how"] = "finished"

    def aac(self):
        self.head("HTTP/1.0 200 OK", [("Content-Type", "audio/aacp"), ("icy-name", "AAC test"), ("Connection", "close")])
        generator = random.Random(27)
        frames = bytearray()
        # ADTS-looking frames (sync word, MPEG-4 AAC LC, 44.1 kHz, stereo) with random payloads.
        for _ in range(2000):
            length = 300
            header = bytes([0xFF, 0xF1, 0x50, 0x80 | (length >> 11), (length >> 3) & 0xFF, ((length & 7) << 5) | 0x1F, 0xFC])
            frames += header + generator.randbytes(length - 7)
        self.record["how"] = "streaming"
        self.paced_send(bytes(frames), 16000)
        self.record["how"] = "finished"

    def giant_headers(self):
        size = int(self.number("size", 100_000))
        fields = [("Content-Type", "audio/mpeg")]
        line = 0
        total = 0
        while total < size:
            value = "x" * 90
            fields.append((f"X-Filler-{line}", value))
            total += len(value) + 16
            line += 1
        fields.append(("Connection", "close"))
        self.head("HTTP/1.0 200 OK", fields)
        source, rate = self.station.sources["mp3"]
        self.record["how"] = "streaming"
        self.paced_send(source.read(0, int(rate * 60)), rate)
        self.record["how"] = "finished"

    def endless_headers(self):
        self.send(b"HTTP/1.0 200 OK\r\nContent-Type: audio/mpeg\r\n")
        self.record["status"] = 200
        self.record["how"] = "streaming"
        deadline = time.monotonic() + HOLD_LIMIT_SECONDS
        line = 0
        while time.monotonic() < deadline:
            self.send(f"X-Endless-{line}: {'y' * 60}\r\n".encode())
            line += 1
            time.sleep(0.1)
        self.record["how"] = "finished"

    def hold(self):
        self.record["how"] = "held"
        self.wait_for(HOLD_LIMIT_SECONDS)
        self.record["how"] = "client-gone"

    def station_list(self, path: str):
        base = self.base_url()
        entries = self.query.get("entries", "/icy.mp3|/plain.mp3").split("|")
        urls = [entry if "://" in entry else base + entry for entry in entries]
        names = [f"Test Station {index + 1}" for index in range(len(urls))]
        if path == "/station.m3u":
            body = "".join(url + "\n" for url in urls)
            content_type = "audio/x-mpegurl"
        elif path == "/station-ext.m3u":
            body = "#EXTM3U\n" + "".join(f"#EXTINF:-1,{name}\n{url}\n" for name, url in zip(names, urls))
            content_type = "audio/x-mpegurl"
        else:
            body = "[playlist]\n"
            for index, (name, url) in enumerate(zip(names, urls), start=1):
                body += f"File{index}={url}\nTitle{index}={name}\nLength{index}=-1\n"
            body += f"NumberOfEntries={len(urls)}\nVersion=2\n"
            content_type = "audio/x-scpls"
        self.simple(200, "OK", body, content_type=self.query.get("ct", content_type))


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64


def main() -> None:
    parser = argparse.ArgumentParser(description="A loopback internet-radio server for playerd's tests.")
    parser.add_argument("--audio", required=True, help="an MP3 file, or a directory of them")
    parser.add_argument("--port", type=int, default=0, help="the port (0: any free one; printed as PORT n)")
    parser.add_argument("--ogg", help="an Ogg Vorbis file for /vorbis.ogg")
    parser.add_argument("--opus", help="an Ogg Opus file for /opus.ogg")
    parser.add_argument("--flac", help="a FLAC file for /flac")
    parser.add_argument("--log", help="append one JSON line per connection to this file")
    parser.add_argument("--dump", help="write each connection's audio bytes to DIR/conn-<id>.bin")
    args = parser.parse_args()
    Handler.station = Station(args)
    server = Server(("127.0.0.1", args.port), Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
