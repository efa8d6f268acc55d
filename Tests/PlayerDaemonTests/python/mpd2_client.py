"""python-mpd2 (Debian's python3-mpd) against a running playerd.

Usage: python3 mpd2_client.py SOCKET_PATH

Each check prints one line `ok: ...`; the first mismatch raises, which prints a traceback and exits
with a non-zero status. The Swift test (PythonMPDTests.swift) runs this script and checks its exit
status and output.
"""

import asyncio
import sys
import threading
import time

import mpd
import mpd.asyncio

# python-mpd2 3.0 predates `getvol` (MPD 0.23); a command unknown to both sides checks the error path.
mpd.MPDClient.add_command("getvol", mpd.MPDClient._parse_object)
mpd.MPDClient.add_command("nosuchcommand", mpd.MPDClient._parse_nothing)


def check(condition, what, detail=None):
    if not condition:
        raise AssertionError(f"{what}: {detail!r}")
    print(f"ok: {what}")


def wait_for(client, key, value, limit=10.0):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        status = client.status()
        if status.get(key) == value:
            return status
        time.sleep(0.05)
    raise AssertionError(f"status {key} never became {value!r}: {client.status()!r}")


def idle_in_background(watcher, subsystems, action):
    """Runs watcher.idle(subsystems) in a thread, then action(); returns what idle reported."""
    result = {}

    def wait():
        try:
            result["changed"] = watcher.idle(*subsystems)
        except Exception as error:  # reported below, in the main thread
            result["error"] = error

    thread = threading.Thread(target=wait)
    thread.start()
    time.sleep(0.3)
    check(thread.is_alive(), "idle waits while nothing changes", result)
    action()
    thread.join(10)
    check(not thread.is_alive(), "idle ends after the change", result)
    if "error" in result:
        raise result["error"]
    return result.get("changed")


async def async_idle(socket_path, subsystems, action):
    """Waits with mpd.asyncio's idle(subsystems) while action() runs; returns the first report."""
    client = mpd.asyncio.MPDClient()
    await client.connect(socket_path)
    try:
        first = asyncio.ensure_future(client.idle(subsystems).__anext__())
        await asyncio.sleep(0.3)
        check(not first.done(), "asyncio idle waits while nothing changes", None)
        action()
        return await asyncio.wait_for(first, 10)
    finally:
        client.disconnect()


def main(socket_path):
    client = mpd.MPDClient()
    client.timeout = 10
    client.idletimeout = 10
    client.connect(socket_path)
    check(client.mpd_version == "0.23.5", "greeting version", client.mpd_version)

    status = client.status()
    check(status["state"] == "stop", "status of an empty player", status)
    check(status["playlistlength"] == "0", "empty queue", status)
    check(status["volume"] == "100", "volume", status)
    for key in ("repeat", "random", "single", "consume", "playlist"):
        check(key in status, f"status has {key}", status)

    client.add("tagged-id3v24.mp3")
    client.add("stereo-44k-cbr.mp3")
    song_id = client.addid("one-second.mp3")
    check(song_id == "3", "addid answers the id", song_id)

    songs = client.playlistinfo()
    check(len(songs) == 3, "playlistinfo lists three songs", songs)
    first = songs[0]
    check(first["file"] == "tagged-id3v24.mp3", "file", first)
    check(first["title"] == "Ζωή σε 4/4 — Ελληνικά", "UTF-8 title", first)
    check(first["artist"] == "Мумий Тролль", "UTF-8 artist", first)
    check(first["album"] == "Ça ira, mon cœur", "album", first)
    check(first["track"] == "7", "track", first)
    check(first["date"] == "2021-05-04", "date", first)
    check(first["time"] == "2" and first["duration"] == "2.000", "time and duration", first)
    check(first["pos"] == "0" and first["id"] == "1", "pos and id", first)
    check(songs[1]["file"] == "stereo-44k-cbr.mp3" and "title" not in songs[1], "untagged song", songs[1])
    check(client.playlistid(3)[0]["file"] == "one-second.mp3", "playlistid", client.playlistid(3))

    check(client.currentsong() == {}, "no current song before play", client.currentsong())
    client.play(1)
    status = client.status()
    check(status["state"] == "play" and status["song"] == "1", "play 1", status)
    check(status["audio"] == "44100:16:2" and status["bitrate"] == "192", "audio format", status)
    current = client.currentsong()
    check(current["file"] == "stereo-44k-cbr.mp3" and current["pos"] == "1", "currentsong", current)

    client.pause(1)
    check(client.status()["state"] == "pause", "pause(1)", client.status())
    client.pause(0)
    check(client.status()["state"] == "play", "pause(0)", client.status())
    client.pause()
    check(client.status()["state"] == "pause", "pause() toggles", client.status())
    client.seekcur(1)
    check(client.status()["elapsed"] == "1.000", "seekcur while paused", client.status())
    client.pause()

    client.setvol(35)
    check(client.status()["volume"] == "35", "setvol", client.status())
    check(client.getvol() == {"volume": "35"}, "getvol", client.getvol())

    # idle with a second client. python-mpd2 3.0 dropped send_idle/fetch_idle: its blocking idle()
    # runs in a thread while the first client acts.
    watcher = mpd.MPDClient()
    watcher.timeout = 10
    watcher.idletimeout = 10
    watcher.connect(socket_path)
    changed = idle_in_background(watcher, ["player"], client.next)
    check(changed == ["player"], "idle('player') sees the other client's next", changed)
    # Paused, so that the one-second song stays current for the checks below. Changes that came while
    # the watcher was not idling are reported at its next idle, at once.
    client.pause(1)
    client.setvol(40)
    client.repeat(1)
    changed = watcher.idle()
    check(sorted(changed) == ["mixer", "options", "player"], "idle() reports missed changes at once", changed)
    check(watcher.ping() is None, "the watcher goes on after idle", None)
    watcher.disconnect()

    # The asyncio client's idle (which sends idle and noidle itself).
    changed = asyncio.run(async_idle(socket_path, ["mixer"], lambda: client.setvol(45)))
    check(changed == ["mixer"], "mpd.asyncio idle('mixer')", changed)
    check(client.status()["volume"] == "45", "volume after the asyncio idle", client.status())

    # A command list in python-mpd2's ok form.
    client.command_list_ok_begin()
    client.status()
    client.currentsong()
    client.setvol(55)
    client.getvol()
    results = client.command_list_end()
    check(len(results) == 4, "command list answers every command", results)
    check(results[0]["state"] == "pause", "status in the list", results[0])
    check(results[1]["file"] == "one-second.mp3", "currentsong in the list", results[1])
    check(results[3] == {"volume": "55"}, "getvol after setvol in the list", results[3])

    # Refusals are CommandError with MPD's fields.
    try:
        client.play(99)
    except mpd.CommandError as error:
        check("Bad song index" in str(error) or "position 99" in str(error), "play 99 is refused", str(error))
    else:
        raise AssertionError("play 99 was accepted")
    try:
        client.add("nonexistent.mp3")
    except mpd.CommandError as error:
        check(str(error).startswith("[50@0] {add}"), "add nonexistent.mp3 is ACK 50", str(error))
    else:
        raise AssertionError("add nonexistent.mp3 was accepted")
    try:
        client.command_list_ok_begin()
        client.ping()
        client.seekcur("abc")
        client.ping()
        client.command_list_end()
    except mpd.CommandError as error:
        check(str(error).startswith("[2@1]"), "a failing command list names the index", str(error))
    else:
        raise AssertionError("a list with a bad argument was accepted")
    try:
        client.nosuchcommand()
    except mpd.CommandError as error:
        check(str(error) == '[5@0] {} unknown command "nosuchcommand"', "an unknown command is CommandError", str(error))
    else:
        raise AssertionError("an unknown command was accepted")
    check(client.ping() is None, "the connection goes on after errors", None)

    client.stop()
    client.clear()
    status = wait_for(client, "playlistlength", "0")
    check(status["state"] == "stop", "stop and clear", status)
    client.close()
    client.disconnect()
    print("all checks passed")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: mpd2_client.py SOCKET_PATH")
    main(sys.argv[1])
