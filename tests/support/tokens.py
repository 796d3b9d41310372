"""Temporary credentials issued by the local server, and the policy a token request carries."""

from __future__ import annotations

import json

from tests.support.raw_http import NS, RawClient
from tests.support.servers import ACCOUNT_A

MESSAGES_ONLY = {
    "Version": "1",
    "Statement": [
        {
            "Effect": "Allow",
            "Action": ["mns:SendMessage", "mns:ReceiveMessage", "mns:DeleteMessage"],
            "Resource": f"acs:mns:*:{ACCOUNT_A[0]}:/queues/*/messages",
        }
    ],
}


def issue(endpoint: str, body: str = "") -> dict[str, str]:
    response = RawClient(endpoint, ACCOUNT_A[1], ACCOUNT_A[2]).request("POST", "/?securitytoken=true", body)
    assert response.status == 200, response.body
    root = response.xml()
    assert root.tag == NS + "Credentials"
    return {child.tag.removeprefix(NS): child.text or "" for child in root}


def policy_body(policy: dict, duration: int = 900) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?><SecurityToken xmlns="http://mns.aliyuncs.com/doc/v1">'
        f"<DurationSeconds>{duration}</DurationSeconds><Policy>{json.dumps(policy)}</Policy></SecurityToken>"
    )
