"""The console in a real browser (headless chromium) against `python -m local_runtime`, beside the official SDK."""

from __future__ import annotations

import time

import pytest
from mns.account import Account
from mns.mns_exception import MNSExceptionBase
from mns.queue import Message, QueueMeta
from mns.topic import TopicMeta
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from tests.browser.console_page import ACCOUNT, LIMITED, REGION, Console


def make_queue(account: Account, name: str, logging: bool = False):
    meta = QueueMeta()
    meta.set_visibilitytimeout(60)
    meta.set_logging_enabled(logging)
    queue = account.get_queue(name)
    queue.create(meta)
    return queue


def search_queues(console: Console, prefix: str) -> None:
    console.fill("#queue-prefix", prefix)
    console.button("Search").click()


def counts(console: Console, name: str) -> tuple[str, str, str]:
    row = console.find(f'tr[data-queue="{name}"]')
    return tuple(
        row.find_element(By.CSS_SELECTOR, f'[data-count="{kind}"]').text for kind in ("active", "inactive", "delayed")
    )  # type: ignore[return-value]


def test_the_console_signs_like_the_wire_notes_known_answer(console: Console) -> None:
    # The MNS string to sign and HMAC-SHA1 (WebCrypto) of the console's client, run in the page.
    signature = console.driver.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        import("./mns.js").then(async ({ stringToSign, hmacSha1 }) => {
          const text = stringToSign("PUT", "574683b3684e3cff610afa155cc2506d", "text/xml",
            "Tue, 11 Apr 2017 10:09:19 GMT", {"x-mns-version": "2015-06-06"}, "/");
          done(await hmacSha1("ACCESS_KEY_SECRET", text));
        }, (error) => done(String(error)));
        """
    )
    assert signature == "A9zehggaYHHujmuRMxGIDrhWwx8="


def test_a_queue_made_with_the_sdk_is_listed_with_its_counts_which_refresh(console: Console, account, name) -> None:
    queue = make_queue(account, name)
    queue.send_message(Message("active"))
    queue.send_message(Message("to receive"))
    queue.receive_message()  # one Inactive (the oldest of equal priority)
    delayed = Message("delayed")
    delayed.set_delayseconds(600)
    queue.send_message(delayed)

    orders = make_queue(account, f"{name}-orders", logging=True)  # neighbours under the same prefix
    for i in range(4):
        orders.send_message(Message(f"order {i}"))
    make_queue(account, f"{name}-audit")

    console.open("#/queues")
    search_queues(console, name)
    console.text_in("#queue-table caption", "3 queue(s)")
    console.wait(lambda d: counts(console, name) == ("1", "1", "1"), what="counts 1/1/1")
    console.wait(lambda d: counts(console, f"{name}-orders") == ("4", "0", "0"), what="counts 4/0/0")
    console.screenshot("queues")

    queue.send_message(Message("one more"))  # the list refreshes its counts on its own (every 5 s)
    console.wait(lambda d: counts(console, name) == ("2", "1", "1"), timeout=12, what="counts 2/1/1")


def test_prefix_search_and_paging(console: Console, account, name) -> None:
    names = sorted(f"{name}-{i:02d}" for i in range(12))
    for queue_name in names:
        make_queue(account, queue_name)
    make_queue(account, "other-" + name)  # not under the prefix

    def listed() -> list[str]:
        return [
            r.get_attribute("data-queue")
            for r in console.driver.find_elements(By.CSS_SELECTOR, "#queue-table tbody tr")
        ]

    console.open("#/queues")
    Select(console.find("#queue-limit")).select_by_visible_text("10")
    search_queues(console, name)
    console.wait(lambda d: listed() == names[:10], what="the first page")
    assert not console.find(".pager button").is_enabled()  # no previous page
    console.button("Next page").click()
    console.wait(lambda d: listed() == names[10:], what="the second page")
    assert console.find(".pager").text.startswith("Previous page\nPage 2")
    console.button("Previous page").click()
    console.wait(lambda d: listed() == names[:10], what="the first page again")


def test_a_message_sent_from_the_console_is_received_by_the_sdk(console: Console, account, name) -> None:
    queue = make_queue(account, name)
    console.open(f"#/queues/{name}")
    fields = {"#send-body": "hello from the console ✓", "#send-priority": "3"}
    console.submit(fields, "Send message", "#send-form .notice", "Sent message")

    received = queue.receive_message(3)  # the SDK decodes base64, its default and the console's
    assert received.message_body.decode("utf-8") == "hello from the console ✓"
    assert received.priority == 3


def test_a_message_sent_by_the_sdk_is_peeked_in_the_console(console: Console, account, name) -> None:
    queue = make_queue(account, name)
    sent = queue.send_message(Message("hello from the SDK ✓"))  # base64 on the wire

    console.open(f"#/queues/{name}")
    console.button("Peek messages").click()
    row = console.text_in(f'#peeked tr[data-message="{sent.message_id}"]', "hello from the SDK ✓")
    assert "base64-decoded" in row.text
    console.click("#decode-base64")  # the body as stored
    console.text_in(f'#peeked tr[data-message="{sent.message_id}"]', "aGVsbG8gZnJvbSB0aGUgU0RLIOKckw==")
    console.click("#decode-base64")
    console.screenshot("queue")
    assert queue.peek_message().dequeue_count == 0  # peeking left it Active, never received


def test_receive_then_delete_from_the_console(console: Console, account, name) -> None:
    queue = make_queue(account, name)
    queue.send_message(Message("to delete"))
    console.open(f"#/queues/{name}")
    console.button("Receive messages").click()
    console.text_in("#received", "to delete")
    console.wait(lambda d: console.find("#count-inactive").text == "1", what="1 inactive")
    console.button("Delete message", within="#received").click()
    console.text_in("main .notice", "Deleted message")
    console.wait(lambda d: console.find("#count-inactive").text == "0", what="0 inactive")
    assert queue.get_attributes().inactive_messages == 0


def test_a_queue_is_created_with_the_keyboard_alone(console: Console, account, name) -> None:
    console.open("#/queues")
    summary = console.find("details.panel summary")
    summary.send_keys(Keys.ENTER)  # open "Create a queue" from the keyboard
    console.find("#new-queue-name").send_keys(name)
    field = console.find("#new-queue-VisibilityTimeout")
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("45", Keys.ENTER)  # Enter submits the form
    console.text_in("main .notice", f"Queue {name} created.")
    assert account.get_queue(name).get_attributes().visibility_timeout == 45


def test_a_topic_with_a_queue_subscription_published_from_the_console_lands_in_the_queue(
    console: Console, account, name
) -> None:
    queue = make_queue(account, name)
    queue.set_encoding(False)
    meta = TopicMeta()
    meta.set_logging_enabled(True)
    account.get_topic(name).create(meta)

    console.open(f"#/topics/{name}")
    console.find("details.panel summary").click()
    console.fill("#sub-name", "to-queue")
    console.fill("#sub-queue", name)
    assert f"acs:mns:{REGION}:{ACCOUNT[0]}:queues/{name}" in console.find("#sub-queue-hint").text
    Select(console.find("#sub-format")).select_by_visible_text("SIMPLIFIED")
    console.fill("#sub-tag", "orders")
    console.button("Subscribe").click()
    console.text_in('#subscription-table tr[data-subscription="to-queue"]', "SIMPLIFIED")

    first = console.submit(
        {"#publish-body": "filtered out"}, "Publish message", "#publish-form .notice", "Published message"
    ).text
    console.fill("#publish-body", "hello subscribers")
    console.fill("#publish-tag", "orders")
    console.button("Publish message").click()
    console.wait(lambda d: console.text_in("#publish-form .notice", "Published message").text != first, what="2nd")
    console.driver.execute_script("window.scrollTo(0, 0)")
    console.screenshot("topic")

    received = queue.receive_message(5)
    assert received.message_body == "hello subscribers"  # the untagged message did not pass the FilterTag
    queue.delete_message(received.receipt_handle)

    console.find('#subscription-table a[href$="/subscriptions/to-queue"]').click()
    refresh_until(console, "#subscription-chart figcaption", "deliveries 1")
    console.find("#subscription-chart canvas")


def refresh_until(console: Console, css: str, text: str, timeout: float = 15) -> None:
    """Clicks the chart's refresh until `text` shows (the operation log is written asynchronously)."""
    deadline = time.monotonic() + timeout
    while text not in console.find(css).text:
        assert time.monotonic() < deadline, console.find(css).text
        time.sleep(0.3)
        console.button("Refresh chart").click()


def test_a_queue_chart_shows_the_hourly_operations(console: Console, account, name) -> None:
    queue = make_queue(account, name, logging=True)
    for i in range(3):
        queue.send_message(Message(f"m{i}"))
    handles = [queue.receive_message().receipt_handle for _ in range(2)]
    queue.delete_message(handles[0])

    console.open(f"#/queues/{name}")
    refresh_until(console, "#queue-chart figcaption", "sends 3, receives 2, deletes 1")
    canvas = console.find("#queue-chart canvas")
    assert canvas.get_attribute("role") == "img" and "per hour" in canvas.get_attribute("aria-label")
    assert canvas.size["width"] > 300 and canvas.size["height"] > 150
    console.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", console.find("#queue-chart"))
    console.screenshot("chart")


def minute_values(console: Console, series: str) -> list[int]:
    """The values of one series of the queue page's minute charts, the current minute last."""
    figure = console.find(f'#queue-minutes figure[data-series="{series}"]')
    return [int(v) for v in figure.get_attribute("data-values").split(",")]


def test_the_queue_page_shows_the_last_hour_minute_by_minute(console: Console, account, name) -> None:
    queue = make_queue(account, name)  # no LoggingEnabled: the minutes need none
    for i in range(3):
        queue.send_message(Message(f"m{i}"))
    handles = [queue.receive_message().receipt_handle for _ in range(3)]
    queue.delete_message(handles[0])
    with pytest.raises(MNSExceptionBase):
        queue.receive_message()  # an empty receive
    queue.send_message(Message("m3"))

    console.open(f"#/queues/{name}")
    console.text_in('#queue-minutes figure[data-series="NumberOfMessagesSent"] figcaption', "4 in the hour")
    counts = {
        series: sum(minute_values(console, series))
        for series in (
            "NumberOfMessagesSent",
            "NumberOfMessagesReceived",
            "NumberOfEmptyReceives",
            "NumberOfMessagesDeleted",
            "NumberOfMessagesDeadLettered",
        )
    }
    assert counts == {
        "NumberOfMessagesSent": 4,
        "NumberOfMessagesReceived": 3,
        "NumberOfEmptyReceives": 1,
        "NumberOfMessagesDeleted": 1,
        "NumberOfMessagesDeadLettered": 0,
    }
    assert len(minute_values(console, "NumberOfMessagesSent")) == 60
    assert sum(minute_values(console, "NumberOfMessagesSent")[-2:]) == 4  # this minute (or the one before)
    now = {
        series: minute_values(console, series)[-1]  # the gauges as read when the page asked
        for series in ("ApproximateNumberOfMessagesVisible", "ApproximateNumberOfMessagesNotVisible")
    }
    assert now == {"ApproximateNumberOfMessagesVisible": 1, "ApproximateNumberOfMessagesNotVisible": 2}
    canvases = console.driver.find_elements(By.CSS_SELECTOR, "#queue-minutes canvas")
    assert len(canvases) == 9 and all(c.get_attribute("role") == "img" for c in canvases)
    assert "Sent per minute" in canvases[0].get_attribute("aria-label")
    assert canvases[0].size["width"] > 150 and canvases[0].size["height"] > 80

    queue.send_message(Message("m4"))
    queue.send_message(Message("m5"))
    console.button("Refresh minutes").click()
    console.text_in('#queue-minutes figure[data-series="NumberOfMessagesSent"] figcaption', "6 in the hour")
    console.text_in('#queue-minutes figure[data-series="ApproximateNumberOfMessagesVisible"] figcaption', "3 now")
    console.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", console.find("#queue-minutes"))
    console.screenshot("minutes")


def test_a_wrong_secret_shows_signature_does_not_match_with_the_request_id(console: Console) -> None:
    console.sign_in(secret="not-the-secret")
    error = console.text_in("main .error", "SignatureDoesNotMatch")
    request_id = error.find_element(By.CSS_SELECTOR, ".request-id code").text
    assert len(request_id) == 24 and request_id.isalnum()
    console.screenshot("error")


def test_attributes_are_edited_and_a_queue_deleted_after_an_inline_confirmation(
    console: Console, account, name
) -> None:
    queue = make_queue(account, name)
    console.open(f"#/queues/{name}")
    console.fill("#queue-VisibilityTimeout", "90")
    console.click("#queue-logging")
    console.button("Save attributes").click()
    console.text_in("main .notice", "Attributes saved.")
    attributes = queue.get_attributes()
    assert (attributes.visibility_timeout, attributes.logging_enabled) == (90, True)

    console.open("#/queues")
    search_queues(console, name)
    console.find(f'button[aria-label="Delete {name}"]').click()
    # Focus moves to the confirmation in an effect, after the confirmation is painted.
    confirm = console.wait(
        lambda d: d.switch_to.active_element if d.switch_to.active_element.text == "Yes, delete" else None,
        what="focus on the confirmation",
    )
    assert confirm.text == "Yes, delete"
    confirm.send_keys(Keys.ENTER)
    console.text_in("main .notice", f"Queue {name} deleted.")
    with pytest.raises(MNSExceptionBase) as raised:
        queue.get_attributes()
    assert raised.value.type == "QueueNotExist"


def test_the_local_runtime_fills_in_its_default_key_and_the_key_stays_in_the_session(console: Console) -> None:
    console.driver.execute_script("sessionStorage.clear()")
    console.open()
    console.text_in("main .notice", "default key is filled in")
    assert console.find("#key-id").get_attribute("value") == ACCOUNT[1]
    assert console.find("#key-secret").get_attribute("value") == ACCOUNT[2]
    assert console.find("#key-account").get_attribute("value") == ACCOUNT[0]
    console.button("Use this key").click()
    console.find("#queue-table")
    stored = console.driver.execute_script("return [sessionStorage.length, localStorage.length, document.cookie]")
    assert stored == [1, 0, ""]


def test_a_key_that_may_not_list_queues_is_told_which_action_was_refused(console: Console, account, name) -> None:
    make_queue(account, name)
    console.sign_in(LIMITED[1], LIMITED[2])
    denied = console.text_in("main .error.denied", "AccessDenied")
    assert denied.get_attribute("data-action") == "mns:ListQueue"
    summary = denied.find_element(By.CSS_SELECTOR, ".denied-summary").text
    assert summary.startswith("This key may not do mns:ListQueue.")
    assert f"acs:mns:{REGION}:{ACCOUNT[0]}:/queues" in denied.find_element(By.CSS_SELECTOR, ".error-message").text
    assert console.driver.find_elements(By.CSS_SELECTOR, "#queue-table") == []  # no empty list pretending
    assert console.find("main h1").text == "Queues"
    console.screenshot("denied")

    console.open(f"#/queues/{name}")  # what its policy allows still works
    console.wait(lambda d: console.find("#count-active").text == "0", what="the queue's counts")
    console.submit({"#send-body": "sent with a limited key"}, "Send message", "#send-form .notice", "Sent message")
    console.button("Peek messages").click()  # and what it does not is refused, in place
    denied = console.text_in("main .error.denied", "mns:BatchPeekMessage")
    assert denied.get_attribute("data-action") == "mns:BatchPeekMessage"
    assert console.find("#count-active").text == "1"  # the page is still whole


def test_a_root_key_sees_the_accounts_keys_and_what_their_policies_allow(console: Console) -> None:
    console.open("#/queues")
    console.find('nav a[href="#/access"]').click()
    console.text_in("#key-table caption", "2 key(s)")
    root = console.find(f'#key-table tr[data-key="{ACCOUNT[1]}"]')
    assert "Root" in root.text and "(this key)" in root.text
    limited = console.find(f'#key-table tr[data-key="{LIMITED[1]}"]')
    assert "Policy" in limited.text
    assert "Allow mns:SendMessage, mns:GetQueueAttributes on acs:mns:*:1000000000000001:/queues/*" in limited.text
    limited.find_element(By.CSS_SELECTOR, "summary").click()
    document = limited.find_element(By.CSS_SELECTOR, "pre.policy").text
    assert '"mns:SendMessage"' in document and '"Version": "1"' in document
    assert "SECRET" not in console.find("main").text  # no secret reaches the page
    console.screenshot("access")


def test_a_key_with_a_policy_is_refused_the_keys_view(console: Console) -> None:
    console.sign_in(LIMITED[1], LIMITED[2])
    console.open("#/access")
    denied = console.text_in("main .error.denied", "AccessDenied")
    assert denied.get_attribute("data-action") == "mns:ListAccessKeys"
    assert "Only a root key sees this list." in console.find("main").text
    assert console.driver.find_elements(By.CSS_SELECTOR, "#key-table") == []


def test_a_fifo_queue_is_created_shows_its_type_and_its_groups_in_flight(console: Console, account, name) -> None:
    console.open("#/queues")
    console.find("details.panel summary").click()
    console.fill("#new-queue-name", name)
    Select(console.find("#new-queue-type")).select_by_value("fifo")
    console.button("Create queue").click()
    console.text_in("main .notice", f"Queue {name} created.")

    console.open(f"#/queues/{name}")
    console.text_in("#queue-type", "fifo")
    assert console.driver.find_elements(By.CSS_SELECTOR, "#send-priority") == []  # no priority on a FIFO queue
    for body in ("first", "second"):
        fields = {"#send-group": "orders-7", "#send-body": body}
        console.submit(fields, "Send message", "#send-form .notice", "Sent message")
    console.wait(lambda d: console.find("#count-groups").text == "0", what="no group in flight")
    Select(console.find("#receive-count")).select_by_value("16")
    console.button("Receive messages").click()
    row = console.text_in("#received tbody tr", "first")
    assert row.find_element(By.CSS_SELECTOR, "td[data-group]").text == "orders-7"
    console.wait(lambda d: console.find("#count-groups").text == "1", what="its group in flight")
    queue = account.get_queue(name)
    with pytest.raises(MNSExceptionBase):  # the group is held: "second" waits for "first"
        queue.receive_message(0)


def test_receivers_are_added_listed_with_their_counts_and_deleted(console: Console, account, name) -> None:
    queue = make_queue(account, name)
    console.open(f"#/queues/{name}")
    console.text_in("#queue-type", "normal")
    console.submit({"#receiver-name": "audit"}, "Add receiver", "#receiver-form .notice", "Receiver audit created.")
    queue.send_message(Message("to every receiver"))
    console.wait(
        lambda d: console.find('tr[data-receiver="audit"] [data-count="active"]').text == "1",
        what="the receiver's own copy",
    )
    received = account.get_queue(f"{name}.audit").receive_message(0)  # the SDK reaches it by its address
    assert received.message_body.decode("utf-8") == "to every receiver"
    assert queue.get_attributes().active_messages == 1  # the queue's own copy is left

    console.button("Delete receiver").click()
    console.text_in("main .notice", "Receiver audit deleted.")
    console.wait(lambda d: not d.find_elements(By.CSS_SELECTOR, 'tr[data-receiver="audit"]'), what="gone")


def test_the_console_signs_openapi_calls_like_alibabas_known_answer(console: Console) -> None:
    # The OpenAPI's v1 string to sign and signature (key: secret + "&"), as Alibaba's RPC signature document works
    # its example through, run in the page.
    signature = console.driver.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        Promise.all([import("./openapi.js"), import("./mns.js")]).then(async ([{ v1StringToSign }, { hmacSha1 }]) => {
          const text = v1StringToSign("GET", {AccessKeyId: "testid", Action: "DescribeRegions", Format: "XML",
            SignatureMethod: "HMAC-SHA1", SignatureNonce: "3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf",
            SignatureVersion: "1.0", Timestamp: "2016-02-23T12:46:24Z", Version: "2014-05-26"});
          done(await hmacSha1("testsecret&", text));
        }, (error) => done(String(error)));
        """
    )
    assert signature == "OLeaidS1JvxuMvnyHOwuJ+uX5qY="


def test_a_queues_and_a_topics_tags_are_shown_and_edited(console: Console, account, name) -> None:
    """Tags set with the Mns-open SDK show on the queue's page; one set and one removed there are the SDK's too."""
    from alibabacloud_mns_open20220119 import models
    from alibabacloud_mns_open20220119.client import Client as MnsOpen
    from alibabacloud_tea_openapi import utils_models

    sdk = MnsOpen(
        utils_models.Config(
            access_key_id=ACCOUNT[1],
            access_key_secret=ACCOUNT[2],
            endpoint=console.endpoint.split("://", 1)[1],
            protocol="http",
            region_id=REGION,
        )
    )
    sdk.create_queue(
        models.CreateQueueRequest(queue_name=name, tag=[models.CreateQueueRequestTag(key="team", value="orders")])
    )
    console.open(f"#/queues/{name}")
    console.text_in("#queue-tags tr[data-tag='team'] td", "orders")
    console.submit({"#queue-tags-key": "env", "#queue-tags-value": "prod"}, "Set tag", "main .notice", "Tag env set.")
    console.button("Remove", within="#queue-tags tr[data-tag='team']").click()
    console.text_in("main .notice", "Tag team removed.")
    console.text_in("#queue-tags caption", "1 tag(s)")
    tags = sdk.get_queue_attributes(models.GetQueueAttributesRequest(queue_name=name)).body.to_map()["Data"]["Tags"]
    assert tags == [{"TagKey": "env", "TagValue": "prod"}]

    account.get_topic(name).create(TopicMeta())
    console.open(f"#/topics/{name}")
    console.submit(
        {"#topic-tags-key": "owner", "#topic-tags-value": "ops"}, "Set tag", "main .notice", "Tag owner set."
    )
    data = sdk.get_topic_attributes(models.GetTopicAttributesRequest(topic_name=name)).body.to_map()["Data"]
    assert data["Tags"] == [{"TagKey": "owner", "TagValue": "ops"}]


def test_received_messages_selected_change_visibility_in_one_batch_and_stale_ones_are_named(
    console: Console, account, name
) -> None:
    queue = make_queue(account, name)  # (a received message stays Inactive 60 s)
    for body in ("one", "two", "three"):
        queue.send_message(Message(body))
    console.open(f"#/queues/{name}")
    Select(console.find("#receive-count")).select_by_value("16")
    console.button("Receive messages").click()
    console.wait(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#received tbody tr")) == 3, what="3 received")
    console.wait(lambda d: console.find("#count-inactive").text == "3", what="3 inactive")
    console.click("#select-all")
    console.fill("#visibility-seconds", "0")
    console.button("Change visibility of selected").click()
    console.text_in("#visibility-form .notice", "Visibility changed for 3 of 3 messages.")
    console.screenshot("visibility")

    given_back = queue.batch_receive_message(16, 1)  # visible again at once, their new handles spent by it
    assert sorted(m.message_body.decode("utf-8") for m in given_back) == ["one", "three", "two"]
    console.fill("#visibility-seconds", "600")
    console.button("Change visibility of selected").click()
    notice = console.text_in("#visibility-form .notice", "Visibility changed for 0 of 3 messages; not changed:")
    assert notice.text.count("(MessageNotExist)") == 3
    queue.batch_delete_message([m.receipt_handle for m in given_back])
