#!/usr/bin/python3
"""Every command python-mpd2 knows, called once or more against one daemon (mpd or playerd).

Usage: mpd2_every_command.py SOCKET

The daemon must hold EveryCommandMusic's library (see PythonMPDEveryCommandTests.swift), be freshly
started and have read it. The script finds the commands python-mpd2 registers (the names its
@mpd_commands decorators give, as mpd_command_provider collects them), calls each of them in a fixed
order with sensible arguments, and prints one JSON line per call:

    {"step": N, "command": "sticker get", "call": "sticker_get('song', 'song1.mp3', 'rating')",
     "result": ...}

(with "helper": true on the lines of the script's own steps: a command list, idle woken by another
connection, a call after close and after kill)

where the result is what python-mpd2 made of the answer (iterators made lists, binary data as its
length and a hash), or {"raised": "CommandError", "message": "[50@0] {add} No such directory"} for an
exception. Only volatile values are replaced, by "<volatile>" (times, uptime, update times), "<id>"
(song ids, which differ on purpose: MPD-DIFFERENCES.md) or a count from the first value seen (the
queue's version). A last line {"uncalled": [...]} lists any command python-mpd2 knows that the
sequence did not call; the script exits 1 then. Run it against two daemons and compare the lines.
"""

import hashlib
import json
import sys
import threading
import time

import mpd


def known_commands():
    """The protocol commands python-mpd2's client registers, found as mpd_command_provider finds them."""
    commands = set()
    for cls in mpd.MPDClient.__mro__:
        for value in cls.__dict__.values():
            names = getattr(value, "mpd_commands", None)
            if names:
                commands.update(names)
    return commands


class ID:
    """The id of the song at a queue position, looked up just before the call (ids differ between
    daemons)."""

    def __init__(self, position):
        self.position = position

    def __repr__(self):
        return "ID({})".format(self.position)


# Keys whose values are volatile, in any answer: times and durations of the moment, uptime (and
# status's "time", elapsed:total, though not a song's "Time", its whole seconds).
VOLATILE = {
    "elapsed",
    "bitrate",
    "uptime",
    "playtime",
    "db_update",
    "updating_db",
}
# Song ids (mpd counts from 0 and gives an id again, playerd from 1 and never again: MPD-DIFFERENCES.md).
IDS = {"id", "songid", "nextsongid"}
# A song's duration: playerd's is the gapless length, mpd's includes the encoder's padding
# (MPD-DIFFERENCES.md, "an MP3's duration:"); db_playtime is the sum of those.
DURATIONS = {"duration", "db_playtime"}
# An MP3's sample format: 16 bits from playerd's libmpg123, 24 from mpd's mad decoder
# (MPD-DIFFERENCES.md, "an MP3's Format:"): the rate and channels are compared, not the bits.
FORMATS = {"format", "audio"}


class Normalizer:
    def __init__(self):
        self.first_version = None

    def value(self, key, value):
        key = key.lower()
        if key in VOLATILE or key in DURATIONS or (key == "time" and ":" in str(value)):
            return "<volatile>"
        if key in IDS:
            return "<id>"
        if key in FORMATS and isinstance(value, str) and value.count(":") == 2:
            rate, _, channels = value.split(":")
            return "{}:<bits>:{}".format(rate, channels)
        if key == "playlist" and isinstance(value, str) and value.isdigit():
            # The queue's version in status: counted from the first one seen.
            if self.first_version is None:
                self.first_version = int(value)
            return "version+{}".format(int(value) - self.first_version)
        return self.result(value)

    def result(self, result):
        if isinstance(result, dict):
            normalized = {key: self.value(key, value) for key, value in result.items()}
            if "playlist" in result and "last-modified" in result:
                # A stored playlist's time is when this daemon wrote it.
                normalized["last-modified"] = "<volatile>"
            if "binary" in result and isinstance(result["binary"], (bytes, bytearray)):
                data = bytes(result["binary"])
                normalized["binary"] = "<{} bytes, sha1 {}>".format(len(data), hashlib.sha1(data).hexdigest()[:12])
            return normalized
        if isinstance(result, (list, tuple)) or hasattr(result, "__next__"):
            return [self.result(item) for item in result]
        if isinstance(result, (bytes, bytearray)):
            return "<{} bytes>".format(len(result))
        return result


def song_ids(client):
    return {int(song["pos"]): song["id"] for song in client.playlistinfo()}


def resolve(client, arguments):
    if not any(isinstance(argument, ID) for argument in arguments):
        return arguments
    ids = song_ids(client)
    return tuple(ids.get(a.position, "9999") if isinstance(a, ID) else a for a in arguments)


def wait_for_update(client):
    """Polls status until no update job runs (as mpc update --wait does)."""
    deadline = time.monotonic() + 20
    while "updating_db" in client.status():
        if time.monotonic() > deadline:
            raise SystemExit("the update did not end within 20 s")
        time.sleep(0.05)


def wait_for_playing(client):
    """Polls status until the player plays and knows the song's audio format (mpd's status lacks
    audio: for a moment after play)."""
    deadline = time.monotonic() + 10
    while True:
        status = client.status()
        if status.get("state") == "play" and "audio" in status:
            return
        if time.monotonic() > deadline:
            raise SystemExit("the player did not play within 10 s")
        time.sleep(0.02)


# The sequence. Each step is (method name, arguments); a few are helpers that are not commands of
# their own (a string starting with "="): waiting, reconnecting, idling by hand.
SONGS = ["song1.mp3", "song2.mp3", "song3.mp3", "song4.mp3"]
STEPS = [
    # The server and what it offers.
    ("ping", ()),
    ("commands", ()),
    ("notcommands", ()),
    ("tagtypes", ()),
    ("urlhandlers", ()),
    ("decoders", ()),
    ("config", ()),
    ("stats", ()),
    ("status", ()),
    ("replay_gain_status", ()),
    ("outputs", ()),
    ("password", ("wrong",)),
    ("listneighbors", ()),
    ("listmounts", ()),
    ("mount", ("usb", "nfs://host/export")),
    ("umount", ("usb",)),
    # The library.
    ("lsinfo", ()),
    ("lsinfo", ("Sigur Rós",)),
    ("lsinfo", ("song1.mp3",)),
    ("lsinfo", ("nope",)),
    ("listall", ("Sigur Rós",)),
    ("listallinfo", ("Beyoncé",)),
    ("listfiles", ("Beyoncé/Lemonade",)),
    ("listfiles", ("nope",)),
    ("find", ("artist", "Sigur Rós")),
    ("find", ("(Album == 'Album')", "sort", "Title", "window", (1, 3))),
    ("find", ("bogus", "x")),
    ("search", ("title", "TITLE 2")),
    ("search", ("any", "sigur")),
    ("list", ("artist",)),
    ("list", ("album", "group", "albumartist")),
    ("list", ("title", "artist", "Artist 1")),
    ("list", ("bogus",)),
    ("count", ("artist", "Artist 1")),
    ("count", ("group", "artist")),
    ("albumart", ("Beyoncé/Lemonade/01 Formation.mp3",)),
    ("albumart", ("song1.mp3",)),
    ("readpicture", ("song1.mp3",)),
    ("readcomments", ("song1.mp3",)),
    ("readcomments", ("nope.mp3",)),
    ("update", ("Sigur Rós",)),
    ("=wait for update", ()),
    ("rescan", ("Beyoncé",)),
    ("=wait for update", ()),
    ("update", ("nope",)),
    ("=wait for update", ()),
    # Idle: the changes since the connection opened (update's start and end, at least).
    ("idle", ("update",)),
    # The queue.
    ("add", ("song1.mp3",)),
    ("add", ("song2.mp3",)),
    ("addid", ("song3.mp3",)),
    ("addid", ("song4.mp3", 1)),
    ("add", ("nope.mp3",)),
    ("addid", ("Sigur Rós",)),
    ("add", ("bogus://example/stream",)),
    ("idle", ("playlist",)),
    ("playlist", ()),
    ("playlistinfo", ()),
    ("playlistinfo", ((1, 3),)),
    ("playlistinfo", (9,)),
    ("playlistid", (ID(2),)),
    ("playlistid", (9999,)),
    ("playlistfind", ("artist", "Artist 1")),
    ("playlistsearch", ("title", "title 2")),
    ("plchanges", (0,)),
    ("plchangesposid", (0,)),
    ("status", ()),
    ("move", (0, 3)),
    ("moveid", (ID(0), 2)),
    ("swap", (0, 1)),
    ("swapid", (ID(0), ID(3))),
    ("playlist", ()),
    ("prio", (5, (0, 2))),
    ("prioid", (9, ID(3))),
    ("prio", (300, 0)),
    ("playlistinfo", ()),
    ("shuffle", ((0, 1),)),
    ("playlist", ()),
    ("rangeid", (ID(1), (1.0, 2.5))),
    ("rangeid", (ID(1), ())),
    ("rangeid", (9999, (1.0, 2.0))),
    ("addtagid", (ID(0), "artist", "Someone")),
    ("cleartagid", (ID(0), "artist")),
    ("delete", (3,)),
    ("deleteid", (ID(0),)),
    ("delete", (9,)),
    ("playlist", ()),
    ("findadd", ("artist", "Artist 0")),
    ("searchadd", ("title", "title 1")),
    ("playlist", ()),
    ("clear", ()),
    ("shuffle", ()),
    ("add", ("",)),
    ("playlistinfo", ()),
    ("clear", ()),
    ("add", ("song1.mp3",)),
    ("add", ("song2.mp3",)),
    ("add", ("song3.mp3",)),
    # Stored playlists.
    ("save", ("mix",)),
    ("save", ("mix",)),
    ("listplaylists", ()),
    ("listplaylist", ("mix",)),
    ("listplaylistinfo", ("mix",)),
    ("playlistadd", ("mix", "song4.mp3")),
    ("playlistdelete", ("mix", 0)),
    ("playlistmove", ("mix", 0, 2)),
    ("listplaylist", ("mix",)),
    ("searchaddpl", ("mix", "artist", "Sigur Rós")),
    ("rename", ("mix", "mix2")),
    ("rename", ("nope", "x")),
    ("load", ("mix2",)),
    ("load", ("mix2", (0, 1))),
    ("playlist", ()),
    ("playlistclear", ("mix2",)),
    ("listplaylist", ("mix2",)),
    ("rm", ("mix2",)),
    ("rm", ("mix2",)),
    ("listplaylists", ()),
    ("load", ("nope",)),
    ("idle", ("stored_playlist",)),
    # Options.
    ("repeat", (1,)),
    ("random", (1,)),
    ("random", (0,)),
    ("single", ("oneshot",)),
    ("single", (0,)),
    ("consume", (1,)),
    ("consume", (0,)),
    ("repeat", (0,)),
    ("repeat", ("x",)),
    ("crossfade", (3,)),
    ("mixrampdb", (-17,)),
    ("mixrampdelay", (2,)),
    ("status", ()),
    ("crossfade", (0,)),
    ("mixrampdelay", ("nan",)),
    ("crossfade", (-1,)),
    ("status", ()),
    ("setvol", (50,)),
    ("volume", (5,)),
    ("setvol", (101,)),
    ("replay_gain_mode", ("track",)),
    ("replay_gain_status", ()),
    ("replay_gain_mode", ("bogus",)),
    ("replay_gain_mode", ("off",)),
    ("idle", ("options",)),
    # Playback: from the first song, paused so that nothing moves on by itself.
    ("play", (1,)),
    ("=wait until playing", ()),
    ("pause", (1,)),
    ("status", ()),
    ("currentsong", ()),
    ("seek", (1, 5)),
    ("seekid", (ID(2), 3)),
    ("seekcur", ("+2",)),
    ("seekcur", (1,)),
    ("seek", (9, 1)),
    ("status", ()),
    ("next", ()),
    ("status", ()),
    ("previous", ()),
    ("status", ()),
    ("playid", (ID(0),)),
    ("=wait until playing", ()),
    ("pause", (1,)),
    ("currentsong", ()),
    ("pause", (0,)),
    ("stop", ()),
    ("status", ()),
    ("next", ()),
    ("playid", (9999,)),
    ("play", (9,)),
    ("clearerror", ()),
    ("idle", ("player",)),
    # Outputs.
    ("disableoutput", (0,)),
    ("outputs", ()),
    ("enableoutput", (0,)),
    ("toggleoutput", (0,)),
    ("toggleoutput", (0,)),
    ("enableoutput", (7,)),
    ("outputvolume", (0, 50)),
    ("outputs", ()),
    ("idle", ("output",)),
    # Stickers.
    ("sticker_set", ("song", "song1.mp3", "rating", "5")),
    ("sticker_set", ("song", "song2.mp3", "rating", "3")),
    ("sticker_get", ("song", "song1.mp3", "rating")),
    ("sticker_get", ("song", "song1.mp3", "nope")),
    ("sticker_list", ("song", "song1.mp3")),
    ("sticker_find", ("song", "", "rating")),
    ("sticker_delete", ("song", "song1.mp3", "rating")),
    ("sticker_list", ("song", "song1.mp3")),
    ("idle", ("sticker",)),
    # Channels.
    ("channels", ()),
    ("subscribe", ("room",)),
    ("subscribe", ("room",)),
    ("subscribe", ("bad name!",)),
    ("channels", ()),
    ("sendmessage", ("room", "hello")),
    ("sendmessage", ("nobody", "hello")),
    ("readmessages", ()),
    ("readmessages", ()),
    ("idle", ("subscription",)),
    ("unsubscribe", ("room",)),
    ("unsubscribe", ("room",)),
    ("channels", ()),
    # Partitions.
    ("listpartitions", ()),
    ("newpartition", ("kitchen",)),
    ("newpartition", ("kitchen",)),
    ("newpartition", ("bad name",)),
    ("listpartitions", ()),
    ("partition", ("kitchen",)),
    ("status", ()),
    ("outputs", ()),
    ("moveoutput", ("null",)),
    ("outputs", ()),
    ("partition", ("default",)),
    ("outputs", ()),
    ("moveoutput", ("null",)),
    ("moveoutput", ("nope",)),
    ("partition", ("nope",)),
    ("delpartition", ("kitchen",)),
    ("delpartition", ("kitchen",)),
    ("delpartition", ("default",)),
    ("listpartitions", ()),
    ("idle", ("partition",)),
    # Command lists, idle by hand.
    ("=command list", ()),
    ("=idle woken by another client", ()),
    # close ends the connection: what the next call gets, then a new connection.
    ("close", ()),
    ("=ping after close", ()),
    ("=reconnect", ()),
    ("ping", ()),
    # kill ends the daemon: the next call finds the connection gone.
    ("kill", ()),
    ("=ping after kill", ()),
]


def describe(name, arguments):
    return "{}({})".format(name, ", ".join(repr(a) for a in arguments))


def call(client, name, arguments):
    try:
        return getattr(client, name)(*arguments)
    except mpd.CommandError as error:
        return {"raised": "CommandError", "message": str(error)}
    except mpd.ConnectionError:
        # Its text says where python-mpd2 noticed (writing or reading): not the daemon's answer.
        return {"raised": "ConnectionError"}
    except mpd.MPDError as error:
        return {"raised": type(error).__name__, "message": str(error)}
    except OSError as error:
        if name == "idle":
            raise
        return {"raised": type(error).__name__, "message": str(error)}


def connect(socket_path):
    client = mpd.MPDClient()
    client.timeout = 10
    client.connect(socket_path)
    return client


def idle(client, socket_path, subsystems):
    """idle for events already pending: an answer within 5 s, or "no event" and a new connection (the
    one left idling cannot be used again)."""
    client.idletimeout = 5
    try:
        return client, call(client, "idle", subsystems)
    except OSError:
        try:
            client.disconnect()
        except (mpd.MPDError, OSError):
            pass
        return connect(socket_path), {"raised": "no event within 5 s"}
    finally:
        client.idletimeout = None


def helper(client, socket_path, name):
    """Runs a "=" step; returns (client, result or None when the step prints nothing)."""
    if name == "=wait for update":
        wait_for_update(client)
        return client, None
    if name == "=wait until playing":
        wait_for_playing(client)
        return client, None
    if name == "=command list":
        first = song_ids(client)[0]
        client.command_list_ok_begin()
        client.ping()
        client.playlistid(first)
        client.add("nope.mp3")
        client.status()
        try:
            return client, {"result": client.command_list_end()}
        except mpd.CommandError as error:
            return client, {"raised": "CommandError", "message": str(error)}
    if name == "=idle woken by another client":
        # idle blocks until a second connection changes the volume.
        other = connect(socket_path)
        outcome = {}
        idler = threading.Thread(
            target=lambda: outcome.update(result=call(client, "idle", ("mixer", "player"))), daemon=True
        )
        idler.start()
        time.sleep(0.3)
        other.setvol(60)
        idler.join(10)
        other.disconnect()
        if idler.is_alive():
            raise SystemExit("idle did not return within 10 s of setvol from another client")
        return client, outcome["result"]
    if name in ("=ping after close", "=ping after kill"):
        time.sleep(0.3)
        return client, call(client, "ping", ())
    if name == "=reconnect":
        try:
            client.disconnect()
        except (mpd.MPDError, OSError):
            pass
        return connect(socket_path), None
    raise SystemExit("unknown helper step " + name)


def main(socket_path):
    client = connect(socket_path)
    normalizer = Normalizer()
    first_job = None
    called = set()
    for step, (name, arguments) in enumerate(STEPS):
        if name.startswith("="):
            client, result = helper(client, socket_path, name)
            if result is None:
                continue
            command = name[1:]
            text = name[1:]
        else:
            command = name.replace("_", " ") if name.startswith("sticker_") else name
            called.add(command)
            text = describe(name, arguments)
            if name == "idle":
                client, result = idle(client, socket_path, arguments)
            else:
                result = call(client, name, resolve(client, arguments))
            if command == "addid" and isinstance(result, str):
                result = "<id>"
            if command in ("update", "rescan") and isinstance(result, str) and result.isdigit():
                # Update jobs counted from the script's first: how many the daemon ran before it started
                # (its scan at start, the harness's update, which an update under way refuses) varies.
                if first_job is None:
                    first_job = int(result)
                result = "job+{}".format(int(result) - first_job)
        result = normalizer.result(result)
        if command == "listfiles" and isinstance(result, list):
            # mpd lists a directory's files in the order the file system gives them (readdir).
            result.sort(key=lambda entry: json.dumps(entry, sort_keys=True))
        line = {"step": step, "command": command, "call": text, "result": result}
        if name.startswith("="):
            line["helper"] = True
        print(json.dumps(line, ensure_ascii=False, sort_keys=True), flush=True)
    uncalled = sorted(known_commands() - called)
    print(json.dumps({"uncalled": uncalled}), flush=True)
    return 1 if uncalled else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
