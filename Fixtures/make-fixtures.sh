#!/usr/bin/env bash
# Regenerates every audio fixture in this folder (see README.md).
# Needs: sox, lame, python3 (standard library only).
# Deterministic: sox runs with -R (fixed noise seed) and -D (no dither), no
# timestamps end up in any file, and every "random" byte comes from python's
# random.Random(<fixed seed>). Running it twice gives identical files.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
cd "$HERE"

for tool in sox lame python3; do
    command -v "$tool" >/dev/null || { echo "make-fixtures.sh: $tool is required" >&2; exit 1; }
done

# sox: make raw signed 16-bit little-endian PCM from synth.
#   synth_raw OUT RATE CHANNELS EFFECTS...
synth_raw() {
    local out="$1" rate="$2" ch="$3"; shift 3
    # rate/channels go before -n so synth itself runs at that rate (no resampling)
    sox -R -D -r "$rate" -c "$ch" -n -b 16 -e signed-integer -L -t raw "$out" "$@"
}

# lame: encode raw s16le PCM. Keeps the Xing/Info + LAME header (encoder
# delay/padding, needed for gapless), writes no ID3 tags. The raw PCM is
# wrapped in a WAV header by sox first: Debian's lame reads input through
# libsndfile and warns that it "may ignore -r" for raw input (the output is
# byte-identical either way, the WAV route just avoids the warning).
#   encode_raw IN OUT RATE CHANNELS MODE LAME_OPTIONS...
encode_raw() {
    local in="$1" out="$2" rate="$3" ch="$4" mode="$5"; shift 5
    sox -R -D -t raw -r "$rate" -c "$ch" -b 16 -e signed-integer -L "$in" -t wav "$TMP/enc.wav"
    lame --quiet --noreplaygain -m "$mode" "$@" "$TMP/enc.wav" "$out"
}

# ---------------------------------------------------------------- good files

# 1. stereo-44k-cbr.mp3: 3 s, 440 Hz left / 660 Hz right + a little pink noise, CBR 192.
synth_raw "$TMP/tones.raw" 44100 2 synth 3 sine 440 sine 660
synth_raw "$TMP/pink.raw"  44100 2 synth 3 pinknoise
sox -R -D -m \
    -v 0.45 -t raw -r 44100 -c 2 -b 16 -e signed-integer -L "$TMP/tones.raw" \
    -v 0.05 -t raw -r 44100 -c 2 -b 16 -e signed-integer -L "$TMP/pink.raw" \
    -t raw -b 16 -e signed-integer -L "$TMP/stereo.raw"
encode_raw "$TMP/stereo.raw" stereo-44k-cbr.mp3 44100 2 j -b 192

# 2. mono-48k-vbr.mp3: 3 s, 48 kHz mono, 1 kHz -> 2 kHz sweep, VBR -V 2.
synth_raw "$TMP/mono.raw" 48000 1 synth 3 sine 1000-2000 vol 0.5
encode_raw "$TMP/mono.raw" mono-48k-vbr.mp3 48000 1 m -V 2

# 3. one-second.mp3: exactly 44100 frames, stereo, CBR 128.
synth_raw "$TMP/one.raw" 44100 2 synth 44100s sine 523.25 sine 784 vol 0.5
encode_raw "$TMP/one.raw" one-second.mp3 44100 2 j -b 128

# 4. Gapless set: one continuous 3 s signal (132300 frames, 220 Hz left /
#    330 Hz right), kept as gapless-source.raw (s16le, stereo, 44100 Hz).
#    gapless-a = frames 0..<57777, gapless-b = frames 57777..<132300,
#    gapless-whole = all of it; each encoded separately, CBR 256, simple stereo.
synth_raw gapless-source.raw 44100 2 synth 132300s sine 220 sine 330 vol 0.5
python3 - "$TMP" <<'PY'
import sys
tmp = sys.argv[1]
src = open("gapless-source.raw", "rb").read()
assert len(src) == 132300 * 4, len(src)
cut = 57777 * 4                      # 4 bytes per stereo s16 frame
open(tmp + "/gapless-a.raw", "wb").write(src[:cut])
open(tmp + "/gapless-b.raw", "wb").write(src[cut:])
PY
encode_raw gapless-source.raw  gapless-whole.mp3 44100 2 s -b 256
encode_raw "$TMP/gapless-a.raw" gapless-a.mp3   44100 2 s -b 256
encode_raw "$TMP/gapless-b.raw" gapless-b.mp3   44100 2 s -b 256

# 5. Tagged files: the same 2 s stereo CBR 128 audio (tag-less), with a tag
#    written byte-by-byte by python.
synth_raw "$TMP/tagbase.raw" 44100 2 synth 2 sine 330 sine 495 vol 0.5
encode_raw "$TMP/tagbase.raw" "$TMP/tagbase.mp3" 44100 2 j -b 128

python3 - "$TMP/tagbase.mp3" <<'PY'
import random, struct, sys
audio = open(sys.argv[1], "rb").read()
assert audio[:3] != b"ID3" and audio[-128:-125] != b"TAG"

def syncsafe(n):
    assert 0 <= n < 1 << 28
    return bytes([(n >> 21) & 0x7F, (n >> 14) & 0x7F, (n >> 7) & 0x7F, n & 0x7F])

def tag(major, frames, padding=0):
    body = b"".join(frames) + b"\x00" * padding
    return b"ID3" + bytes([major, 0, 0]) + syncsafe(len(body)) + body

def frame23(fid, data):          # ID3v2.3: plain 32-bit big-endian size
    return fid.encode("ascii") + struct.pack(">I", len(data)) + b"\x00\x00" + data

def frame24(fid, data):          # ID3v2.4: syncsafe size
    return fid.encode("ascii") + syncsafe(len(data)) + b"\x00\x00" + data

def utf16(s):                    # encoding 0x01, BOM FF FE (little-endian), no terminator
    return b"\x01\xff\xfe" + s.encode("utf-16-le")

def utf8(s):                     # encoding 0x03, no terminator
    return b"\x03" + s.encode("utf-8")

# tagged-id3v23.mp3: ID3v2.3, UTF-16 text frames, followed by 64 bytes of padding.
v23 = tag(3, [
    frame23("TIT2", utf16("Café Noir — Ünïcødé ☃")),
    frame23("TPE1", utf16("Björk & Sigur Rós")),
    frame23("TALB", utf16("日本語のアルバム")),
    frame23("TRCK", utf16("3/12")),
    frame23("TYER", utf16("2019")),
    frame23("TCON", utf16("Électronique")),
], padding=64)
open("tagged-id3v23.mp3", "wb").write(v23 + audio)

# tagged-id3v24.mp3: ID3v2.4, UTF-8 text frames, syncsafe frame sizes, no padding.
v24 = tag(4, [
    frame24("TIT2", utf8("Ζωή σε 4/4 — Ελληνικά")),
    frame24("TPE1", utf8("Мумий Тролль")),
    frame24("TALB", utf8("Ça ira, mon cœur")),
    frame24("TRCK", utf8("7")),
    frame24("TDRC", utf8("2021-05-04")),
    frame24("TCON", utf8("Synthpop")),
])
open("tagged-id3v24.mp3", "wb").write(v24 + audio)

# tagged-id3v1.mp3: only an ID3v1.1 tag (128 bytes at the end), Latin-1, NUL padded.
def field(s, n):
    b = s.encode("latin-1")
    assert len(b) <= n
    return b + b"\x00" * (n - len(b))
v1 = (b"TAG" + field("Motörhead Übung", 30) + field("Sigur Rós", 30)
      + field("Ágætis byrjun", 30) + field("1999", 4)
      + b"\x00" * 28 + b"\x00" + bytes([5])   # empty comment, v1.1 track 5
      + bytes([17]))                          # genre 17 = Rock
assert len(v1) == 128
open("tagged-id3v1.mp3", "wb").write(audio + v1)

# big-id3.mp3: ~300 KB ID3v2.3 tag (TIT2 + APIC with 300000 pseudo-random bytes).
pic = random.Random(20240301).randbytes(300000)
apic = b"\x00" + b"image/png\x00" + bytes([3]) + b"\x00" + pic   # Latin-1, mime, front cover, empty description
big = tag(3, [frame23("TIT2", b"\x00Big Tag"), frame23("APIC", apic)])
open("big-id3.mp3", "wb").write(big + audio)

# comments-id3v24.mp3: ID3v2.4 with TXXX and COMM frames, for `readcomments`: TXXX in UTF-8, UTF-16 and
# Latin-1; names MPD lists and names it passes over (a space, a digit first, non-ASCII, empty); a value
# with a control character, an empty value, two values in one frame, and a name given twice.
def txxx(name, value, encoding=3):
    if encoding == 1:
        data = b"\x01\xff\xfe" + name.encode("utf-16-le") + b"\x00\x00\xff\xfe" + value.encode("utf-16-le")
    elif encoding == 0:
        data = b"\x00" + name.encode("latin-1") + b"\x00" + value.encode("latin-1")
    else:
        data = b"\x03" + name.encode("utf-8") + b"\x00" + value.encode("utf-8")
    return frame24("TXXX", data)
def comm(description, text):     # UTF-8, language "eng"
    return frame24("COMM", b"\x03eng" + description.encode("utf-8") + b"\x00" + text.encode("utf-8"))
comments = tag(4, [
    frame24("TIT2", utf8("Comments")),
    txxx("MOOD", "calm"),
    txxx("MusicBrainz Album Id", "0f8c-11"),
    txxx("replaygain_track_gain", "-6.50 dB"),
    txxx("CATALOG-NUMBER", "ABC 123", encoding=1),
    txxx("1st", "digit first"),
    txxx("tabbed", "a\tb"),
    txxx("Latin", "Café", encoding=0),
    txxx("Ünï", "non-ASCII name"),
    txxx("EMPTY", ""),
    txxx("", "no name"),
    txxx("multi", "one\x00two"),
    comm("", "a plain comment"),
    comm("note", "described comment"),
    txxx("MOOD", "  second mood "),
])
open("comments-id3v24.mp3", "wb").write(comments + audio)

# comments-ape.mp3, comments-ape-title.mp3: an ID3v2.4 tag (TXXX MOOD) at the start and an APEv2 tag
# (header, items, footer) at the end. MPD lists the APE text items (each value), and the TXXX frames
# only when no APE item is a tag it knows: the first file's items are no tags, the second's has Title.
def ape(items):                  # [(key, value bytes, item flags)]
    body = b"".join(struct.pack("<II", len(value), flags) + key.encode("ascii") + b"\x00" + value
                    for key, value, flags in items)
    def part(flags):
        return b"APETAGEX" + struct.pack("<IIII", 2000, len(body) + 32, len(items), flags) + b"\x00" * 8
    return part(0xA0000000) + body + part(0x80000000)
mood = tag(4, [frame24("TIT2", utf8("APE")), txxx("MOOD", "from ID3")])
open("comments-ape.mp3", "wb").write(mood + audio + ape([
    ("REPLAYGAIN_TRACK_GAIN", b"-3.20 dB", 0),
    ("MP3GAIN_MINMAX", b"112,167", 0),
    ("Multi", b"first\x00second", 0),
    ("Empty", b"", 0),
    ("Cover", b"\x00\x01binary", 1 << 1),
]))
open("comments-ape-title.mp3", "wb").write(mood + audio + ape([
    ("Title", b"Title from APE", 0),
    ("Mood", b"from APE", 0),
]))
PY

# 6. Files without a Xing/Info header: libmpg123 can only estimate their length
#    from the file's size (see Sources/Audio/StreamLength.swift).
#    short-22k-no-info.mp3: 0.3 s of 440 Hz, 22.05 kHz mono, CBR 32. LAME leaves
#    out its Info frame when a frame is too small to hold it (below 64 kbit/s
#    here), as for the library tests' songs; then a 264-byte ID3v2.3 tag.
synth_raw "$TMP/short.raw" 22050 1 synth 0.3 sine 440
encode_raw "$TMP/short.raw" "$TMP/short.mp3" 22050 1 m -b 32
#    cbr-id3v2-no-info.mp3: the tagged files' 2 s, CBR 128 with -t (no Info
#    frame), behind a 4096-byte ID3v2.3 tag (TIT2 and padding).
encode_raw "$TMP/tagbase.raw" "$TMP/cbr-no-info.mp3" 44100 2 j -b 128 -t
#    vbr-no-xing.mp3: stereo-44k-cbr's signal, VBR -V 2 with -t (no Xing frame).
encode_raw "$TMP/stereo.raw" vbr-no-xing.mp3 44100 2 j -V 2 -t

python3 - "$TMP/short.mp3" "$TMP/cbr-no-info.mp3" <<'PY'
import struct, sys

def syncsafe(n):
    return bytes([(n >> 21) & 0x7F, (n >> 14) & 0x7F, (n >> 7) & 0x7F, n & 0x7F])

def tag(frames, total):          # ID3v2.3 of `total` bytes in all, padded with zeros
    body = b"".join(fid.encode("ascii") + struct.pack(">I", len(data)) + b"\x00\x00" + data
                    for fid, data in frames)
    assert len(body) <= total - 10
    return b"ID3\x03\x00\x00" + syncsafe(total - 10) + body + b"\x00" * (total - 10 - len(body))

for source, out, title, total in [(sys.argv[1], "short-22k-no-info.mp3", "Short", 264),
                                  (sys.argv[2], "cbr-id3v2-no-info.mp3", "No Info", 4096)]:
    audio = open(source, "rb").read()
    assert audio[:3] != b"ID3" and b"Info" not in audio[:200] and b"Xing" not in audio[:200]
    open(out, "wb").write(tag([("TIT2", b"\x00" + title.encode("ascii")),
                               ("TPE1", b"\x00Nobody")], total) + audio)
PY

# ----------------------------------------------------------------- bad files

# 7. empty.mp3: zero bytes.
: > empty.mp3

# 8. random.mp3: 16384 pseudo-random bytes (not starting with "ID3" or 0xFF).
python3 - <<'PY'
import random
data = random.Random(1234).randbytes(16384)
assert data[0] != 0xFF and data[:3] != b"ID3"
open("random.mp3", "wb").write(data)
PY

# 9. wav-named.mp3: a real 1 s 44.1 kHz stereo s16 WAV file.
sox -R -D -r 44100 -c 2 -n -b 16 -e signed-integer -t wav wav-named.mp3 synth 1 sine 440 vol 0.5

# 10. truncated.mp3 (first 55 % of stereo-44k-cbr.mp3, cut mid-frame) and
# 11. garbage-middle.mp3 (4096 random bytes inserted mid-frame in stereo-44k-cbr.mp3).
python3 - <<'PY'
import random
src = open("stereo-44k-cbr.mp3", "rb").read()

def frame_starts(d):             # MPEG-1 Layer III frame offsets (no ID3 here)
    rates = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
    srs = [44100, 48000, 32000]
    pos, out = 0, []
    while pos + 4 <= len(d):
        h = int.from_bytes(d[pos:pos + 4], "big")
        assert h >> 21 == 0x7FF and (h >> 17) & 0xF == 0xD, hex(h)   # sync, MPEG-1, Layer III
        size = 144000 * rates[(h >> 12) & 0xF] // srs[(h >> 10) & 3] + ((h >> 9) & 1)
        out.append(pos)
        pos += size
    assert pos == len(d), (pos, len(d))
    return out

starts = set(frame_starts(src))

cut = len(src) * 55 // 100
assert cut not in starts
open("truncated.mp3", "wb").write(src[:cut])

at = len(src) // 2
assert at not in starts
junk = random.Random(5678).randbytes(4096)
open("garbage-middle.mp3", "wb").write(src[:at] + junk + src[at:])
PY

# 12. id3-beyond-eof.mp3: ID3v2.3 header claiming a 200 MiB tag, then one-second.mp3.
python3 - <<'PY'
n = 200 * 1024 * 1024
size = bytes([(n >> 21) & 0x7F, (n >> 14) & 0x7F, (n >> 7) & 0x7F, n & 0x7F])
open("id3-beyond-eof.mp3", "wb").write(b"ID3\x03\x00\x00" + size + open("one-second.mp3", "rb").read())
PY

echo "fixtures written to $HERE"

# FLAC at depths the flac tool cannot encode (it takes 8/16/24/32-bit input only): 12 and 20 bits,
# 0.1 s of stereo 44100 Hz, made through libFLAC's encoder by a small C program (needs gcc and
# libflac-dev). rand() is seeded: the files are the same on every run.
if command -v gcc >/dev/null && [ -f /usr/include/FLAC/stream_encoder.h ]; then
    cat > "$TMP/flacdepth.c" <<'C'
#include <FLAC/stream_encoder.h>
#include <math.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int bits = atoi(argv[1]), n = 4410;
    FLAC__StreamEncoder *e = FLAC__stream_encoder_new();
    FLAC__stream_encoder_set_channels(e, 2);
    FLAC__stream_encoder_set_bits_per_sample(e, bits);
    FLAC__stream_encoder_set_sample_rate(e, 44100);
    FLAC__stream_encoder_set_compression_level(e, 5);
    if (argc < 3 || FLAC__stream_encoder_init_file(e, argv[2], NULL, NULL) != 0) return 1;
    FLAC__int32 *buf = malloc(sizeof(FLAC__int32) * n * 2);
    long max = (1L << (bits - 1)) - 1;
    srand(1);
    for (int i = 0; i < n; i++) {
        double s = 0.6 * sin(i * 0.0627) + 0.05 * (rand() / (double)RAND_MAX - 0.5);
        buf[2 * i] = (FLAC__int32)(s * max);
        buf[2 * i + 1] = -(FLAC__int32)(s * max * 0.7);
    }
    if (!FLAC__stream_encoder_process_interleaved(e, buf, n)) return 2;
    return FLAC__stream_encoder_finish(e) ? 0 : 3;
}
C
    gcc -O2 -o "$TMP/flacdepth" "$TMP/flacdepth.c" -lFLAC -lm
    "$TMP/flacdepth" 12 flac-12bit.flac
    "$TMP/flacdepth" 20 flac-20bit.flac
    echo "FLAC fixtures written to $HERE"
else
    echo "make-fixtures.sh: gcc and libflac-dev are needed for flac-12bit.flac and flac-20bit.flac" >&2
fi
