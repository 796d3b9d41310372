"""Concurrent single calls through the wait tier's holder, coalesced (`wait_tier.coalesce`, `mnsd.request.coalesced`),
on each engine, with Alibaba's Python SDK and signed raw HTTP: 16 producers and 16 consumers making single sends,
receives and deletes lose no message and own none twice, each client getting its own answer; in a burst coalesced
into one call, a client whose message is too large, whose signature is wrong or whose account may not send gets its
own error while its neighbours' messages are sent."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter

import pytest
from mns.account import Account
from mns.mns_exception import MNSServerException
from mns.queue import Message

from mnsd.model.policy import grant_document
from mnsd.waiting import contract
from tests.e2e.tier_run import TierRun, run_consumers, tier_server, wait_for
from tests.support.raw_http import RawClient
from tests.support.servers import ACCOUNT_A, ACCOUNT_B, server_env

WINDOW_MS = 50  # (wide: a burst of threads started together on a loaded machine lands in one window)
PRODUCERS = CONSUMERS = 16
EACH = 25
XMLNS = 'xmlns="http://mns.aliyuncs.com/doc/v1"'


@pytest.fixture(scope="module")
def run(tmp_path_factory, engine) -> TierRun:
    directory = tmp_path_factory.mktemp(f"coalescing-{engine}")
    with tier_server(directory, server_env, engine=engine, coalesce_ms=WINDOW_MS) as started:
        yield started


@pytest.fixture
def account(run):
    return lambda: Account(run.url, ACCOUNT_A[1], ACCOUNT_A[2])


@pytest.fixture
def make_queue(run, qname):
    raw = RawClient(run.url, ACCOUNT_A[1], ACCOUNT_A[2])

    def make(inner: str = "") -> str:
        body = f'<?xml version="1.0" encoding="UTF-8"?><Queue {XMLNS}><VisibilityTimeout>60</VisibilityTimeout>{inner}</Queue>'
        assert raw.request("PUT", f"/queues/{qname}", body).status == 201
        return qname

    return make


def coalesced(run: TierRun) -> int:
    """Requests the holder has passed on in batch calls so far."""
    return int(run.stats()["origin"].get("coalesced", 0))


def test_sixteen_producers_and_sixteen_consumers_lose_nothing_and_own_nothing_twice(run, account, make_queue) -> None:
    name = make_queue()
    before = coalesced(run)
    owners: Counter = Counter()
    failures: list = []
    sent: dict[str, tuple[str, str]] = {}  # body -> (MessageId, MessageBodyMD5) as each producer's answer gave them

    def produce(n: int) -> None:
        q = account().get_queue(name)
        q.set_encoding(False)
        for i in range(EACH):
            body = f"p{n}-m{i}"
            try:
                answer = q.send_message(Message(body))
            except MNSServerException as exc:
                failures.append(exc)
                continue
            sent[body] = (answer.message_id, answer.message_body_md5)

    stop, consumers = run_consumers(account, name, CONSUMERS, owners, failures)
    producers = [threading.Thread(target=produce, args=(n,)) for n in range(PRODUCERS)]
    for thread in producers:
        thread.start()
    for thread in producers:
        thread.join(120)
    total = PRODUCERS * EACH
    wait_for(owners, total, 120)
    stop.set()
    assert failures == []
    assert len(sent) == total and len({mid for mid, _ in sent.values()}) == total  # each send its own MessageId
    assert all(md5 == hashlib.md5(body.encode()).hexdigest().upper() for body, (_, md5) in sent.items())
    assert set(owners) == set(sent)  # none lost
    assert max(owners.values()) == 1  # none owned twice
    assert coalesced(run) - before >= total // 4  # (most sends, receives and deletes went in batch calls)


def test_in_one_coalesced_burst_each_client_gets_its_own_error_or_its_own_message(run, make_queue) -> None:
    name = make_queue("<MaximumMessageSize>1024</MaximumMessageSize>")
    host = f"{ACCOUNT_A[0]}.mns.localhost"
    owner, forged, stranger = (
        RawClient(run.url, ACCOUNT_A[1], ACCOUNT_A[2]),
        RawClient(run.url, ACCOUNT_A[1], "not-the-secret"),
        RawClient(run.url, ACCOUNT_B[1], ACCOUNT_B[2]),
    )

    def message(body: str) -> str:
        return f'<?xml version="1.0" encoding="UTF-8"?><Message {XMLNS}><MessageBody>{body}</MessageBody></Message>'

    calls = [
        (owner, message("first")),
        (owner, message("x" * 2000)),  # over the queue's MaximumMessageSize
        (forged, message("forged")),
        (stranger, message("not granted")),  # another account: the queue's policy grants it nothing
        (owner, message("second")),
    ]
    answers = burst(run, [(client, "POST", f"/queues/{name}/messages", body, host) for client, body in calls])
    assert [(a.status, a.error_code() if a.status >= 400 else "") for a in answers] == [
        (201, ""),
        (400, "InvalidArgument"),
        (403, "SignatureDoesNotMatch"),
        (403, "AccessDenied"),
        (201, ""),
    ]
    assert len({a.headers["x-mns-request-id"] for a in answers}) == len(calls)
    received = [owner.request("GET", f"/queues/{name}/messages?waitseconds=1", host=host) for _ in range(3)]
    bodies = sorted(
        r.xml().findtext("{http://mns.aliyuncs.com/doc/v1}MessageBody") or "" for r in received if r.status == 200
    )
    assert bodies == ["first", "second"]


def test_a_grant_lets_another_accounts_coalesced_send_through(run, make_queue) -> None:
    name = make_queue()
    host = f"{ACCOUNT_A[0]}.mns.localhost"
    owner, grantee = RawClient(run.url, ACCOUNT_A[1], ACCOUNT_A[2]), RawClient(run.url, ACCOUNT_B[1], ACCOUNT_B[2])
    document = json.dumps(
        grant_document(ACCOUNT_B[0], ["mns:SendMessage"], [f"acs:mns:*:{ACCOUNT_A[0]}:/queues/{name}*"])
    )
    policy = f'<?xml version="1.0" encoding="UTF-8"?><Queue {XMLNS}><Policy>{document}</Policy></Queue>'
    assert owner.request("PUT", f"/queues/{name}?metaoverride=true", policy).status == 204
    body = f'<?xml version="1.0" encoding="UTF-8"?><Message {XMLNS}><MessageBody>granted</MessageBody></Message>'
    answers = burst(run, [(c, "POST", f"/queues/{name}/messages", body, host) for c in (grantee, owner, grantee)])
    assert [a.status for a in answers] == [201, 201, 201]


def burst(run: TierRun, calls: list) -> list:
    """The calls made at once (each from a thread of its own), once the holder has coalesced them: their answers."""
    before = coalesced(run)
    answers: list = [None] * len(calls)
    start = threading.Barrier(len(calls))

    def call(n: int) -> None:
        client, method, path, body, host = calls[n]
        start.wait()
        answers[n] = client.request(method, path, body, host=host)

    threads = [threading.Thread(target=call, args=(n,)) for n in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert coalesced(run) - before >= 2  # (the burst went in batch calls)
    return answers


def test_a_clients_own_request_to_the_batch_path_is_refused(run, make_queue) -> None:
    """The holder passes it on signed as a request it passes on, not as its batch: the origin refuses it whole."""
    name = make_queue()
    owner = RawClient(run.url, ACCOUNT_A[1], ACCOUNT_A[2])
    body = f'<?xml version="1.0" encoding="UTF-8"?><Message {XMLNS}><MessageBody>smuggled</MessageBody></Message>'
    headers = [["Host", "127.0.0.1"], ["Content-Type", "text/xml"]]
    document = contract.batch_document([("POST", f"/queues/{name}/messages", headers, body.encode(), 1)] * 2)
    refused = owner.request("POST", contract.BATCH_PATH, document, content_type="application/json")
    assert (refused.status, refused.error_code()) == (403, "AccessDenied")
    assert refused.headers.get("x-mns-request-id")
    assert owner.request("GET", f"/queues/{name}/messages?waitseconds=1").status == 404
