"""The local server with the load balancer's door (`make run FRONT_DOOR=alb`: each request becomes the event ALB gives
a Lambda target, `local_runtime.alb`), beside the shared server (API Gateway's door): the same bytes get the same
answer, hostile ones included, and the signature sees the path and query as sent. What ALB cannot carry (a parameter
without `=`) is the one difference, and shows which door served."""

from __future__ import annotations

from email.utils import formatdate

import pytest
from mns.account import Account
from mns.queue import Message, QueueMeta

from tests.support.raw_http import RawResponse, exchange, request
from tests.support.servers import ACCOUNT_A, local_server
from tests.support.signers import v2_signature


@pytest.fixture(scope="module")
def alb_endpoint(tmp_path_factory, engine, endpoint):
    with local_server(tmp_path_factory, engine, "alb-door", MNS_FRONT_DOOR="alb") as url:
        for server in (url, endpoint):  # (a server's first answers load what it serves with)
            exchange(server, signed("GET", "/queues"), timeout=120)
        yield url


def signed(method: str, sent: str, signed_as: str | None = None) -> bytes:
    date = formatdate(usegmt=True)
    headers = {"x-mns-version": "2015-06-06"}
    signature = v2_signature(ACCOUNT_A[2], method, "", "text/xml", date, headers, signed_as or sent)
    auth = {"Date": date, "Content-Type": "text/xml", "Content-Length": "0", **headers}
    return request(method, sent, {**auth, "Authorization": f"MNS {ACCOUNT_A[1]}:{signature}"})


def answers(endpoint: str, alb_endpoint: str, data: bytes) -> tuple[RawResponse, RawResponse]:
    return exchange(endpoint, data, timeout=30), exchange(alb_endpoint, data, timeout=30)


def test_the_sdk_works_through_the_alb_door(alb_endpoint, qname) -> None:
    queue = Account(alb_endpoint, ACCOUNT_A[1], ACCOUNT_A[2]).get_queue(qname)
    meta = QueueMeta()
    meta.set_visibilitytimeout(30)
    queue.create(meta)
    queue.set_encoding(False)
    queue.send_message(Message("through the load balancer's door"))
    received = queue.receive_message(1)
    assert received.message_body == "through the load balancer's door"
    queue.delete_message(received.receipt_handle)
    queue.delete()


@pytest.mark.parametrize(
    ("sent", "signed_as"),
    [
        ("/queues", None),
        ("/queues/../queues", None),
        ("/%71ueues", None),
        ("/%71ueues", "/queues"),  # signed over the decoded path, sent encoded
        ("/queues/abc%2Ddef", "/queues/abc-def"),
        ("/queues/abc%2Ddef", None),
        ("/queues?x-mns-prefix=%41", None),
        ("/queues/a/b/messages", None),  # ALB's `/queues/*/messages` takes it; no route fits it
        ("/queues//messages", None),
        ("/queues/q/receivers/messages", None),  # a receiver named "messages", not the queue's messages
        ("/topics/t/subscriptions/messages", None),
        ("/queues/\u00e9t\u00e9", None),
    ],
)
def test_hostile_paths_get_the_same_answer_through_either_door(endpoint, alb_endpoint, sent, signed_as) -> None:
    by_api, by_alb = answers(endpoint, alb_endpoint, signed("GET", sent, signed_as))
    assert (by_alb.status, by_alb.error_code() if by_alb.status >= 400 else None) == (
        by_api.status,
        by_api.error_code() if by_api.status >= 400 else None,
    ), by_alb.body[:300]
    assert by_alb.headers["x-mns-request-id"]


@pytest.mark.parametrize("method", ["PATCH", "FROBNICATE", "OPTIONS"])
def test_methods_without_a_rule_get_the_catch_alls_answer(endpoint, alb_endpoint, method) -> None:
    by_api, by_alb = answers(endpoint, alb_endpoint, request(method, "/queues/q", {"Content-Length": "0"}))
    assert (by_alb.status, by_alb.error_code()) == (by_api.status, by_api.error_code()) == (400, "InvalidRequestURL")


def test_a_parameter_without_equals_comes_back_with_one(endpoint, alb_endpoint) -> None:
    # ALB hands `?x` on as {"x": ""}: the door rebuilds `x=`, so a signature over `?x` no longer matches (no MNS SDK
    # sends a parameter without a value); one over `?x=` does.
    by_api, by_alb = answers(endpoint, alb_endpoint, signed("GET", "/queues?x"))
    assert by_api.status == 200
    assert (by_alb.status, by_alb.error_code()) == (403, "SignatureDoesNotMatch")
    assert exchange(alb_endpoint, signed("GET", "/queues?x=")).status == 200
