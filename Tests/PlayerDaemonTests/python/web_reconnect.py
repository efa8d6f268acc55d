"""The connection banner, with the Swift test (WebRemoteBrowserTests.connectionBanner) on the other side
of a handshake through files in HANDSHAKE: once the page shows the first daemon's state this script
writes `kill-now`; the test kills that daemon; the page must then show #connection ("Connection lost —
reconnecting…"), and this script writes `banner-seen`; the test starts a new daemon on the same port,
gives it a queue of two songs, plays the second at volume 61, and writes its socket path to
`restarted`; the page must hide #connection and show the new daemon's state.

Usage: web_reconnect.py URL SOCKET HANDSHAKE
"""

import os
import time

from web_common import (
    DESKTOP,
    JS_PLAYING,
    arguments,
    browser,
    done,
    fail,
    is_shown,
    mpc,
    mpc_playlist,
    mpc_status,
    ok,
    open_page,
    show_tab,
    text_of,
    wait_for,
)

url, socket, handshake = arguments(3, "web_reconnect.py URL SOCKET HANDSHAKE")


def signal(name):
    with open(os.path.join(handshake, name), "w") as file:
        file.write("\n")


mpc(socket, "-q", "clear")
mpc(socket, "-q", "add", "Aurora Tones/First Light")
mpc(socket, "-q", "volume", "30")

driver = browser(DESKTOP)
open_page(driver, url)
show_tab(driver, "Queue")
wait_for("the first daemon's queue of 3", lambda: len(driver.find_elements("css selector", "#queue li.queue-item")) == 3)
wait_for("the first daemon's volume 30",
         lambda: driver.execute_script("return document.getElementById('volume').value === '30'"))
if is_shown(driver, "connection") and text_of(driver, "connection"):
    fail(f"#connection says {text_of(driver, 'connection')!r} while connected")
ok("connected: the first daemon's state shown, no connection banner")

signal("kill-now")
killed = time.monotonic()
wait_for("#connection shown after the daemon was killed",
         lambda: is_shown(driver, "connection") and "Connection lost" in (text_of(driver, "connection") or ""),
         timeout=10)
ok(f"#connection says {text_of(driver, 'connection')!r} {(time.monotonic() - killed) * 1000:.0f} ms after the kill")
if driver.find_element("id", "connection").get_attribute("role") != "status":
    fail("#connection is not role=status")
signal("banner-seen")

restarted = os.path.join(handshake, "restarted")
wait_for("the test's new daemon", lambda: os.path.exists(restarted) and open(restarted).read().endswith("\n"),
         timeout=60)
new_socket = open(restarted).read().strip()
back = time.monotonic()
# The page reconnects with a backoff: give it time.
wait_for("#connection hidden after the new daemon started",
         lambda: not is_shown(driver, "connection") or not text_of(driver, "connection"), timeout=30)
ok(f"#connection hidden {(time.monotonic() - back) * 1000:.0f} ms after the new daemon answered")
wait_for("the new daemon's state: Static Bloom playing at volume 61, a queue of 2",
         lambda: driver.execute_script(
             f"return (() => {{ {JS_PLAYING} }})()"
             " && document.getElementById('now-title').textContent.trim() === 'Static Bloom'"
             " && document.getElementById('volume').value === '61'"
             " && document.querySelectorAll('#queue li.queue-item').length === 2"),
         timeout=5)
status = mpc_status(new_socket)
if status["state"] != "playing" or status["title"] != "Static Bloom" or mpc_playlist(new_socket) != [
        "Deep Blue", "Static Bloom"]:
    fail(f"the new daemon is not as the test left it: {status}, {mpc_playlist(new_socket)}")
ok("the page shows the new daemon's state (Static Bloom playing, volume 61, a queue of 2), as mpc says")
mpc(new_socket, "-q", "volume", "62")
wait_for("a change on the new daemon", lambda: driver.execute_script(
    "return document.getElementById('volume').value === '62'"), timeout=2)
ok("and follows its changes live")
done()
