"""ListAccessKeys (`GET /?accesskeys=true`) through the API pipeline: a root key of the account only."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from email.utils import formatdate

import pytest

from local_runtime.tables import create_tables
from mnsd.access.authentication import sign, string_to_sign
from mnsd.ground.http import HttpRequest
from mnsd.ground.settings import Settings
from mnsd.request import api
from mnsd.services import Services, build_services

A, B = "1000000000000001", "2000000000000002"
NS = "{http://mns.aliyuncs.com/doc/v1}"
EVERYTHING = {"Version": "1", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
KEYS = {
    "keys": [
        {"account": A, "id": "ROOTA", "secret": "SA"},
        {"account": A, "id": "ALLOWEDALL", "secret": "SX", "policy": EVERYTHING},
        {"account": B, "id": "ROOTB", "secret": "SB"},
    ]
}
SECRETS = {"ROOTA": "SA", "ALLOWEDALL": "SX", "ROOTB": "SB"}


@pytest.fixture
def services(dynamodb, clock) -> Services:
    settings = Settings(credentials=json.dumps(KEYS))
    create_tables(dynamodb, settings)
    return build_services(settings, dynamodb=dynamodb, clock=clock)


def get_root(services: Services, key_id: str, query: str, host: str = "127.0.0.1:8080") -> tuple[int, ET.Element]:
    headers = {"x-mns-version": "2015-06-06", "x-mns-date": formatdate(services.clock.now(), usegmt=True)}
    headers["host"] = host
    request = HttpRequest("GET", "/", query, headers)
    signature = sign(SECRETS[key_id], string_to_sign(request, headers["x-mns-date"]))
    request.headers["authorization"] = f"MNS {key_id}:{signature}"
    response = api.handle("get_account", request, services)
    return response.status, ET.fromstring(response.body)


def test_a_root_key_lists_its_accounts_keys_with_their_policies_and_no_secret(services) -> None:
    status, root = get_root(services, "ROOTA", "accesskeys=true")
    assert status == 200 and root.tag == NS + "AccessKeys"
    entries = [{child.tag[len(NS) :]: child.text for child in entry} for entry in root.iter(NS + "AccessKey")]
    assert entries[0] == {"AccessKeyId": "ROOTA", "Root": "True"}
    assert entries[1]["AccessKeyId"] == "ALLOWEDALL" and entries[1]["Root"] == "False"
    assert json.loads(entries[1]["Policy"]) == EVERYTHING
    assert len(entries) == 2  # not B's
    body = ET.tostring(root, encoding="unicode")
    assert not any(secret in body for secret in SECRETS.values())


def test_a_key_whose_policy_allows_everything_is_still_refused(services) -> None:
    status, root = get_root(services, "ALLOWEDALL", "accesskeys=true")
    assert status == 403 and root.find(NS + "Code").text == "AccessDenied"
    assert "mns:ListAccessKeys" in root.find(NS + "Message").text
    status, _ = get_root(services, "ALLOWEDALL", "accountmeta=true")  # what the policy allows it may do
    assert status == 200


def test_another_accounts_root_key_naming_the_account_in_the_host_is_refused(services) -> None:
    status, root = get_root(services, "ROOTB", "accesskeys=true", host=f"{A}.mns.cn-hangzhou.aliyuncs.com")
    assert status == 403 and root.find(NS + "Code").text == "AccessDenied"
    status, root = get_root(services, "ROOTB", "accesskeys=true")  # its own: allowed
    assert status == 200 and [e.text for e in root.iter(NS + "AccessKeyId")] == ["ROOTB"]


def test_get_slash_is_still_get_account_attributes_with_accountmeta_and_nothing_without_either(services) -> None:
    status, root = get_root(services, "ROOTA", "accountmeta=true")
    assert status == 200 and root.tag == NS + "Account"
    status, root = get_root(services, "ROOTA", "")
    assert status == 400 and root.find(NS + "Code").text == "InvalidRequestURL"
