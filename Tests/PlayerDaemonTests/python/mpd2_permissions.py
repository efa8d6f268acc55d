"""python-mpd2 (Debian's python3-mpd) over TCP: what one password lets a client do.

Usage: python3 mpd2_permissions.py HOST PORT PASSWORD|- PLAYLIST_NAME

Connects to HOST:PORT, sends PASSWORD (unless "-"), then tries one command for each permission and
prints one line per command, `COMMAND allowed` or `COMMAND denied`, then `done`. A refusal must be
python-mpd2's CommandError for MPD's ACK 4, naming the command; anything else raises and exits
non-zero. The Swift test (TCPTests.swift) compares the lines with what the password grants.
"""

import sys

import mpd

host, port, password, playlist = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]

client = mpd.MPDClient()
client.timeout = 10
client.connect(host, port)
if password != "-":
    client.password(password)

# One command for each of MPD's permissions: read, add, player, control, admin.
probes = [
    ("status", lambda: client.status()),
    ("add", lambda: client.add("stereo-44k-cbr.mp3")),
    ("stop", lambda: client.stop()),
    ("save", lambda: client.save(playlist)),
    ("enableoutput", lambda: client.enableoutput(0)),
]
for name, probe in probes:
    try:
        probe()
        print(f"{name} allowed")
    except mpd.CommandError as error:
        text = str(error)
        if not text.startswith("[4@0] {%s} you don't have permission for \"%s\"" % (name, name)):
            raise
        print(f"{name} denied")
client.close()
client.disconnect()
print("done")
