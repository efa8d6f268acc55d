"""The web remote's other panels, as a person would use them, each checked with mpc: the library by
artist → album → song, search (case and accents folded: "chloe NOEL" finds Chloé Noël's song), the
queue saved as a stored playlist, loaded and deleted, an output switched off and on, the sleep timer
set and cancelled, and a timed pause.

Usage: web_panels.py URL SOCKET
"""

import re

from selenium.webdriver.common.keys import Keys

from web_common import (
    DESKTOP,
    arguments,
    browser,
    by_id,
    click_button,
    done,
    fail,
    js_string,
    mpc,
    mpc_playlist,
    mpc_status,
    ok,
    open_page,
    show_tab,
    text_of,
    wait_for,
)

url, socket = arguments(2, "web_panels.py URL SOCKET")

mpc(socket, "-q", "clear")
for name in mpc(socket, "lsplaylists").split():
    mpc(socket, "-q", "rm", name)

driver = browser(DESKTOP)
open_page(driver, url)

# The library by artist, album and song.
show_tab(driver, "Library")
by_id(driver, "library-mode-artists").click()
wait_for("Artists pressed", lambda: by_id(driver, "library-mode-artists").get_attribute("aria-pressed") == "true")
click_button(driver, "Open Night Signals")
click_button(driver, "Open Low Frequencies")
click_button(driver, "Play Static Bloom")
wait_for("mpc playing Static Bloom", lambda: mpc_status(socket)["title"] == "Static Bloom"
         and mpc_status(socket)["state"] == "playing", timeout=2)
ok("Library → Artists → Night Signals → Low Frequencies → Play Static Bloom: mpc plays it")
click_button(driver, "Back")
click_button(driver, "Add Low Frequencies")
wait_for("the album added", lambda: mpc_playlist(socket) == ["Static Bloom", "Deep Blue", "Static Bloom"], timeout=2)
ok("Back, Add Low Frequencies: mpc's queue has the album after the song")

# Search: case and accents folded, as the daemon's search.
show_tab(driver, "Search")
field = by_id(driver, "search-input")
field.send_keys("chloe NOEL")
field.send_keys(Keys.ENTER)
wait_for("Rain on the Roof found", lambda: driver.execute_script(
    "return document.getElementById('search-results').textContent.includes('Rain on the Roof')"), timeout=3)
found = driver.execute_script(
    "return document.querySelectorAll('#search-results li').length")
if found != 1:
    fail(f"searching 'chloe NOEL' shows {found} results, not Chloé Noël's one song")
click_button(driver, "Add Rain on the Roof", within=by_id(driver, "search-results"))
wait_for("Rain on the Roof added", lambda: mpc_playlist(socket)[-1:] == ["Rain on the Roof"], timeout=2)
ok("Search 'chloe NOEL' finds Chloé Noël's Rain on the Roof alone; Add puts it in mpc's queue")

# The queue saved as a playlist, loaded, deleted.
show_tab(driver, "Queue")
name_field = by_id(driver, "queue-save-name")
name_field.send_keys("evening")
by_id(driver, "queue-save").click()
wait_for("mpc lsplaylists showing evening", lambda: "evening" in mpc(socket, "lsplaylists").split(), timeout=2)
ok("Save queue as playlist 'evening': mpc lsplaylists has it")
mpc(socket, "-q", "clear")
show_tab(driver, "Playlists")
click_button(driver, "Load evening")
wait_for("the playlist loaded", lambda: mpc_playlist(socket) == ["Static Bloom", "Deep Blue", "Static Bloom",
                                                                 "Rain on the Roof"], timeout=2)
ok("Load evening: mpc's queue is the saved one")
click_button(driver, "Delete evening")
wait_for("the playlist deleted", lambda: "evening" not in mpc(socket, "lsplaylists").split(), timeout=2)
wait_for("the playlist gone from the page", lambda: not driver.execute_script(
    "return document.getElementById('playlists').textContent.includes('evening')"), timeout=2)
ok("Delete evening: gone for mpc and from the page")

# Outputs: the first output switched off and on by its labelled switch.
show_tab(driver, "Outputs")
first = mpc(socket, "outputs").splitlines()[0]
match = re.match(r"Output (\d+) \((.*)\) is (enabled|disabled)", first)
if not match or match.group(3) != "enabled":
    fail(f"mpc outputs says {first!r}")
number, output = match.group(1), match.group(2)
FIND_SWITCH = (
    "return Array.from(document.querySelectorAll('#outputs input[type=checkbox][role=switch]'))"
    f".find(b => b.labels.length > 0 && b.labels[0].textContent.trim() === {js_string(output)}) || null")


def output_switch(checked):
    """The switch labelled with the output's name, when it shows `checked`."""
    box = driver.execute_script(FIND_SWITCH)
    return box if box is not None and box.is_selected() == checked else None


wait_for(f"the switch labelled {output}, on", lambda: output_switch(True)).click()
wait_for("the output disabled", lambda: f"Output {number} ({output}) is disabled" in mpc(socket, "outputs"), timeout=2)
# The list is redrawn at the daemon's change: the switch is found again, as a person looks again.
wait_for(f"the switch labelled {output}, off", lambda: output_switch(False), timeout=2).click()
wait_for("the output enabled", lambda: f"Output {number} ({output}) is enabled" in mpc(socket, "outputs"), timeout=2)
ok(f"the switch labelled {output!r} turns output {number} off and on again (mpc outputs agrees)")

# Timers: the sleep timer set and cancelled, then a timed pause.
mpc(socket, "-q", "play")
show_tab(driver, "Timers")
minutes = by_id(driver, "sleep-minutes")
minutes.clear()
minutes.send_keys("15")
by_id(driver, "sleep-set").click()
wait_for("#timer-status saying Sleeps in 15:00 or a little less",
         lambda: re.fullmatch(r"Sleeps in 1[45]:\d\d", text_of(driver, "timer-status") or ""), timeout=2)
ok(f"Set sleep timer of 15 minutes: #timer-status says {text_of(driver, 'timer-status')!r}")
by_id(driver, "sleep-end").click()
wait_for("#timer-status saying Sleeps at the end of the song",
         lambda: text_of(driver, "timer-status") == "Sleeps at the end of the song", timeout=2)
ok("Sleep at the end of the song: #timer-status says so")
by_id(driver, "sleep-off").click()
wait_for("#timer-status saying No timer", lambda: text_of(driver, "timer-status") == "No timer", timeout=2)
ok("Cancel sleep timer: #timer-status says No timer")
pause = by_id(driver, "pause-minutes")
pause.clear()
pause.send_keys("5")
by_id(driver, "pause-set").click()
wait_for("#timer-status saying Resumes in 5:00 or a little less",
         lambda: re.fullmatch(r"Resumes in [45]:\d\d", text_of(driver, "timer-status") or ""), timeout=2)
wait_for("mpc saying paused", lambda: mpc_status(socket)["state"] == "paused", timeout=2)
ok(f"Pause for 5 minutes: mpc says paused, #timer-status says {text_of(driver, 'timer-status')!r}")
done()
