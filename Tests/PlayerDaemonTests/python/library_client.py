"""python-mpd2 (Debian's python3-mpd) browsing, searching and updating a server's music library.

Usage: python3 library_client.py SOCKET_PATH MUSIC_DIR SERVER

SERVER is `playerd` or `mpd` (the harness runs the same checks against the real MPD 0.23.12 to prove
them); MUSIC_DIR is the server's music directory, a private copy of the tree that
LibraryClientSupport.swift generates, which this script changes (it adds one song before an update).

Each check prints one line, `ok: ...` or `FAIL: ...`, and the script goes on after a failed check (so
that one run shows everything a server gets wrong); it exits with a non-zero status if any failed, or
at once with a traceback if the server refuses a command. The Swift test (LibraryClientTests.swift) runs this script and checks its exit
status and output.
"""

import os
import shutil
import sys
import threading
import time

import mpd

EXPECTED_FILES = {
    "loose.mp3",
    "Beyoncé/Lemonade/01 Formation.mp3",
    "Beyoncé/Lemonade/02 Hold Up.mp3",
    "Misc/Deep/Deeper/untagged.mp3",
    "Motörhead/Ace of Spades/01 Ace of Spades.mp3",
    "Motörhead/Ace of Spades/02 Love Me Like a Reptile.mp3",
    "Sigur Rós/Takk/01 Glósóli.mp3",
    "Sigur Rós/Takk/02 Hoppípolla.mp3",
    "Sigur Rós/Ágætis byrjun/01 Svefn-g-englar.mp3",
    "Various Artists/Mixtape/01 Overkill.mp3",
    "Various Artists/Mixtape/02 Crazy in Love.mp3",
    "東京事変/教育/01 林檎の唄.mp3",
    "東京事変/教育/02 群青日和.mp3",
}

EXPECTED_DIRECTORIES = {
    "Beyoncé",
    "Beyoncé/Lemonade",
    "Misc",
    "Misc/Deep",
    "Misc/Deep/Deeper",
    "Motörhead",
    "Motörhead/Ace of Spades",
    "Sigur Rós",
    "Sigur Rós/Takk",
    "Sigur Rós/Ágætis byrjun",
    "Various Artists",
    "Various Artists/Mixtape",
    "東京事変",
    "東京事変/教育",
}


# The song whose name is not UTF-8 (Latin-1 "café"): playerd keeps it under its escaped name (a
# backslash, "xE9"); MPD 0.23 leaves it out of its database.
LATIN1_SONG = "Misc/caf\\xE9.mp3"

FAILURES = []


def check(condition, what, detail=None):
    if condition:
        print(f"ok: {what}")
    else:
        FAILURES.append(what)
        print(f"FAIL: {what}: {detail!r}")


def browse(client, path, files, directories, songs):
    """Walks lsinfo from `path` down, as a client's file browser does."""
    for entry in client.lsinfo(path):
        if "directory" in entry:
            directories.add(entry["directory"])
            browse(client, entry["directory"], files, directories, songs)
        elif "file" in entry:
            files.add(entry["file"])
            songs[entry["file"]] = entry
        elif "playlist" in entry:
            check(path == "", "stored playlists are listed only at the root", (path, entry))
        else:
            raise AssertionError(f"an lsinfo entry that is neither file, directory nor playlist: {entry!r}")


def files_of(songs):
    return sorted(song["file"] for song in songs)


def wait_until_idle_db(client, limit=20.0):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        status = client.status()
        if "updating_db" not in status:
            return status
        time.sleep(0.05)
    raise AssertionError(f"updating_db never went away: {client.status()!r}")


def main(socket_path, music_dir, server):
    client = mpd.MPDClient()
    client.timeout = 20
    client.idletimeout = 20
    client.connect(socket_path)
    check(client.mpd_version.startswith("0.23."), "greeting version 0.23.x", client.mpd_version)

    # The tags the library's songs carry must be known tag types.
    tagtypes = set(client.tagtypes())
    for tag in ("Artist", "Album", "AlbumArtist", "Title", "Track", "Genre", "Date", "Disc"):
        check(tag in tagtypes, f"tagtypes has {tag}", sorted(tagtypes))

    # Browsing: lsinfo, directory by directory.
    files, directories, songs = set(), set(), {}
    browse(client, "", files, directories, songs)
    expected_files = EXPECTED_FILES | ({LATIN1_SONG} if server == "playerd" else set())
    song_count = len(expected_files)
    check(files == expected_files, "lsinfo walk finds every song and nothing else", sorted(files ^ expected_files))
    check(directories == EXPECTED_DIRECTORIES, "lsinfo walk finds every directory", sorted(directories))
    formation = songs["Beyoncé/Lemonade/01 Formation.mp3"]
    expected_tags = {
        "artist": "Beyoncé",
        "albumartist": "Beyoncé",
        "album": "Lemonade",
        "title": "Formation",
        "track": "1",
        "date": "2016",
        "genre": "Pop",
        "disc": "1",
        "time": "0",
    }
    for key, value in expected_tags.items():
        check(formation.get(key) == value, f"Formation's {key}", formation)
    # 0.3 s of sine, encoded at 32 kbit/s (22.05 kHz mono): 14 MPEG frames of 576 samples. Frames that
    # small leave LAME no room for its Info frame, so nothing records the encoder's delay and padding and
    # every player decodes all 8064 samples: 0.366 s (playerd counts them; MPD's mad plugin divides the
    # audio's 1463 bytes by 4000 bytes a second, 0.36575, and prints 0.365).
    check(0.365 <= float(formation["duration"]) <= 0.366, "Formation's duration", formation)
    untagged = songs["Misc/Deep/Deeper/untagged.mp3"]
    check(
        not ({"artist", "title", "album", "albumartist", "track", "date", "genre"} & set(untagged)),
        "an untagged song has no tags",
        untagged,
    )
    kanji = songs["東京事変/教育/02 群青日和.mp3"]
    check(kanji.get("title") == "群青日和" and kanji.get("album") == "教育", "UTF-16 ID3 tags arrive as UTF-8", kanji)
    if server == "playerd":
        latin1 = songs.get(LATIN1_SONG, {})
        check(latin1.get("title") == "Latin-1 Name", "the song named in Latin-1 has its tags", latin1)
        found = files_of(client.find("file", LATIN1_SONG))
        check(found == [LATIN1_SONG], "find file finds the song named in Latin-1 by its escaped name", found)

    # Searching (case-folded substring) and finding (exact).
    found = files_of(client.search("any", "Beyoncé"))
    check(
        found
        == [
            "Beyoncé/Lemonade/01 Formation.mp3",
            "Beyoncé/Lemonade/02 Hold Up.mp3",
            "Various Artists/Mixtape/02 Crazy in Love.mp3",
        ],
        "search any Beyoncé",
        found,
    )
    found = files_of(client.search("title", "HOLD"))
    check(found == ["Beyoncé/Lemonade/02 Hold Up.mp3"], "search folds case", found)
    # MPD 0.23 does not fold accents (it compares case-folded UTF-8): `motorhead` finds nothing there.
    # playerd folds accents as well, so the plain-ASCII spelling finds the three Motörhead songs.
    found = files_of(client.search("artist", "motorhead"))
    expected = 3 if server == "playerd" else 0
    check(len(found) == expected, f"search artist motorhead finds {expected} on {server}", found)
    found = files_of(client.find("artist", "Sigur Rós", "album", "Takk"))
    check(found == ["Sigur Rós/Takk/01 Glósóli.mp3", "Sigur Rós/Takk/02 Hoppípolla.mp3"], "find with two pairs", found)
    found = files_of(client.find("artist", "sigur rós"))
    check(found == [], "find is case-sensitive", found)

    # Albums of an artist, the way a library browser asks.
    albums = [entry["album"] for entry in client.list("album", "artist", "Sigur Rós")]
    check(albums == ["Takk", "Ágætis byrjun"], "list album artist Sigur Rós (byte order)", albums)
    albums = [entry["album"] for entry in client.list("album", "albumartist", "Various Artists")]
    check(albums == ["Mixtape"], "list album albumartist Various Artists", albums)
    count = client.count("artist", "Beyoncé")
    check(count["songs"] == "3", "count artist Beyoncé", count)

    stats = client.stats()
    check(
        (stats["artists"], stats["albums"], stats["songs"]) == ("5", "6", str(song_count)),
        f"stats: 5 artists, 6 albums, {song_count} songs",
        stats,
    )
    check("db_update" in stats and int(stats["db_update"]) > 0, "stats has db_update", stats)

    # Adding an album to the queue.
    client.clear()
    client.findadd("album", "Lemonade")
    queue = [song["file"] for song in client.playlistinfo()]
    check(
        queue == ["Beyoncé/Lemonade/01 Formation.mp3", "Beyoncé/Lemonade/02 Hold Up.mp3"],
        "findadd album Lemonade queues the album in track order",
        queue,
    )
    client.add("Motörhead/Ace of Spades")
    check(len(client.playlistinfo()) == 4, "add of a library directory queues its songs", client.playlistinfo())

    # idle update/database across an update that finds a new song, seen from a second client.
    watcher = mpd.MPDClient()
    watcher.timeout = 20
    watcher.idletimeout = 20
    watcher.connect(socket_path)
    seen = []
    failure = []

    def watch():
        try:
            deadline = time.monotonic() + 20
            while "database" not in seen and time.monotonic() < deadline:
                seen.extend(watcher.idle("update", "database"))
        except Exception as error:  # reported below, in the main thread
            failure.append(error)

    thread = threading.Thread(target=watch)
    thread.start()
    time.sleep(0.3)
    check(thread.is_alive() and seen == [], "idle update database waits while nothing changes", seen)
    shutil.copyfile(os.path.join(music_dir, "loose.mp3"), os.path.join(music_dir, "Misc", "added.mp3"))
    job = client.update()
    check(job.isdigit() and int(job) > 0, "update answers a job id", job)
    thread.join(20)
    check(not thread.is_alive(), "idle ends after the update", seen)
    if failure:
        raise failure[0]
    check("update" in seen and "database" in seen, "idle reports update and database", seen)
    wait_until_idle_db(client)
    found = files_of(client.find("file", "Misc/added.mp3"))
    check(found == ["Misc/added.mp3"], "the new song is in the library after the update", found)
    check(client.stats()["songs"] == str(song_count + 1), "stats counts the new song", client.stats())
    watcher.disconnect()

    # status carries updating_db while a job runs: rescan and status in one command list, so that
    # status runs before the job can end.
    client.command_list_ok_begin()
    client.rescan()
    client.status()
    job, status = client.command_list_end()
    check(job.isdigit(), "rescan answers a job id", job)
    check(status.get("updating_db") == job, "status has updating_db while the rescan runs", status)
    status = wait_until_idle_db(client)
    check("updating_db" not in status, "updating_db is gone once the rescan ended", status)
    check(client.stats()["songs"] == str(song_count + 1), "stats after the rescan", client.stats())

    client.clear()
    client.close()
    client.disconnect()
    if FAILURES:
        sys.exit(f"{len(FAILURES)} checks failed: {FAILURES}")
    print("all checks passed")


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[3] not in ("playerd", "mpd"):
        sys.exit("usage: library_client.py SOCKET_PATH MUSIC_DIR playerd|mpd")
    main(*sys.argv[1:])
