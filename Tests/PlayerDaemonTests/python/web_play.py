"""Play from the library as a person would: the Library tab, the folders Aurora Tones → First Light,
"Play Morning Air"; within 2 s the page shows the state playing and the title, and mpc agrees.

Usage: web_play.py URL SOCKET
"""

import time

from web_common import (
    DESKTOP,
    JS_PLAYING,
    PHONE,
    arguments,
    browser,
    by_id,
    click_button,
    done,
    fail,
    js_title_is,
    mpc,
    mpc_status,
    ok,
    open_page,
    queue_items,
    quit_all,
    show_tab,
    wait_for,
)

url, socket = arguments(2, "web_play.py URL SOCKET")


def play_from_library(size, size_name, song):
    mpc(socket, "-q", "clear")
    driver = browser(size)
    open_page(driver, url)
    show_tab(driver, "Library")
    mode = by_id(driver, "library-mode-folders")
    if mode.get_attribute("aria-pressed") != "true":
        mode.click()
    click_button(driver, "Open Aurora Tones")
    click_button(driver, "Open First Light")
    click_button(driver, f"Play {song}")
    clicked = time.monotonic()
    check = f"return (() => {{ {JS_PLAYING} }})() && (() => {{ {js_title_is(song)} }})()"
    while not driver.execute_script(check):
        if time.monotonic() - clicked > 2:
            fail(f"at {size_name} size, 2 s after Play {song}: #play-pause is labelled "
                 f"{by_id(driver, 'play-pause').get_attribute('aria-label')!r}, #now-title says "
                 f"{by_id(driver, 'now-title').text!r}")
        time.sleep(0.01)
    ok(f"at {size_name} size the page shows {song} playing {(time.monotonic() - clicked) * 1000:.0f} ms after the click")
    status = mpc_status(socket)
    if status["state"] != "playing" or status["title"] != song:
        fail(f"mpc status says {status['state']} {status['title']!r}, not playing {song!r}")
    ok(f"mpc status agrees: playing {song}")
    show_tab(driver, "Queue")
    items = wait_for("the queue showing the song", lambda: queue_items(driver) or None)
    if not any(song in text for _, _, text in items):
        fail(f"the queue does not show {song}: {items}")
    quit_all()


play_from_library(PHONE, "phone", "Morning Air")
play_from_library(DESKTOP, "desktop", "High Noon")
done()
