"""A FIFO queue made through the XML API (the official SDK's QueueMeta has no queue type): a signed raw request."""

from __future__ import annotations

FIFO_QUEUE = '<?xml version="1.0" encoding="UTF-8"?><Queue xmlns="http://mns.aliyuncs.com/doc/v1">{}</Queue>'


def create_fifo(raw, name: str) -> None:
    response = raw.request("PUT", f"/queues/{name}", FIFO_QUEUE.format("<QueueType>fifo</QueueType>"))
    assert response.status == 201, response.body
