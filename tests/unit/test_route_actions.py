"""The RAM action of every operation is named in the route table (`mnsd.request.routes.ACTIONS`), not derived from
a Python function's name: a route whose operation has none fails here, and a renamed function keeps its action."""

from __future__ import annotations

import inspect

from mnsd.request import routes
from mnsd.request.routes import ACTIONS, ROUTES

PUBLIC = {routes.get_signing_certificate}  # served without a signature: no action


def operations_of_the_route_table() -> set:
    """Every operation function the route table can select (the operations it imports)."""
    return {
        value
        for value in vars(routes).values()
        if inspect.isfunction(value) and value.__module__.startswith("mnsd.operations.")
    }


def test_every_operation_a_route_can_select_has_an_action():
    operations = operations_of_the_route_table()
    assert len(operations) >= 35
    missing = sorted(op.__name__ for op in operations - PUBLIC - set(ACTIONS))
    assert missing == []
    assert all(route.public for route in ROUTES.values() if route.path == routes.CERTIFICATE_PATH)


def test_the_api_references_actions():
    """The actions the API reference names for the queue operations (RAM授权操作), and the topic ones in its pattern."""
    named = {op.__name__: action for op, action in ACTIONS.items()}
    assert {named[name] for name in ("send_message", "batch_send_message", "receive_message", "peek_message")} == {
        "SendMessage",
        "BatchSendMessage",
        "ReceiveMessage",
        "PeekMessage",
    }
    assert named["list_queue"] == "ListQueue" and named["change_message_visibility"] == "ChangeMessageVisibility"
    assert named["list_subscription_by_topic"] == "ListSubscriptionByTopic"
    # Views of attributes are authorized as the attributes they show.
    assert named["queue_metrics"] == "GetQueueAttributes"
    assert named["subscription_metrics"] == "GetSubscriptionAttributes"


def test_an_action_does_not_follow_a_functions_name(monkeypatch):
    """Renaming the function behind SendMessage leaves its permission as it was."""
    monkeypatch.setattr(routes.send_message, "__name__", "post_one_message")
    assert ACTIONS[routes.send_message] == "SendMessage"
