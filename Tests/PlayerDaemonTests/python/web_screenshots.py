"""Takes the README's pictures of the web remote: docs/web-remote-phone.png (390x844) and
docs/web-remote-desktop.png (1280x800), the page playing a queue of the music tree's songs with
covers. scripts/web-screenshots.sh starts the daemon and runs this; not part of the tests.

Usage: web_screenshots.py URL SOCKET OUTPUT_DIRECTORY
"""

import os

from web_common import (
    DESKTOP,
    PHONE,
    arguments,
    browser,
    done,
    mpc,
    ok,
    open_page,
    quit_all,
    show_tab,
    text_of,
    wait_for,
)

url, socket, output = arguments(3, "web_screenshots.py URL SOCKET OUTPUT_DIRECTORY")

mpc(socket, "-q", "clear")
mpc(socket, "-q", "add", "Night Signals/Low Frequencies")
mpc(socket, "-q", "add", "Aurora Tones/First Light")
mpc(socket, "-q", "add", "Field Recordings")
mpc(socket, "-q", "volume", "70")
mpc(socket, "-q", "repeat", "on")
mpc(socket, "-q", "play", "3")
mpc(socket, "-q", "seek", "0:42")

for size, name in ((PHONE, "phone"), (DESKTOP, "desktop")):
    driver = browser(size)
    open_page(driver, url)
    show_tab(driver, "Queue")
    wait_for("Dawn playing", lambda: text_of(driver, "now-title") == "Dawn")
    wait_for("the queue of 6", lambda: len(driver.find_elements("css selector", "#queue li.queue-item")) == 6)
    wait_for("the cover", lambda: driver.execute_script(
        "const c = document.getElementById('cover'); return c.complete && c.naturalWidth > 0"
        " && c.getAttribute('src').includes('/api/cover')"))
    driver.execute_script("window.scrollTo(0, 0)")
    # Pictures in the queue (if it shows any) loaded too.
    wait_for("the queue's covers", lambda: driver.execute_script(
        "return Array.from(document.querySelectorAll('#queue img')).every(i => i.complete)"))
    path = os.path.join(output, f"web-remote-{name}.png")
    driver.save_screenshot(path)
    ok(f"{path} ({size[0]}x{size[1]})")
    quit_all()
done()
