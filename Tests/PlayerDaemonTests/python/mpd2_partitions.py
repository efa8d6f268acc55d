#!/usr/bin/python3
"""python-mpd2's partition calls against one daemon (mpd or playerd) with three null outputs A, B, C.

Two connections: one stays in the default partition, the other makes and enters a partition, takes
outputs there and back, and both try to delete it. Prints one line per call: the connection, the
call and what python-mpd2 made of the answer (or the error it raised), so that the test can compare
the lines of mpd and playerd. Exits non-zero if a connection breaks.
"""

import sys

import mpd


def main(socket_path):
    clients = []
    for _ in range(2):
        client = mpd.MPDClient()
        client.timeout = 10
        client.connect(socket_path)
        clients.append(client)
    calls = [
        (0, "listpartitions", ()),
        (0, "newpartition", ("room",)),
        (0, "newpartition", ("room",)),
        (0, "newpartition", ("bad name",)),
        (1, "partition", ("nowhere",)),
        (1, "partition", ("room",)),
        (1, "outputs", ()),
        (1, "moveoutput", ("C",)),
        (1, "moveoutput", ("A",)),
        (1, "moveoutput", ("nothing",)),
        (1, "outputs", ()),
        (1, "disableoutput", (1,)),
        (1, "outputs", ()),
        (0, "outputs", ()),
        (0, "enableoutput", (0,)),
        (0, "listpartitions", ()),
        (0, "delpartition", ("room",)),
        (1, "partition", ("default",)),
        (0, "delpartition", ("room",)),
        (1, "moveoutput", ("A",)),
        (1, "moveoutput", ("C",)),
        (0, "outputs", ()),
        (0, "delpartition", ("room",)),
        (0, "delpartition", ("default",)),
        (0, "listpartitions", ()),
    ]
    for number, name, arguments in calls:
        try:
            result = getattr(clients[number], name)(*arguments)
        except mpd.CommandError as error:
            result = "CommandError: " + str(error)
        print(number, name, repr(arguments), "->", repr(result))
    for client in clients:
        client.close()
        client.disconnect()


if __name__ == "__main__":
    main(sys.argv[1])
