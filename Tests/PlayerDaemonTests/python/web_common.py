"""What the web remote's browser tests share: headless Debian chromium through Debian's chromedriver
(selenium, never a driver or browser of its own), waits that poll, mpc on the daemon's socket, and the
one way a check fails (`fail`: a clear message on stderr, exit status 1).

Each web_*.py test script takes the page's URL and the daemon's socket path as its first two
arguments, prints `ok: ...` for each check that holds, and ends with `all checks passed`.
"""

import os
import subprocess
import sys
import time

# Selenium Manager must never download a driver or a browser: the driver is Debian's.
os.environ["SE_OFFLINE"] = "true"

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import (  # noqa: E402
    NoSuchElementException,
    StaleElementReferenceException,
    WebDriverException,
)
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
MPC = "/usr/bin/mpc"

PHONE = (390, 844)
DESKTOP = (1280, 800)

_drivers = []


def fail(message):
    """Ends the script: the message on stderr, the browsers closed, exit status 1."""
    sys.stdout.flush()
    print(f"FAILED: {message}", file=sys.stderr, flush=True)
    for driver in _drivers:
        try:
            print(f"--- the page's console:\n{console_text(driver)}", file=sys.stderr)
        except Exception:  # noqa: BLE001 - a broken browser must not hide the failure
            pass
    quit_all()
    sys.exit(1)


def _unexpected(kind, error, trace):
    """Any error a check did not expect (selenium's, say) fails as clearly: its trace, then the message."""
    import traceback

    traceback.print_exception(kind, error, trace)
    fail(f"unexpected {kind.__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}")


sys.excepthook = _unexpected


def ok(message):
    print(f"ok: {message}", flush=True)


def done():
    quit_all()
    print("all checks passed", flush=True)


def quit_all():
    while _drivers:
        driver = _drivers.pop()
        try:
            driver.quit()
        except Exception:  # noqa: BLE001
            pass


def arguments(count, usage):
    """The script's arguments, exactly `count` of them, or the usage on stderr and exit status 2."""
    if len(sys.argv) != count + 1:
        print(f"usage: {usage}", file=sys.stderr)
        sys.exit(2)
    return sys.argv[1:]


def browser(size):
    """A new headless chromium at `size` (CSS pixels: width, height of the viewport)."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--force-device-scale-factor=1",
        f"--window-size={size[0]},{size[1]}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    except WebDriverException as error:
        fail(f"chromium did not start through {CHROMEDRIVER}: {error.msg}")
    _drivers.append(driver)
    driver.set_script_timeout(30)
    # --window-size sets the window; the viewport is what the page's layout sees.
    set_viewport(driver, size)
    return driver


def set_viewport(driver, size):
    """Makes the viewport (window.innerWidth/innerHeight, what the page's layout sees) exactly `size`:
    the window is sized to it, then the DevTools protocol fixes the viewport, since a headless window
    does not always take its size at once."""
    driver.set_window_size(size[0], size[1])
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": False},
    )
    inner = wait_for(
        f"a viewport of {size[0]}x{size[1]}",
        lambda: (lambda found: found if tuple(found) == tuple(size) else None)(
            driver.execute_script("return [window.innerWidth, window.innerHeight]")
        ),
    )
    return inner


def console_text(driver):
    try:
        entries = driver.get_log("browser")
    except Exception:  # noqa: BLE001
        return "(no console log)"
    return "\n".join(f"{entry['level']} {entry['message']}" for entry in entries) or "(empty)"


def wait_for(what, condition, timeout=5.0, interval=0.02):
    """Polls `condition` until it returns something true, and returns that; fails naming `what` after
    `timeout` seconds. Elements replaced while polled count as not yet."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            last = condition()
            if last:
                return last
        except (NoSuchElementException, StaleElementReferenceException):
            last = None
        if time.monotonic() >= deadline:
            fail(f"{what}: not within {timeout} s (last seen: {last!r})")
        time.sleep(interval)


def timed_until(what, condition, limit, timeout=2.0):
    """The seconds from now until `condition()` (a cheap check, usually one execute_script) is true,
    polled every 10 ms for at most `timeout` s; fails when it never is or takes longer than `limit`.
    Prints the figure."""
    start = time.monotonic()
    while True:
        try:
            seen = condition()
        except (NoSuchElementException, StaleElementReferenceException):
            seen = False
        elapsed = time.monotonic() - start
        if seen:
            break
        if elapsed >= timeout:
            fail(f"{what}: the page did not show it within {timeout} s")
        time.sleep(0.01)
    if elapsed > limit:
        fail(f"{what}: the page showed it {elapsed * 1000:.0f} ms after mpc returned (the limit is {limit * 1000:.0f} ms)")
    ok(f"{what}: on the page {elapsed * 1000:.0f} ms after mpc returned")
    return elapsed


def mpc(socket, *words, check=True):
    """Runs Debian's mpc on the daemon's socket and returns its stdout."""
    result = subprocess.run([MPC, "-h", socket, *words], capture_output=True, text=True, timeout=20)
    if check and result.returncode != 0:
        fail(f"mpc {' '.join(words)} exited {result.returncode}: {result.stderr.strip()}")
    return result.stdout


def mpc_status(socket):
    """mpc's status as a dict: `state` (playing, paused or stopped; `stopped` when mpc prints no song
    line), `title` (its song line), `volume`, `random`, `repeat`, `single`, `consume` (as mpc prints
    them)."""
    lines = mpc(socket, "-f", "%title%", "status").splitlines()
    status = {"state": "stopped", "title": None}
    if len(lines) == 3:
        status["title"] = lines[0]
        status["state"] = lines[1].split("]")[0].lstrip("[")
    for word in lines[-1].replace(": ", ":").split():
        key, _, value = word.partition(":")
        status[key] = value.rstrip("%").strip()
    return status


def mpc_playlist(socket):
    """The queue's titles, in order."""
    return mpc(socket, "-f", "%title%", "playlist").splitlines()


def by_id(driver, element_id):
    return driver.find_element(By.ID, element_id)


def button_named(driver, name, within=None):
    """The visible button whose accessible name (aria-label, else its text) is `name`."""
    root = within if within is not None else driver
    for button in root.find_elements(By.CSS_SELECTOR, "button"):
        label = button.get_attribute("aria-label") or button.text
        if label.strip() == name and button.is_displayed():
            return button
    return None


def click_button(driver, name, within=None, timeout=5.0):
    button = wait_for(f'a visible button named "{name}"', lambda: button_named(driver, name, within), timeout)
    scroll_into_view(driver, button)
    button.click()
    return button


def scroll_into_view(driver, element):
    driver.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'nearest'})", element)


def is_shown(driver, element_id):
    """Whether the element exists and is displayed (not hidden, not display:none, has a size)."""
    elements = driver.find_elements(By.ID, element_id)
    return bool(elements) and elements[0].is_displayed()


def text_of(driver, element_id):
    return driver.execute_script(
        "const e = document.getElementById(arguments[0]); return e ? e.textContent.trim() : null", element_id
    )


# JavaScript checks for `timed_until`: one execute_script each, so a poll costs one round trip.
JS_PLAYING = (
    "const b = document.getElementById('play-pause');"
    " return b !== null && b.getAttribute('aria-label') === 'Pause'"
)
JS_PAUSED = (
    "const b = document.getElementById('play-pause');"
    " return b !== null && b.getAttribute('aria-label') === 'Play'"
)


def js_title_is(title):
    return "const e = document.getElementById('now-title'); return e !== null && e.textContent.trim() === %s" % (
        js_string(title)
    )


def js_string(text):
    import json

    return json.dumps(text)


def open_page(driver, url):
    """Loads the page and waits until it shows the daemon's state (the transport's label is set)."""
    driver.get(url)
    wait_for(
        "the page's first state (#play-pause labelled Play or Pause)",
        lambda: by_id(driver, "play-pause").get_attribute("aria-label") in ("Play", "Pause"),
        timeout=10,
    )


def queue_items(driver):
    """The queue as the page shows it: (data-id, data-position, text) of each li.queue-item."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#queue li.queue-item')).map("
        "li => [li.dataset.id, li.dataset.position, li.textContent.trim()])"
    )


def show_tab(driver, name):
    """Clicks the tab `name` (Queue, Library, ...) and waits until its panel is shown."""
    tab = by_id(driver, "tab-" + name.lower())
    scroll_into_view(driver, tab)
    tab.click()
    wait_for(f"the {name} panel shown", lambda: is_shown(driver, "panel-" + name.lower()))
    wait_for(f"the {name} tab selected", lambda: tab.get_attribute("aria-selected") == "true")
