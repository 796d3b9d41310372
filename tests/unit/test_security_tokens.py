"""Temporary credentials (security tokens): issued for a key, proved by the token itself, narrowed by its policy."""

from __future__ import annotations

import base64
import json
from email.utils import formatdate

import pytest

from mnsd.access import authentication as auth
from mnsd.access.authorizer import Authorizer
from mnsd.access.keys import AccessKey
from mnsd.access.permissions import permission_for
from mnsd.access.principal import Principal
from mnsd.access.tokens import SecurityTokens, TemporaryCredentials, TokenRequest, expiration_text, token_policy
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest
from mnsd.model.policy import Policy
from mnsd.wire import codec, requests

ACCOUNT = "1000000000000001"
NOW = 1_700_000_000.0
RECEIPT_SECRET = "receipt-secret"
QUEUES = f"acs:mns:cn-hangzhou:{ACCOUNT}:/queues/*"


def policy(*actions: str, resource: str = QUEUES) -> Policy:
    return Policy.parse(
        {"Version": "1", "Statement": [{"Effect": "Allow", "Action": list(actions), "Resource": resource}]}
    )


PARENT_POLICY = policy("mns:SendMessage", "mns:ReceiveMessage")
TOKEN_POLICY = policy("mns:ReceiveMessage", "mns:DeleteQueue")


class Keys:
    """A key store the tests change (a key revoked, re-created, given another policy)."""

    def __init__(self, *keys: AccessKey) -> None:
        self.keys = {key.key_id: key for key in keys}

    def lookup(self, key_id: str) -> AccessKey | None:
        return self.keys.get(key_id)


class NoResourcePolicies:
    def policy_of(self, owner: str, kind: str, name: str) -> Policy | None:
        return None


@pytest.fixture
def parent() -> AccessKey:
    return AccessKey(ACCOUNT, "PARENT", "PARENT-SECRET", PARENT_POLICY)


@pytest.fixture
def keys(parent: AccessKey) -> Keys:
    return Keys(parent, AccessKey(ACCOUNT, "ROOT", "ROOT-SECRET"))


@pytest.fixture
def tokens() -> SecurityTokens:
    return SecurityTokens(RECEIPT_SECRET)


@pytest.fixture
def issued(tokens: SecurityTokens, parent: AccessKey) -> TemporaryCredentials:
    return tokens.issue(parent, NOW, TokenRequest(3600, TOKEN_POLICY))


def signed(key_id: str, secret: str, token: str | None, now: float = NOW) -> HttpRequest:
    """A request signed as the SDK signs one: the security token added after signing, outside the signature."""
    headers = {"date": formatdate(now, usegmt=True), "content-type": "text/xml", "x-mns-version": "2015-06-06"}
    signature = auth.sign(
        secret, auth.string_to_sign(HttpRequest("GET", "/queues/q/messages", "", headers), headers["date"])
    )
    headers["authorization"] = f"MNS {key_id}:{signature}"
    if token is not None:
        headers["security-token"] = token
    return HttpRequest("GET", "/queues/q/messages", "", headers)


def use(credentials: TemporaryCredentials, keys: Keys, tokens: SecurityTokens, now: float = NOW) -> Principal:
    request = signed(credentials.access_key_id, credentials.access_key_secret, credentials.security_token, now)
    return auth.authenticate(request, keys, now, tokens, region="cn-hangzhou")


def allowed(principal: Principal, action: str, path: str, params: dict[str, str]) -> bool:
    permission = permission_for(action, path, params, "cn-hangzhou", ACCOUNT)
    try:
        Authorizer(NoResourcePolicies(), "cn-hangzhou").authorize(principal, permission, ACCOUNT)
    except errors.AccessDenied:
        return False
    return True


def reseal(token: str, change: dict[str, object]) -> str:
    """The token with claims changed and its MAC kept: what a holder could forge without the stack's key."""
    payload, _, mac = token.partition(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims.update(change)
    encoded = base64.urlsafe_b64encode(json.dumps(claims, sort_keys=True, separators=(",", ":")).encode())
    return encoded.decode().rstrip("=") + "." + mac


# ------------------------------------------------------------------ valid


def test_a_token_signs_as_its_temporary_key_with_the_parents_policy_and_its_own(issued, keys, tokens, parent):
    principal = use(issued, keys, tokens)
    assert principal.account_id == ACCOUNT
    assert principal.key_id == issued.access_key_id != parent.key_id
    assert principal.token and not principal.is_root
    assert principal.policies == (PARENT_POLICY, TOKEN_POLICY)


def test_issued_credentials_look_like_sts_ones(issued, parent):
    assert issued.access_key_id.startswith("STS.")
    assert issued.access_key_secret not in (parent.secret, issued.security_token)
    assert parent.secret not in issued.security_token
    assert issued.expires_at == int(NOW) + 3600
    assert issued.expiration == "2023-11-14T23:13:20Z" == expiration_text(int(NOW) + 3600)
    assert issued.access_key_secret not in repr(issued) and issued.security_token not in repr(issued)


def test_every_token_has_its_own_key_and_secret(tokens, parent):
    one, two = (tokens.issue(parent, NOW, TokenRequest()) for _ in range(2))
    assert one.access_key_id != two.access_key_id
    assert one.access_key_secret != two.access_key_secret


def test_a_root_keys_token_without_policy_is_unrestricted_but_still_a_token(tokens, keys):
    issued = tokens.issue(keys.keys["ROOT"], NOW, TokenRequest())
    principal = use(issued, keys, tokens)
    assert principal.policies == () and principal.token and not principal.is_root
    assert allowed(principal, "DeleteQueue", "/queues/{queue}", {"queue": "q"})


# ------------------------------------------------------------------ expiry


def test_a_token_works_until_its_expiry_and_not_from_then(issued, keys, tokens):
    use(issued, keys, tokens, now=issued.expires_at - 1)
    with pytest.raises(errors.SecurityTokenExpired) as refused:
        use(issued, keys, tokens, now=issued.expires_at)
    assert (refused.value.status, refused.value.code) == (403, "SecurityTokenExpired")


# ------------------------------------------------------------------ forged and mangled


@pytest.mark.parametrize(
    "change",
    [
        {"id": "STS.someoneelse0000000000000"},
        {"parent": "ROOT"},
        {"account": "2000000000000002"},
        {"exp": int(NOW) + 43200},
        {"policy": None},
        {"policy": json.dumps({"Version": "1", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]})},
        {"bind": "AAAAAAAAAAAAAAAAAAAAAA"},
        {"v": 2},
    ],
    ids=lambda change: next(iter(change)),
)
def test_a_token_with_any_claim_changed_is_refused(issued, keys, tokens, change):
    forged = reseal(issued.security_token, change)
    credentials = TemporaryCredentials(str(change.get("id", issued.access_key_id)), issued.access_key_secret, forged)
    with pytest.raises(errors.InvalidSecurityToken) as refused:
        use(credentials, keys, tokens)
    assert refused.value.status == 403


def test_the_reseal_helper_keeps_an_unchanged_token_valid(issued, keys, tokens):
    same = TemporaryCredentials(issued.access_key_id, issued.access_key_secret, reseal(issued.security_token, {}))
    assert use(same, keys, tokens).key_id == issued.access_key_id


@pytest.mark.parametrize(
    "mangle",
    [
        lambda t: t[:-2] + ("AA" if not t.endswith("AA") else "BB"),  # the MAC
        lambda t: t.partition(".")[0],  # no MAC
        lambda t: "." + t.partition(".")[2],  # no payload
        lambda t: t.replace(".", "!"),
        lambda t: "not a token",
        lambda t: t + "." + t,
        lambda t: "A" * 5000,
    ],
)
def test_a_mangled_token_is_refused(issued, keys, tokens, mangle):
    credentials = TemporaryCredentials(issued.access_key_id, issued.access_key_secret, mangle(issued.security_token))
    with pytest.raises(errors.InvalidSecurityToken):
        use(credentials, keys, tokens)


def test_a_token_of_another_stack_is_refused(parent, keys, tokens):
    foreign = SecurityTokens("another-receipt-secret").issue(parent, NOW, TokenRequest())
    with pytest.raises(errors.InvalidSecurityToken):
        use(foreign, keys, tokens)


# ------------------------------------------------------------------ keys and tokens that do not go together


def test_a_token_used_with_another_temporary_key_is_refused(issued, tokens, parent, keys):
    other = tokens.issue(parent, NOW, TokenRequest())
    request = signed(other.access_key_id, other.access_key_secret, issued.security_token)
    with pytest.raises(errors.AccessKeyIdAndSecurityTokenNotMatch) as refused:
        auth.authenticate(request, keys, NOW, tokens, region="cn-hangzhou")
    assert refused.value.status == 403


def test_a_token_used_with_its_parent_key_is_refused(issued, tokens, parent, keys):
    request = signed(parent.key_id, parent.secret, issued.security_token)
    with pytest.raises(errors.AccessKeyIdAndSecurityTokenNotMatch):
        auth.authenticate(request, keys, NOW, tokens, region="cn-hangzhou")


def test_a_temporary_key_without_its_token_is_an_unknown_key(issued, keys, tokens):
    request = signed(issued.access_key_id, issued.access_key_secret, None)
    with pytest.raises(errors.InvalidAccessKeyId):
        auth.authenticate(request, keys, NOW, tokens, region="cn-hangzhou")


def test_a_request_signed_with_the_parents_secret_does_not_match(issued, keys, tokens, parent):
    request = signed(issued.access_key_id, parent.secret, issued.security_token)
    with pytest.raises(errors.SignatureDoesNotMatch):
        auth.authenticate(request, keys, NOW, tokens, region="cn-hangzhou")


def test_where_tokens_are_not_accepted_a_token_is_invalid(issued, keys):
    request = signed(issued.access_key_id, issued.access_key_secret, issued.security_token)
    with pytest.raises(errors.InvalidSecurityToken):
        auth.authenticate(request, keys, NOW, region="cn-hangzhou")


# ------------------------------------------------------------------ narrowing


def test_a_token_may_do_only_what_both_its_key_and_its_policy_allow(issued, keys, tokens):
    principal = use(issued, keys, tokens)
    messages = ("/queues/{queue}/messages", {"queue": "q"})
    assert allowed(principal, "ReceiveMessage", *messages)  # both allow it
    assert not allowed(principal, "SendMessage", *messages)  # the key allows it, the token does not
    assert not allowed(principal, "DeleteQueue", "/queues/{queue}", {"queue": "q"})  # the token does, the key not
    # The parent key itself may send.
    assert allowed(keys.keys["PARENT"].principal(), "SendMessage", *messages)


def test_a_token_without_policy_has_its_keys_rights(tokens, parent, keys):
    principal = use(tokens.issue(parent, NOW, TokenRequest()), keys, tokens)
    assert principal.policies == (PARENT_POLICY,)
    assert allowed(principal, "SendMessage", "/queues/{queue}/messages", {"queue": "q"})


def test_the_parents_policy_in_force_is_the_one_it_has_now(issued, keys, tokens, parent):
    keys.keys["PARENT"] = AccessKey(ACCOUNT, "PARENT", parent.secret, policy("mns:GetQueueAttributes"))
    principal = use(issued, keys, tokens)
    assert not allowed(principal, "ReceiveMessage", "/queues/{queue}/messages", {"queue": "q"})


# ------------------------------------------------------------------ revocation


def test_revoking_the_parent_key_revokes_its_tokens(issued, keys, tokens):
    del keys.keys["PARENT"]
    with pytest.raises(errors.InvalidSecurityToken):
        use(issued, keys, tokens)


def test_giving_the_parent_key_a_new_secret_revokes_its_tokens(issued, keys, tokens, parent):
    keys.keys["PARENT"] = AccessKey(ACCOUNT, "PARENT", "ROTATED-SECRET", parent.policy)
    with pytest.raises(errors.InvalidSecurityToken):
        use(issued, keys, tokens)


def test_a_parent_key_id_moved_to_another_account_does_not_carry_its_tokens(issued, keys, tokens, parent):
    keys.keys["PARENT"] = AccessKey("2000000000000002", "PARENT", parent.secret, parent.policy)
    with pytest.raises(errors.InvalidSecurityToken):
        use(issued, keys, tokens)


# ------------------------------------------------------------------ the request's <SecurityToken>


def body(xml: str) -> codec.Element:
    return codec.parse(xml.encode())


def test_the_request_defaults_to_an_hour_and_no_policy():
    assert requests.security_token_request(None) == TokenRequest(3600, None)
    assert requests.security_token_request(body("<SecurityToken/>")) == TokenRequest(3600, None)


def test_the_request_takes_a_duration_and_a_policy():
    document = json.dumps({"Version": "1", "Statement": [{"Effect": "Allow", "Action": "mns:*", "Resource": "*"}]})
    xml = f"<SecurityToken><DurationSeconds>900</DurationSeconds><Policy>{document}</Policy></SecurityToken>"
    request = requests.security_token_request(body(xml))
    assert request.duration_seconds == 900
    assert request.policy is not None and request.policy.decide("mns:SendMessage", "x").value == "allow"


@pytest.mark.parametrize("duration", ["899", "43201", "0", "-1", "1h", "", "3600.0"])
def test_a_duration_outside_900_to_43200_seconds_is_refused(duration):
    with pytest.raises(errors.InvalidArgument, match="DurationSeconds"):
        requests.security_token_request(
            body(f"<SecurityToken><DurationSeconds>{duration}</DurationSeconds></SecurityToken>")
        )


@pytest.mark.parametrize(
    "document",
    [
        "not json",
        '{"Version": "2", "Statement": []}',
        '{"Version": "1", "Statement": [{"Effect": "Maybe", "Action": "*", "Resource": "*"}]}',
        # A resource policy's Principal has no place in an identity policy.
        '{"Version": "1", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*", "Principal": "*"}]}',
        json.dumps(
            {"Version": "1", "Statement": [{"Effect": "Allow", "Action": ["mns:" + "x" * 2100], "Resource": "*"}]}
        ),
    ],
)
def test_an_invalid_or_oversized_policy_is_refused(document):
    with pytest.raises(errors.InvalidArgument, match="Policy"):
        token_policy(document)
