"""The origin's side of coalescing (`mnsd.request.coalesced`): the tier's batch call carrying several clients' single
sends, deletes and receives, each authenticated, limited and authorized as if it had come alone, the accepted ones of
a queue served as one batch through the message service, and each answered with its own single operation's answer
(its own request id, MessageId, MD5, receipt handle, error)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable

import pytest

from mnsd.access.keys import AccessKey
from mnsd.ground.http import HttpRequest, HttpResponse
from mnsd.request import api
from mnsd.waiting import contract
from tests.support.simulator.dynamodb import SimulatedDynamoDB
from tests.unit.access_calls import ACCOUNT, OTHER, OTHER_ROOT, ROOT, World, answer_of, policy, resource

KEY = "the-tiers-key"
MESSAGES = "/queues/q/messages"


def message(body: str) -> str:
    return f"<Message><MessageBody>{body}</MessageBody></Message>"


@pytest.fixture
def world() -> World:
    found = World(wait_tier_key=KEY)
    found.call(ROOT, "DELETE", "/queues/q/messages?ReceiptHandle=x")  # (the world's own message: drained below)
    while found.call(ROOT, "GET", "/queues/q/messages?waitseconds=0").status == 200:
        pass
    return found


def batch(
    world: World, requests: list[tuple[AccessKey, str, str, str]], issuer: str = contract.BATCH_ISSUER, **headers: str
) -> HttpResponse:
    """The tier's batch call of `requests` (key, method, target, body), each signed by its own key."""
    items = []
    for key, method, target, body in requests:
        signed, data = world.signed(key, method, target, body, **headers)
        items.append((method, target, list(signed.items()), data, None))
    token = contract.sign(KEY, time.time(), issuer=issuer)
    request = HttpRequest(
        "POST", contract.BATCH_PATH, "", {contract.SIG_HEADER.lower(): token}, contract.batch_document(items)
    )
    return api.handle(None, request, world.services)


def answers(response: HttpResponse) -> list:
    assert response.status == 200, response.body
    return [answer_of(HttpResponse(status, body, dict(headers))) for status, headers, body in
            contract.read_answers(response.body)]  # fmt: skip


def counted_sends(world: World, monkeypatch) -> list[int]:
    """How many messages each call of the message service's send stored."""
    sends: list[int] = []
    send = world.services.messages.send

    def counting(queue, inputs):
        sends.append(len(inputs))
        return send(queue, inputs)

    monkeypatch.setattr(world.services.messages, "send", counting)
    return sends


def test_single_sends_of_several_clients_are_one_batch_send_each_answered_as_a_single_send(world, monkeypatch) -> None:
    sends = counted_sends(world, monkeypatch)
    bodies = [f"body-{n}" for n in range(5)]
    got = answers(batch(world, [(ROOT, "POST", MESSAGES, message(b)) for b in bodies]))
    assert sends == [5]  # one batch send: one pack on DynamoDB
    assert [a.status for a in got] == [201] * 5
    assert len({a.request_id for a in got}) == 5 and all(len(a.request_id) == 24 for a in got)
    assert [a.value("MessageBodyMD5") for a in got] == [hashlib.md5(b.encode()).hexdigest().upper() for b in bodies]
    assert len({a.value("MessageId") for a in got}) == 5
    assert all(a.body.count(b"<Message ") == 1 and b"<Messages" not in a.body for a in got)  # a single send's shape
    received = {world.call(ROOT, "GET", "/queues/q/messages?waitseconds=0").value("MessageBody") for _ in bodies}
    assert received == set(bodies)


def test_a_message_too_large_is_its_clients_error_alone(world, monkeypatch) -> None:
    world.call(
        ROOT, "PUT", "/queues/q?metaoverride=true", body="<Queue><MaximumMessageSize>1024</MaximumMessageSize></Queue>"
    )
    sends = counted_sends(world, monkeypatch)
    got = answers(batch(world, [(ROOT, "POST", MESSAGES, message(b)) for b in ("a", "x" * 2000, "b", "")]))
    assert [(a.status, a.code) for a in got] == [
        (201, ""),
        (400, "InvalidArgument"),
        (201, ""),
        (400, "InvalidArgument"),
    ]
    assert "MaximumMessageSize" in got[1].message and got[1].request_id == got[1].value("RequestId")
    assert sends == [2]


def test_each_clients_signature_and_permission_decide_its_own_part(world) -> None:
    sender = world.key("SENDER", policy(("Allow", ["mns:SendMessage"], [resource(MESSAGES)])))
    reader = world.key("READER", policy(("Allow", ["mns:ReceiveMessage"], [resource(MESSAGES)])))
    forged = AccessKey(ACCOUNT, ROOT.key_id, "not-the-secret")
    stranger = OTHER_ROOT  # another account: the queue's policy grants it nothing
    got = answers(
        batch(
            world,
            [
                (sender, "POST", MESSAGES, message("allowed")),
                (reader, "POST", MESSAGES, message("refused by policy")),
                (forged, "POST", MESSAGES, message("forged")),
                (ROOT, "POST", MESSAGES, message("root")),
            ],
        )
    )
    assert [(a.status, a.code) for a in got] == [
        (201, ""),
        (403, "AccessDenied"),
        (403, "SignatureDoesNotMatch"),
        (201, ""),
    ]
    other = answers(batch(world, [(stranger, "POST", MESSAGES, message("x")), (ROOT, "POST", MESSAGES, message("y"))],
                          host=f"{ACCOUNT}.mns.localhost"))  # fmt: skip
    assert [(a.status, a.code) for a in other] == [(403, "AccessDenied"), (201, "")]
    assert "OwnerId" in other[0].message and other[1].request_id != other[0].request_id
    assert f"acs:mns:cn-hangzhou:{ACCOUNT}" in got[1].message and OTHER not in got[1].message


def test_a_batch_not_signed_as_the_tiers_batch_is_refused_whole(world) -> None:
    # The tier's signature on a request it passes on (issuer `wait-tier`): a client's own request to the batch path.
    refused = batch(
        world, [(ROOT, "POST", MESSAGES, message("a")), (ROOT, "POST", MESSAGES, message("b"))], "wait-tier"
    )
    assert refused.status == 403 and b"<Code>AccessDenied</Code>" in refused.body
    assert refused.headers["x-mns-request-id"]
    assert world.call(ROOT, "GET", "/queues/q/messages?waitseconds=0").code == "MessageNotExist"


def test_single_deletes_are_one_batch_delete_a_bad_or_repeated_handle_its_own_error(world, monkeypatch) -> None:
    for body in ("a", "b", "c"):
        world.call(ROOT, "POST", MESSAGES, message(body))
    handles = [world.call(ROOT, "GET", "/queues/q/messages?waitseconds=0").value("ReceiptHandle") for _ in range(3)]
    deletes: list[int] = []
    delete = world.services.messages.batch_delete
    monkeypatch.setattr(
        world.services.messages, "batch_delete", lambda queue, given: deletes.append(len(given)) or delete(queue, given)
    )
    targets = [f"{MESSAGES}?ReceiptHandle={h}" for h in [*handles, "not-a-handle", handles[0]]]
    got = answers(batch(world, [(ROOT, "DELETE", t, "") for t in targets]))
    assert [(a.status, a.code) for a in got] == [
        (204, ""),
        (204, ""),
        (204, ""),
        (400, "ReceiptHandleError"),
        (404, "MessageNotExist"),  # (as if it came after the first: the message is gone)
    ]
    assert deletes == [4, 1]
    assert len({a.request_id for a in got}) == 5


def test_single_receives_are_one_claim_each_its_own_message_or_its_own_hold(world) -> None:
    for body in ("a", "b"):
        world.call(ROOT, "POST", MESSAGES, message(body))
    got = batch(world, [(ROOT, "GET", f"{MESSAGES}?waitseconds=5", "")] * 3)
    triples = contract.read_answers(got.body)
    claimed = [dict(h) for s, h, _ in triples if s == 200]
    assert len(claimed) == 2 and all(h[contract.CLAIMED_HEADER] == "1" for h in claimed)
    bodies = sorted(
        answer_of(HttpResponse(s, b, dict(h))).value("MessageBody") or "" for s, h, b in triples if s == 200
    )
    assert bodies == ["a", "b"]
    handles = {answer_of(HttpResponse(s, b, dict(h))).value("ReceiptHandle") for s, h, b in triples if s == 200}
    assert len(handles) == 2
    held = [(s, dict(h), b) for s, h, b in triples if s != 200]
    assert len(held) == 1 and held[0][0] == 404 and b"MessageNotExist" in held[0][2]
    assert int(held[0][1][contract.HOLD_HEADER]) >= int(world.clock.now() * 1000) + 4_000  # its own wait


def test_the_json_plane_gets_its_own_answer_beside_the_xml_one(world) -> None:
    # (an MNS V2 signature covers the Content-Type, not the body: the JSON body is signed as the empty one)
    json_headers, _ = world.signed(ROOT, "POST", MESSAGES, headers={"content-type": "application/json"})
    xml_headers, xml_body = world.signed(ROOT, "POST", MESSAGES, message("xml"))
    items = [
        ("POST", MESSAGES, list(json_headers.items()), b'{"MessageBody": "json"}', None),
        ("POST", MESSAGES, list(xml_headers.items()), xml_body, None),
    ]
    token = contract.sign(KEY, time.time(), issuer=contract.BATCH_ISSUER)
    call = HttpRequest(
        "POST", contract.BATCH_PATH, "", {contract.SIG_HEADER.lower(): token}, contract.batch_document(items)
    )
    (json_status, json_answer, json_text), (xml_status, _, xml_text) = contract.read_answers(
        api.handle(None, call, world.services).body
    )
    assert json_status == 201 and dict(json_answer)["Content-Type"].startswith("application/json")
    assert b'"MessageId"' in json_text and b"<MessageId>" in xml_text and xml_status == 201


def test_each_clients_account_limit_decides_its_own_part() -> None:
    world = World(wait_tier_key=KEY, account_requests_per_second=3)
    world.clock.at += 10  # (a second of its own: the world's setup counted in an earlier one)
    requests = [(ROOT, "POST", MESSAGES, message(f"root-{n}")) for n in range(5)]
    requests.insert(2, (OTHER_ROOT, "POST", "/queues/q/messages", message("other")))
    got = answers(batch(world, requests))
    codes = [(a.status, a.code) for a in got]
    assert codes[:2] == [(201, ""), (201, "")] and codes[3] == (201, "")  # the account's three
    assert codes[2] == (404, "QueueNotExist")  # the other account's own (its own queue q: none)
    assert codes[4:] == [(400, "QpsLimitExceeded")] * 2


def test_a_queues_receive_limit_counts_each_coalesced_receive(world) -> None:
    limit = "<TenantRateLimitPolicy><Enabled>true</Enabled><MaxReceivesPerSecond>2</MaxReceivesPerSecond></TenantRateLimitPolicy>"
    assert world.call(ROOT, "PUT", "/queues/q?metaoverride=true", body=f"<Queue>{limit}</Queue>").status == 204
    world.clock.at += 10
    for body in ("a", "b", "c"):
        world.call(ROOT, "POST", MESSAGES, message(body))
    triples = contract.read_answers(batch(world, [(ROOT, "GET", f"{MESSAGES}?waitseconds=3", "")] * 3).body)
    assert [status for status, _, _ in triples] == [200, 200, 400]
    assert b"QpsLimitExceeded" in triples[2][2]


def batch_to(world: World, route_name: str | None, requests: list[tuple[str, str]]) -> list[int]:
    """The statuses of a batch call of `requests` (method, target; signed by the root) to the function of
    `route_name` (on AWS its function URL)."""
    items = []
    for method, target in requests:
        signed, data = world.signed(
            ROOT, method, target, message("through the function URL") if method == "POST" else ""
        )
        items.append((method, target, list(signed.items()), data, None))
    token = contract.sign(KEY, time.time(), issuer=contract.BATCH_ISSUER)
    call = HttpRequest(
        "POST", contract.BATCH_PATH, "", {contract.SIG_HEADER.lower(): token}, contract.batch_document(items)
    )
    return [status for status, _, _ in contract.read_answers(api.handle(route_name, call, world.services).body)]


def test_each_routes_function_serves_the_batches_of_its_own_route_only(world) -> None:
    # On AWS the tier posts each operation's batches to that route's function URL: each function serves its own
    # route's requests under its own role, and answers another route's as no route's.
    assert batch_to(world, "post_messages", [("POST", MESSAGES)] * 2) == [201, 201]
    assert batch_to(world, "get_messages", [("GET", MESSAGES)] * 2) == [200, 200]
    handles = [world.call(ROOT, "GET", MESSAGES + "?waitseconds=0") for _ in range(2)]  # (the two sent above: taken)
    assert [h.status for h in handles] == [404, 404]
    assert batch_to(world, "get_messages", [("POST", MESSAGES)]) == [400]  # InvalidRequestURL: not its route's
    assert batch_to(world, "delete_messages", [("POST", MESSAGES), ("GET", MESSAGES)]) == [400, 400]
    assert batch_to(world, "post_messages", [("DELETE", MESSAGES + "?ReceiptHandle=x")]) == [400]
    assert batch_to(world, None, [("POST", MESSAGES), ("GET", MESSAGES)]) == [201, 200]  # (no route: each its own)


def test_a_fifo_groups_run_goes_to_one_receive_as_if_each_came_alone(world) -> None:
    assert world.call(ROOT, "PUT", "/queues/f", body="<Queue><QueueType>fifo</QueueType></Queue>").status == 201
    for body in ("first", "second"):
        sent = world.call(
            ROOT,
            "POST",
            "/queues/f/messages",
            body=f"<Message><MessageBody>{body}</MessageBody><MessageGroupId>g</MessageGroupId></Message>",
        )
        assert sent.status == 201
    triples = contract.read_answers(batch(world, [(ROOT, "GET", "/queues/f/messages?waitseconds=3", "")] * 2).body)
    alone = World(wait_tier_key=KEY)
    alone.call(ROOT, "PUT", "/queues/f", body="<Queue><QueueType>fifo</QueueType></Queue>")
    for body in ("first", "second"):
        alone.call(
            ROOT,
            "POST",
            "/queues/f/messages",
            body=f"<Message><MessageBody>{body}</MessageBody><MessageGroupId>g</MessageGroupId></Message>",
        )
    one_by_one = [alone.call(ROOT, "GET", "/queues/f/messages?waitseconds=0").status for _ in range(2)]
    assert [status for status, _, _ in triples] == one_by_one == [200, 404]  # (the group's run is the first's)
    assert b"<MessageBody>first</MessageBody>" in triples[0][2]


def test_on_dynamodb_sixteen_coalesced_single_sends_cost_what_one_batch_send_of_them_costs() -> None:
    """The engine stores them as one pack (`docs/packed-batches.md`): the write units of one BatchSendMessage of the
    same 16 messages, a fraction of 16 single sends'."""

    def units(send: Callable[[World], None]) -> float:
        client = SimulatedDynamoDB()
        world = World(wait_tier_key=KEY, dynamodb=client)
        client.usage.reset()
        send(world)
        return sum(client.usage.wcu.values())

    bodies = [f"{n:04d}" * 256 for n in range(16)]  # 1 KB each
    coalesced = units(lambda w: answers(batch(w, [(ROOT, "POST", MESSAGES, message(b)) for b in bodies])))
    batched = units(
        lambda w: w.call(ROOT, "POST", MESSAGES, f"<Messages>{''.join(message(b) for b in bodies)}</Messages>")
    )
    alone = units(lambda w: [w.call(ROOT, "POST", MESSAGES, message(b)) for b in bodies] and None)
    assert coalesced == batched < alone / 4, (coalesced, batched, alone)


def test_the_log_names_the_key_of_coalesced_calls_that_share_one_and_none_for_a_mix(world) -> None:
    """(`request.coalesced._one_key`: a message's history never names one request's key for another's message.)"""
    world.call(ROOT, "PUT", "/queues/q?metaoverride=true", body="<Queue><LoggingEnabled>True</LoggingEnabled></Queue>")
    other = world.key("SENDER", None)
    alone = answers(batch(world, [(ROOT, "POST", MESSAGES, message("a")), (ROOT, "POST", MESSAGES, message("b"))]))
    mixed = answers(batch(world, [(ROOT, "POST", MESSAGES, message("c")), (other, "POST", MESSAGES, message("d"))]))
    found, _ = world.services.storage.messages.changes()
    keys = {change.message_id: change.access_key_id for change in found if change.event == "send"}
    assert [keys[a.value("MessageId")] for a in alone] == [ROOT.key_id, ROOT.key_id]
    assert [keys[a.value("MessageId")] for a in mixed] == [None, None]
