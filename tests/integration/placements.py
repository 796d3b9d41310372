"""The DynamoDB engine's placement of a queue, as a container (the queue services over the engine) sees and changes it."""

from __future__ import annotations

from mnsd.storage.dynamodb.placement.placement import Placement

ACCOUNT = "1000000000000001"


def placement(service, name: str = "q", account: str = ACCOUNT) -> Placement:
    """The queue's stripes, send width and ready index (`mnsd.storage.dynamodb.placement.placement`), as cached here."""
    return service.messages.placer.of(service.get_queue(account, name).queue_id)


def grow(service, stripes: int, name: str = "q", seen: Placement | None = None, queue_id: str = "") -> Placement:
    """Grow the queue to `stripes` as the engine does when its load asks for it, from the placement `seen` (default:
    as cached here); the placement then."""
    queue_id = queue_id or service.get_queue(ACCOUNT, name).queue_id
    placements = service.messages.placer.placements
    return placements.grow(queue_id, seen or placements.of(queue_id), stripes, int(service.clock.now() * 1000))
