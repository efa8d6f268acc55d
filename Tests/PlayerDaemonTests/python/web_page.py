"""The web remote's page at phone size (390x844) and desktop size (1280x800), playing an album with a
cover: every part the contract names exists and is visible where it should be, the layout is the
phone's or the desktop's, and axe-core finds no violation of impact serious or critical (with the
Queue panel and with the Library panel showing, in light and in dark colours).

Usage: web_page.py URL SOCKET
"""

from axe_selenium_python import Axe

from web_common import (
    DESKTOP,
    PHONE,
    browser,
    by_id,
    done,
    fail,
    is_shown,
    mpc,
    ok,
    open_page,
    quit_all,
    show_tab,
    text_of,
    wait_for,
)

url, socket = __import__("web_common").arguments(2, "web_page.py URL SOCKET")

mpc(socket, "-q", "clear")
mpc(socket, "-q", "add", "Aurora Tones/First Light")
mpc(socket, "-q", "play", "1")

# Shown whatever the tab: now playing, the transport, the volume, the modes, the tabs, the queue panel.
ALWAYS = [
    "cover", "now-title", "now-artist", "now-album", "elapsed", "duration", "seek",
    "previous", "play-pause", "stop", "next", "volume", "repeat", "random", "single", "consume",
    "tab-queue", "tab-library", "tab-search", "tab-playlists", "tab-outputs", "tab-timers",
    "panel-queue", "queue", "queue-clear", "queue-save-name", "queue-save",
]
# (id, accessible name) of the labelled controls.
NAMES = [
    ("seek", "Seek"), ("previous", "Previous"), ("stop", "Stop"), ("next", "Next"), ("volume", "Volume"),
    ("repeat", "Repeat"), ("random", "Random"), ("single", "Single"), ("consume", "Consume"),
    ("tab-queue", "Queue"), ("tab-library", "Library"), ("tab-search", "Search"), ("tab-playlists", "Playlists"),
    ("tab-outputs", "Outputs"), ("tab-timers", "Timers"), ("queue-clear", "Clear queue"),
    ("queue-save", "Save queue as playlist"), ("queue-save-name", "Playlist name"),
    ("library-mode-folders", "Folders"), ("library-mode-artists", "Artists"), ("library-back", "Back"),
    ("search-input", "Search the library"), ("sleep-minutes", "Sleep after minutes"),
    ("sleep-set", "Set sleep timer"), ("sleep-end", "Sleep at the end of the song"),
    ("sleep-off", "Cancel sleep timer"), ("pause-minutes", "Pause for minutes"), ("pause-set", "Pause for a while"),
    ("login-password", "Password"), ("login-submit", "Log in"),
]
# (id, attribute, value) the contract names.
ATTRIBUTES = [
    ("connection", "role", "status"), ("connection", "aria-live", "polite"), ("timer-status", "role", "status"),
    ("search-input", "type", "search"), ("login-password", "type", "password"), ("seek", "type", "range"),
    ("volume", "type", "range"), ("cover", "tagName", "IMG"), ("queue", "tagName", "OL"),
]
# Elements that exist (hidden or not) from the start.
EXISTING = ["connection", "login", "login-password", "login-submit", "panel-library", "panel-search",
            "panel-playlists", "panel-outputs", "panel-timers", "library-mode-folders", "library-mode-artists",
            "library", "library-back", "search-input", "search-results", "playlists", "outputs", "sleep-minutes",
            "sleep-set", "sleep-end", "sleep-off", "pause-minutes", "pause-set", "timer-status"]

ACCESSIBLE_NAME = """
const e = document.getElementById(arguments[0]);
if (e === null) return null;
if (e.getAttribute('aria-label')) return e.getAttribute('aria-label').trim();
if (e.getAttribute('aria-labelledby')) {
  return e.getAttribute('aria-labelledby').split(/\\s+/)
    .map(id => (document.getElementById(id) || {textContent: ''}).textContent.trim()).join(' ');
}
if (e.labels && e.labels.length > 0) return e.labels[0].textContent.trim();
return e.textContent.trim();
"""

RECT = "const r = document.getElementById(arguments[0]).getBoundingClientRect();" \
    " return {left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height}"


def rect(driver, element_id):
    return driver.execute_script(RECT, element_id)


def check_axe(driver, size_name, where):
    # Colours mid-transition (the page eases them, after a change of colour scheme too) are no colours
    # a person reads: axe checks the page at rest.
    wait_for("the page's CSS transitions finished", lambda: driver.execute_script(
        "return document.getAnimations().every(a => !(a instanceof CSSTransition) || a.playState !== 'running')"))
    axe = Axe(driver)
    axe.inject()
    results = axe.run()
    bad = [v for v in results["violations"] if v.get("impact") in ("serious", "critical")]
    if bad:
        fail(f"axe-core at {size_name} size ({where}): {len(bad)} serious or critical violations:\n" + axe.report(bad))
    others = ", ".join(f"{v['id']} ({v['impact']})" for v in results["violations"]) or "none"
    ok(f"axe-core at {size_name} size ({where}): {len(results['passes'])} rules pass, no serious or critical "
       f"violation (lesser ones: {others})")


def check(size, size_name):
    driver = browser(size)
    open_page(driver, url)
    wait_for("the page playing Dawn", lambda: text_of(driver, "now-title") == "Dawn")
    for element_id in ALWAYS:
        if not driver.find_elements("id", element_id):
            fail(f"at {size_name} size the page has no #{element_id}")
        element = by_id(driver, element_id)
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        if not element.is_displayed():
            fail(f"at {size_name} size #{element_id} is not visible")
    ok(f"at {size_name} size the {len(ALWAYS)} parts shown whatever the tab exist and are visible")
    for element_id in EXISTING:
        if not driver.find_elements("id", element_id):
            fail(f"the page has no #{element_id}")
    if is_shown(driver, "login"):
        fail("the login dialog is shown though no action needed a password")
    if (text_of(driver, "connection") or "") != "" and is_shown(driver, "connection"):
        fail(f"#connection says {text_of(driver, 'connection')!r} while connected")
    ok("the login dialog and the connection banner exist, hidden")
    for element_id, name in NAMES:
        found = driver.execute_script(ACCESSIBLE_NAME, element_id)
        if found != name:
            fail(f"#{element_id}'s accessible name is {found!r}, not {name!r}")
    ok(f"{len(NAMES)} controls have the contract's accessible names")
    for element_id, attribute, value in ATTRIBUTES:
        found = driver.execute_script(
            "const e = document.getElementById(arguments[0]);"
            " return arguments[1] === 'tagName' ? e.tagName : e.getAttribute(arguments[1])", element_id, attribute)
        if found != value:
            fail(f"#{element_id}'s {attribute} is {found!r}, not {value!r}")
    ok(f"{len(ATTRIBUTES)} roles, types and elements are the contract's")
    wait_for("#play-pause labelled Pause while playing",
             lambda: by_id(driver, "play-pause").get_attribute("aria-label") == "Pause")
    for element_id in ("repeat", "random", "single", "consume"):
        if by_id(driver, element_id).get_attribute("aria-pressed") not in ("true", "false"):
            fail(f"#{element_id} has no aria-pressed true/false")
    tablist = driver.execute_script(
        "const t = document.getElementById('tab-queue');"
        " return t.getAttribute('role') === 'tab' && t.closest('[role=tablist]') !== null"
        " && document.getElementById('panel-queue').getAttribute('role') === 'tabpanel'")
    if not tablist:
        fail("the tabs are not role=tab in a role=tablist, or #panel-queue is not a role=tabpanel")
    ok("modes have aria-pressed, tabs are tabs in a tablist")
    cover = by_id(driver, "cover")
    if cover.get_attribute("alt") != "Cover of First Light":
        fail(f"#cover's alt is {cover.get_attribute('alt')!r}, not 'Cover of First Light'")
    wait_for("the cover picture loaded",
             lambda: driver.execute_script("const c = arguments[0]; return c.complete && c.naturalWidth > 0", cover))
    ok(f"the cover of First Light shown ({cover.get_attribute('naturalWidth')} px wide), alt 'Cover of First Light'")
    if text_of(driver, "now-artist") != "Aurora Tones" or text_of(driver, "now-album") != "First Light":
        fail(f"now playing says artist {text_of(driver, 'now-artist')!r}, album {text_of(driver, 'now-album')!r}")
    wait_for("the queue's 3 songs", lambda: len(driver.find_elements("css selector", "#queue li.queue-item")) == 3)
    current = driver.find_elements("css selector", "#queue li.queue-item[aria-current=true]")
    if len(current) != 1 or "Dawn" not in current[0].text:
        fail(f"the current queue item is not Dawn alone: {[e.text for e in current]}")
    ok("now playing, the queue and its current song are right")

    driver.execute_script("window.scrollTo(0, 0)")
    transport = rect(driver, "play-pause")
    panel = rect(driver, "panel-queue")
    tabs = driver.execute_script(
        "const r = document.getElementById('tab-queue').closest('[role=tablist]').getBoundingClientRect();"
        " return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}")
    if size == PHONE:
        for element_id in ("previous", "play-pause", "stop", "next", "tab-queue", "repeat"):
            box = rect(driver, element_id)
            if box["width"] < 44 or box["height"] < 44:
                fail(f"at phone size #{element_id} is {box['width']:.0f}x{box['height']:.0f} px, under 44x44")
        if transport["top"] >= panel["top"]:
            fail(f"at phone size the transport (top {transport['top']:.0f}) is not above the panels "
                 f"(top {panel['top']:.0f})")
        if tabs["top"] < size[1] / 2 or tabs["bottom"] > size[1] + 1:
            fail(f"at phone size the tab bar (top {tabs['top']:.0f}, bottom {tabs['bottom']:.0f}) is not at the "
                 f"bottom of the {size[1]} px viewport")
        width = driver.execute_script("return document.documentElement.scrollWidth")
        if width > size[0]:
            fail(f"at phone size the page is {width} px wide: it scrolls sideways")
        ok("phone layout: touch targets >= 44 px, transport above the panels, the tab bar at the bottom, "
           "no sideways scrolling")
    else:
        cover_box = rect(driver, "cover")
        if not (panel["left"] >= cover_box["right"] - 1 and panel["top"] < cover_box["bottom"]):
            fail(f"at desktop size the panels ({panel}) are not beside now playing ({cover_box})")
        ok("desktop layout: now playing and the panels side by side")

    check_axe(driver, size_name, "the Queue panel")
    show_tab(driver, "Library")
    wait_for("the library's top folders",
             lambda: driver.execute_script(
                 "return document.getElementById('library').textContent.includes('Aurora Tones')"))
    check_axe(driver, size_name, "the Library panel")

    # Dark, as the system asks (prefers-color-scheme): other colours, still no serious violation
    # (color-contrast is one of axe's serious rules).
    background = "return getComputedStyle(document.body).backgroundColor"
    light = driver.execute_script(background)
    driver.execute_cdp_cmd(
        "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    dark = wait_for("the page's colours changing for prefers-color-scheme: dark",
                    lambda: driver.execute_script(background) != light and driver.execute_script(background))
    ok(f"prefers-color-scheme dark: the background goes from {light} to {dark}")
    check_axe(driver, size_name, "the Library panel, dark")
    show_tab(driver, "Queue")
    check_axe(driver, size_name, "the Queue panel, dark")
    quit_all()


check(PHONE, "phone")
check(DESKTOP, "desktop")
done()
