"""A message's history in the console (`#/queues/{q}/messages/{id}`), looked up by its id from its queue's page: every
event the operation log recorded, with its time, kind, key and dequeue count; a queue that does not log says so."""

from __future__ import annotations

import time

from mns.queue import Message, QueueMeta
from selenium.webdriver.common.by import By

from tests.browser.console_page import ACCOUNT, Console
from tests.support.message_history import LIFE
from tests.support.raw_http import RawClient

LOGGING = (
    '<?xml version="1.0" encoding="UTF-8"?><Queue xmlns="http://mns.aliyuncs.com/doc/v1">'
    "<LoggingEnabled>True</LoggingEnabled><VisibilityTimeout>30</VisibilityTimeout><RewindPeriod>600</RewindPeriod>"
    "<DlqPolicy><Enabled>True</Enabled><DeadLetterTargetQueue>{dead}</DeadLetterTargetQueue>"
    "<MaxReceiveCount>2</MaxReceiveCount></DlqPolicy></Queue>"
)


def a_life(account, endpoint: str, name: str) -> str:
    """A message sent, received, given back (visibility 0), received again, deleted (kept), rewound and
    dead-lettered by the receive after; its id."""
    raw = RawClient(endpoint, ACCOUNT[1], ACCOUNT[2])
    assert raw.request("PUT", f"/queues/{name}-dead").status == 201
    assert raw.request("PUT", f"/queues/{name}", LOGGING.format(dead=f"{name}-dead")).status == 201
    queue = account.get_queue(name)
    queue.set_encoding(False)
    message_id = queue.send_message(Message("a message with a past")).message_id
    first = queue.receive_message(0)
    back = raw.request("PUT", f"/queues/{name}/messages?ReceiptHandle={first.receipt_handle}&VisibilityTimeout=0")
    assert back.status == 200
    queue.delete_message(queue.receive_message(0).receipt_handle)
    assert raw.request("PUT", f"/queues/{name}?rewindtime={first.enqueue_time // 1000}").status == 204
    assert raw.request("GET", f"/queues/{name}/messages?waitseconds=0").status == 404  # moved to the dead letters
    return message_id


def history_rows(console: Console, count: int) -> list:
    deadline = time.monotonic() + 15  # (the log is written in the background)
    while True:
        rows = console.driver.find_elements(By.CSS_SELECTOR, "#history tbody tr")
        if len(rows) >= count or time.monotonic() > deadline:
            return rows
        console.driver.refresh()
        console.find("main h1")
        time.sleep(0.3)


def test_a_messages_history_is_looked_up_by_its_id_with_each_events_time_kind_key_and_count(
    console: Console, account, endpoint, name
) -> None:
    message_id = a_life(account, endpoint, name)

    console.open(f"#/queues/{name}")
    console.fill("#history-id", message_id)
    console.button("Show history").click()
    console.text_in("main h1", f"Message {message_id}")
    rows = history_rows(console, len(LIFE))

    assert [row.get_attribute("data-kind") for row in rows] == LIFE
    cells = [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")] for row in rows]
    assert [c[2] for c in cells] == [ACCOUNT[1]] * 4 + ["—"] * 3  # who sent, received, gave back
    assert [c[3] for c in cells] == ["0", "1", "1", "2", "2", "2", "2"]
    assert [c[1].split()[0] for c in cells] == [
        "Sent",
        "Received",
        "Given",
        "Received",
        "Deleted",
        "Rewound",
        "Dead-lettered",
    ]
    assert cells[1][4].startswith("hidden until ")
    assert f"to {name}-dead as " in cells[-1][4]
    assert all(c[0].endswith(" UTC") for c in cells)
    assert console.find("#history-count").text == "7"
    console.screenshot("history")


def test_a_queue_that_does_not_log_says_so_on_the_history_page(console: Console, account, name) -> None:
    queue = account.get_queue(name)
    queue.create(QueueMeta())
    message_id = queue.send_message(Message("quiet")).message_id

    console.open(f"#/queues/{name}/messages/{message_id}")

    console.text_in("main .error", "LoggingNotEnabled")
    assert "turn LoggingEnabled on" in console.find("#history-explained").text
