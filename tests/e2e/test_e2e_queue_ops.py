"""Queue and account operations through the official SDK."""

from __future__ import annotations

import pytest
from mns.account import AccountMeta
from mns.mns_exception import MNSServerException
from mns.queue import Message, QueueMeta

from tests.e2e.resources import assert_deleted_and_deletes_again, list_pages

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _meta(**kw) -> QueueMeta:
    m = QueueMeta()
    for k, v in kw.items():
        getattr(m, f"set_{k}")(v)
    return m


def test_create_idempotent_then_conflict(account_a, qname, raw_a, mns_error):
    q = account_a.get_queue(qname)
    url = q.create(_meta(visibilitytimeout=40, delay_seconds=3))
    assert url.endswith(f"/queues/{qname}")
    # same attributes again: success (204), still with a Location
    assert q.create(_meta(visibilitytimeout=40, delay_seconds=3)).endswith(f"/queues/{qname}")
    body = (
        '<?xml version="1.0" encoding="UTF-8"?><Queue xmlns="http://mns.aliyuncs.com/doc/v1">'
        "<VisibilityTimeout>40</VisibilityTimeout><DelaySeconds>3</DelaySeconds></Queue>"
    )
    r = raw_a.request("PUT", f"/queues/{qname}", body)
    assert r.status == 204 and "location" in r.headers
    with pytest.raises(MNSServerException) as exc:
        q.create(_meta(visibilitytimeout=41))
    assert exc.value.type == "QueueAlreadyExist"
    r = raw_a.request("PUT", f"/queues/{qname}", body.replace(">40<", ">41<"))
    mns_error(r, 409, "QueueAlreadyExist")
    attrs = q.get_attributes()
    assert attrs.visibility_timeout == 40 and attrs.delay_seconds == 3
    q.delete()


def test_create_status_201(raw_a, qname):
    r = raw_a.request("PUT", f"/queues/{qname}", '<Queue xmlns="http://mns.aliyuncs.com/doc/v1"/>')
    assert r.status == 201, r.body
    assert r.headers["location"].endswith(f"/queues/{qname}")
    assert r.raw_headers and any(k == "x-mns-request-id" for k, _ in r.raw_headers)
    assert raw_a.request("DELETE", f"/queues/{qname}").status == 204


def test_get_and_set_attributes(account_a, qname):
    q = account_a.get_queue(qname)
    q.create(
        _meta(
            visibilitytimeout=60,
            maximum_message_size=2048,
            message_retention_period=3600,
            delay_seconds=0,
            polling_wait_seconds=0,
            logging_enabled=False,
        )
    )
    a = q.get_attributes()
    assert (a.visibility_timeout, a.maximum_message_size, a.message_retention_period) == (60, 2048, 3600)
    assert (a.delay_seconds, a.polling_wait_seconds, a.logging_enabled) == (0, 0, False)
    assert a.queue_name == qname
    assert a.active_messages == 0 and a.inactive_messages == 0 and a.delay_messages == 0
    assert a.create_time > 1_600_000_000 and a.create_time < 10_000_000_000  # seconds
    assert a.last_modify_time >= a.create_time
    q.set_attributes(_meta(visibilitytimeout=120, maximum_message_size=4096, polling_wait_seconds=2))
    b = q.get_attributes()
    assert (b.visibility_timeout, b.maximum_message_size, b.polling_wait_seconds) == (120, 4096, 2)
    assert b.message_retention_period == 3600 or b.message_retention_period > 0
    q.delete()


def test_counts(queue):
    queue.set_encoding(False)
    queue.send_message(Message("a"))
    queue.send_message(Message("b"))
    queue.send_message(Message("c", delay_seconds=100))
    queue.receive_message()
    a = queue.get_attributes()
    assert (a.active_messages, a.inactive_messages, a.delay_messages) == (1, 1, 1)


def test_delete_queue(account_a, qname):
    q = account_a.get_queue(qname)
    q.create(QueueMeta())
    assert_deleted_and_deletes_again(q, "QueueNotExist")  # no special error in the spec


def test_list_queue_paging(account_a, qname):
    names = sorted(f"{qname}-{i}" for i in range(5))
    for n in names:
        account_a.get_queue(n).create(QueueMeta())
    account_a.get_queue("zz" + qname).create(QueueMeta())  # not matching the prefix
    pages = list_pages(account_a.list_queue, qname + "-", 2)
    assert all(len(page) <= 2 for page in pages)
    seen = [name for page in pages for name in page]
    assert sorted(seen) == names and len(seen) == len(set(seen))
    assert len(pages) == 3
    urls, marker = account_a.list_queue(prefix=qname + "-")
    assert sorted(u.rsplit("/", 1)[1] for u in urls) == names and marker == ""
    urls, _ = account_a.list_queue(prefix=qname + "-nothing")
    assert urls == []
    for n in names + ["zz" + qname]:
        account_a.get_queue(n).delete()


def test_list_queue_last_page_has_no_marker(raw_a, account_a, qname):
    account_a.get_queue(qname).create(QueueMeta())
    r = raw_a.request("GET", "/queues", headers={"x-mns-prefix": qname, "x-mns-ret-number": "1"})
    assert r.status == 200
    assert b"NextMarker" not in r.body
    assert b"<Queues" in r.body and qname.encode() in r.body
    account_a.get_queue(qname).delete()


def test_account_attributes(account_a):
    account_a.set_attributes(AccountMeta("my-log-bucket"))
    assert account_a.get_attributes().logging_bucket == "my-log-bucket"
    account_a.set_attributes(AccountMeta(""))
    assert account_a.get_attributes().logging_bucket in ("", None)
