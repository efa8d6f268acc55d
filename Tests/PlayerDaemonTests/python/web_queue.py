"""Reorder the queue as a person would: the "Move TITLE up/down" buttons, then drag and drop (HTML5
drag events with a DataTransfer, dispatched as chromium would: dragstart, dragenter, dragover, drop,
dragend), each checked with mpc playlist and against the page's own list.

Usage: web_queue.py URL SOCKET
"""

from web_common import (
    DESKTOP,
    PHONE,
    arguments,
    browser,
    click_button,
    done,
    fail,
    mpc,
    mpc_playlist,
    ok,
    open_page,
    queue_items,
    quit_all,
    show_tab,
    wait_for,
)

url, socket = arguments(2, "web_queue.py URL SOCKET")

# Drops the queue item `source` on the upper (before) or lower (after) part of the item `target`.
DRAG_AND_DROP = """
const [source, target, after] = arguments;
const data = new DataTransfer();
const box = target.getBoundingClientRect();
const x = box.left + box.width / 2;
const y = after ? box.bottom - Math.max(2, box.height / 5) : box.top + Math.max(2, box.height / 5);
const start = source.getBoundingClientRect();
const fire = (element, type, cx, cy) => element.dispatchEvent(new DragEvent(type, {
  bubbles: true, cancelable: true, composed: true, dataTransfer: data, clientX: cx, clientY: cy}));
fire(source, 'dragstart', start.left + start.width / 2, start.top + start.height / 2);
fire(target, 'dragenter', x, y);
fire(target, 'dragover', x, y);
fire(target, 'drop', x, y);
fire(source, 'dragend', x, y);
"""


def item_of(driver, title):
    for element in driver.find_elements("css selector", "#queue li.queue-item"):
        if title in element.text:
            return element
    fail(f"no queue item shows {title}")


def expect_order(driver, order, how):
    wait_for(f"mpc playlist after {how}", lambda: mpc_playlist(socket) == order, timeout=2)
    wait_for(f"the page's queue after {how}",
             lambda: [next((t for t in order if t in text), text) for _, _, text in queue_items(driver)] == order,
             timeout=2)
    positions = [int(position) for _, position, _ in queue_items(driver)]
    if positions != list(range(len(order))):
        fail(f"after {how} the items' data-position are {positions}")
    ok(f"{how}: mpc playlist and the page say {order}")


def reorder(size, size_name):
    mpc(socket, "-q", "clear")
    mpc(socket, "-q", "add", "Aurora Tones/First Light")
    mpc(socket, "-q", "add", "Night Signals/Low Frequencies")
    order = ["Dawn", "Morning Air", "High Noon", "Deep Blue", "Static Bloom"]
    if mpc_playlist(socket) != order:
        fail(f"the queue made with mpc is {mpc_playlist(socket)}")
    driver = browser(size)
    open_page(driver, url)
    show_tab(driver, "Queue")
    wait_for("the queue's 5 songs", lambda: len(queue_items(driver)) == 5)

    click_button(driver, "Move High Noon up")
    order = ["Dawn", "High Noon", "Morning Air", "Deep Blue", "Static Bloom"]
    expect_order(driver, order, f"Move High Noon up ({size_name})")
    click_button(driver, "Move Dawn down")
    order = ["High Noon", "Dawn", "Morning Air", "Deep Blue", "Static Bloom"]
    expect_order(driver, order, f"Move Dawn down ({size_name})")

    driver.execute_script(DRAG_AND_DROP, item_of(driver, "Static Bloom"), item_of(driver, "High Noon"), False)
    order = ["Static Bloom", "High Noon", "Dawn", "Morning Air", "Deep Blue"]
    expect_order(driver, order, f"dragging Static Bloom before High Noon ({size_name})")
    driver.execute_script(DRAG_AND_DROP, item_of(driver, "High Noon"), item_of(driver, "Deep Blue"), True)
    order = ["Static Bloom", "Dawn", "Morning Air", "Deep Blue", "High Noon"]
    expect_order(driver, order, f"dragging High Noon after Deep Blue ({size_name})")
    driver.execute_script(DRAG_AND_DROP, item_of(driver, "Dawn"), item_of(driver, "Deep Blue"), False)
    order = ["Static Bloom", "Morning Air", "Dawn", "Deep Blue", "High Noon"]
    expect_order(driver, order, f"dragging Dawn before Deep Blue ({size_name})")
    quit_all()


reorder(DESKTOP, "desktop")
reorder(PHONE, "phone")
done()
