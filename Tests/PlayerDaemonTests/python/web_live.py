"""Changes made with mpc reach the page live: mpc pause, volume 37, random on, add, del and play each
show on the page within 0.25 s of mpc's return (the DOM polled every 10 ms for at most 2 s; the
figures printed).

Usage: web_live.py URL SOCKET
"""

from web_common import (
    DESKTOP,
    JS_PAUSED,
    JS_PLAYING,
    arguments,
    browser,
    done,
    fail,
    js_string,
    mpc,
    mpc_playlist,
    ok,
    open_page,
    show_tab,
    timed_until,
    wait_for,
)

LIMIT = 0.25

url, socket = arguments(2, "web_live.py URL SOCKET")

mpc(socket, "-q", "clear")
mpc(socket, "-q", "add", "Aurora Tones/First Light")
mpc(socket, "-q", "volume", "80")
mpc(socket, "-q", "random", "off")
mpc(socket, "-q", "play", "1")

driver = browser(DESKTOP)
open_page(driver, url)
show_tab(driver, "Queue")
wait_for("the page playing", lambda: driver.execute_script(JS_PLAYING))
wait_for("the queue's 3 songs", lambda: len(driver.find_elements("css selector", "#queue li.queue-item")) == 3)
ok("the page shows the queue of 3 playing")

QUEUE = "return Array.from(document.querySelectorAll('#queue li.queue-item')).map(li => li.textContent).join('\\n')"


def queue_shows(count, present, absent):
    """A check: the page's queue has `count` items, one mentioning `present`, none `absent`."""
    script = (
        "const items = Array.from(document.querySelectorAll('#queue li.queue-item')).map(li => li.textContent);"
        f" return items.length === {count}"
        f" && items.some(t => t.includes({js_string(present)}))"
        f" && !items.some(t => t.includes({js_string(absent)}))"
    )
    return lambda: driver.execute_script(script)


figures = []
mpc(socket, "-q", "pause")
figures.append(timed_until("mpc pause: #play-pause labelled Play", lambda: driver.execute_script(JS_PAUSED), LIMIT))
mpc(socket, "-q", "volume", "37")
figures.append(timed_until(
    "mpc volume 37: #volume at 37",
    lambda: driver.execute_script("return document.getElementById('volume').value === '37'"), LIMIT))
mpc(socket, "-q", "random", "on")
figures.append(timed_until(
    "mpc random on: #random pressed",
    lambda: driver.execute_script("return document.getElementById('random').getAttribute('aria-pressed') === 'true'"),
    LIMIT))
mpc(socket, "-q", "add", "Night Signals/Low Frequencies/01 Deep Blue.mp3")
figures.append(timed_until("mpc add: Deep Blue in the queue", queue_shows(4, "Deep Blue", "no such song"), LIMIT))
mpc(socket, "-q", "del", "2")
figures.append(timed_until("mpc del 2: Morning Air gone from the queue", queue_shows(3, "Deep Blue", "Morning Air"),
                           LIMIT))
mpc(socket, "-q", "play")
figures.append(timed_until("mpc play: #play-pause labelled Pause", lambda: driver.execute_script(JS_PLAYING), LIMIT))

titles = mpc_playlist(socket)
shown = driver.execute_script(QUEUE).split("\n")
if len(shown) != len(titles) or not all(title in text for title, text in zip(titles, shown)):
    fail(f"the page's queue {shown} is not mpc's playlist {titles}")
ok(f"the page's queue is mpc's playlist: {titles}")
ok("the page followed every change within "
   f"{max(figures) * 1000:.0f} ms (mean {sum(figures) / len(figures) * 1000:.0f} ms) of mpc's return")
done()
