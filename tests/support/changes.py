"""DynamoDB stream records as Lambda receives them (a lease's image, a record of a kind), and the change event one makes."""

from __future__ import annotations

from mnsd.log.changes import MessageChange
from mnsd.storage.dynamodb.tables.changes import message_change

LEASE = "L08" + "1700000000000" + "MSG1"


def lease(partition: str = "qid", **attributes: str) -> dict:
    image = {"pk": {"S": partition}, "sk": {"S": LEASE}, "id": {"S": "MSG1"}, "l": {"BOOL": True}, "b": {"S": "héllo"}}
    image.update({name: {"N": value} for name, value in attributes.items()})
    return image


def record(name: str, new: dict | None = None, old: dict | None = None, **extra) -> dict:
    change = {"ApproximateCreationDateTime": 1700000042.0, "Keys": {}}
    if new is not None:
        change["NewImage"] = new
    if old is not None:
        change["OldImage"] = old
    return {"eventID": "ev1", "eventName": name, "dynamodb": change, **extra}


def event(rec: dict) -> MessageChange:
    change = message_change(rec)
    assert change is not None
    return change
