"""Log in with a password, as a person would, on a daemon started with --password-file and
--default-permissions read: the page shows the state (read is allowed), an action that needs more
(Random) opens the login dialog, a wrong password shows #login-error and changes nothing, the right
one closes the dialog and the action then works (mpc agrees).

Usage: web_login.py URL SOCKET PASSWORD
"""

import time

from web_common import (
    PHONE,
    arguments,
    browser,
    by_id,
    done,
    fail,
    is_shown,
    mpc,
    mpc_status,
    ok,
    open_page,
    text_of,
    wait_for,
)

url, socket, password = arguments(3, "web_login.py URL SOCKET PASSWORD")

mpc(socket, "-q", "clear")
mpc(socket, "-q", "add", "Aurora Tones/First Light")
mpc(socket, "-q", "random", "off")

driver = browser(PHONE)
open_page(driver, url)
wait_for("the queue shown with read permission alone",
         lambda: len(driver.find_elements("css selector", "#queue li.queue-item")) == 3)
if is_shown(driver, "login"):
    fail("the login dialog is shown before any action needed a password")
ok("with read permission the page shows the state and the queue, no login dialog")

by_id(driver, "random").click()
wait_for("the login dialog after Random without permission", lambda: is_shown(driver, "login"), timeout=2)
ok("Random without permission opens the login dialog")
if mpc_status(socket)["random"] != "off":
    fail("random changed without permission")
field = by_id(driver, "login-password")
if driver.execute_script("return arguments[0].labels.length > 0 ? arguments[0].labels[0].textContent.trim() : "
                         "arguments[0].getAttribute('aria-label')", field) != "Password":
    fail("#login-password is not labelled Password")
if field.get_attribute("type") != "password":
    fail(f"#login-password is of type {field.get_attribute('type')!r}, not password")

field.clear()
field.send_keys("not-the-password")
by_id(driver, "login-submit").click()
wait_for("#login-error after a wrong password", lambda: is_shown(driver, "login-error") and text_of(driver, "login-error"),
         timeout=5)
if by_id(driver, "login-error").get_attribute("role") != "alert":
    fail("#login-error is not role=alert")
if not is_shown(driver, "login"):
    fail("the login dialog closed after a wrong password")
if mpc_status(socket)["random"] != "off":
    fail("random changed after a wrong password")
ok(f"a wrong password: #login-error says {text_of(driver, 'login-error')!r}, the dialog stays, nothing changed")

field = by_id(driver, "login-password")
field.clear()
field.send_keys(password)
by_id(driver, "login-submit").click()
# MPD's backoff answers a password after a wrong one from the same host later (0.25 s, doubling).
wait_for("the login dialog closed after the right password", lambda: not is_shown(driver, "login"), timeout=10)
ok("the right password closes the dialog")
start = time.monotonic()
if mpc_status(socket)["random"] != "on":
    # The page need not repeat the refused action after a login: the person clicks again.
    by_id(driver, "random").click()
wait_for("mpc status saying random on after the login", lambda: mpc_status(socket)["random"] == "on", timeout=2)
wait_for("#random pressed", lambda: by_id(driver, "random").get_attribute("aria-pressed") == "true", timeout=2)
if is_shown(driver, "login"):
    fail("the login dialog came back after the right password")
ok(f"after the login Random works: mpc says random on, #random pressed ({(time.monotonic() - start) * 1000:.0f} ms)")

by_id(driver, "volume")
driver.execute_script("const v = document.getElementById('volume'); v.value = '42';"
                      " v.dispatchEvent(new Event('input', {bubbles: true}));"
                      " v.dispatchEvent(new Event('change', {bubbles: true}))")
wait_for("mpc volume 42 after the page's volume slider moved", lambda: mpc_status(socket)["volume"] == "42", timeout=2)
ok("the session keeps its permissions: the volume slider works too")
done()
