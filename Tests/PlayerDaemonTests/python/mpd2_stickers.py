#!/usr/bin/python3
"""python-mpd2's sticker calls against one daemon (mpd or playerd) on StickerMusic's library.

Prints one line per call: the call and what python-mpd2 made of the answer (or the error it raised),
so that the test can compare the lines of mpd and playerd. Exits non-zero if the connection breaks.
"""

import sys

import mpd


def main(socket_path):
    client = mpd.MPDClient()
    client.timeout = 10
    client.connect(socket_path)
    calls = [
        ("sticker_set", ("song", "a.mp3", "rating", "5")),
        ("sticker_set", ("song", "dir/b.mp3", "rating", "3")),
        ("sticker_set", ("song", "dir/b.mp3", "note", "x=y z")),
        ("sticker_set", ("song", "Ágætis/é.mp3", "rating", "très bien")),
        ("sticker_get", ("song", "a.mp3", "rating")),
        ("sticker_get", ("song", "dir/b.mp3", "note")),
        ("sticker_get", ("song", "a.mp3", "missing")),
        ("sticker_get", ("song", "nope.mp3", "rating")),
        ("sticker_list", ("song", "dir/b.mp3")),
        ("sticker_list", ("song", "dirx.mp3")),
        ("sticker_find", ("song", "", "rating")),
        ("sticker_find", ("song", "dir", "rating")),
        ("sticker_find", ("song", "", "rating", "<", "4")),
        ("sticker_delete", ("song", "dir/b.mp3", "note")),
        ("sticker_delete", ("song", "dir/b.mp3", "note")),
        ("sticker_delete", ("song", "a.mp3")),
        ("sticker_find", ("song", "", "rating")),
        ("sticker_get", ("album", "a.mp3", "rating")),
    ]
    for name, arguments in calls:
        try:
            result = getattr(client, name)(*arguments)
        except mpd.CommandError as error:
            result = "CommandError: " + str(error)
        print(name, repr(arguments), "->", repr(result))
    client.close()
    client.disconnect()


if __name__ == "__main__":
    main(sys.argv[1])
