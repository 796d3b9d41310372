"""The template with the load balancer as the front door (`-c frontDoor=alb`, infra/load_balancer.py): cdk-nag and
cfn-lint clean; one listener rule per route forwarding to its function (multi-value events), the catch-all as the
default action; HTTPS with the domain's certificate, or HTTP only without a domain; access logs to the encrypted
access log bucket; with the wait tier, the receive, send and delete rules to the tier's tasks. Without the option the template is the
HTTP API's, as it was."""

import functools
import json
from pathlib import Path

import pytest
from aws_cdk.assertions import Template

from infra.lint import findings
from infra.load_balancer import ACCESS_LOG_PREFIX, LOG_DELIVERY, front_door
from infra.stack import MnsStack
from infra.wait_tier import HOLD_PORT
from mnsd.ground.settings import SIGNING_CERT_URL
from mnsd.request.listener import listener_rules, pattern_matches, sample_paths
from mnsd.request.routes import ROUTES
from mnsd.waiting.contract import READY_PATH
from tests.support.stack import logical_id, synthesized

DOMAIN = "mns.example.com"
CERTIFICATE = "arn:aws:acm:us-east-1:123456789012:certificate/0f0e0d0c-0b0a-0908-0706-050403020100"
LB = "AWS::ElasticLoadBalancingV2::LoadBalancer"
LISTENER = "AWS::ElasticLoadBalancingV2::Listener"
RULE = "AWS::ElasticLoadBalancingV2::ListenerRule"
GROUP = "AWS::ElasticLoadBalancingV2::TargetGroup"


@pytest.fixture(scope="module")
def http_only() -> tuple[MnsStack, Template, Path]:
    return synthesized(frontDoor="alb")


@pytest.fixture(scope="module")
def with_domain_and_tier() -> tuple[MnsStack, Template, Path]:
    return synthesized(frontDoor="alb", waitTier="grip", domainName=DOMAIN, certificateArn=CERTIFICATE)


def test_with_the_load_balancer_synth_passes_cdk_nag_and_cfn_lint(http_only, with_domain_and_tier) -> None:
    for _, _, outdir in (http_only, with_domain_and_tier):  # (the synth itself fails on an unreviewed cdk-nag finding)
        assert findings(outdir / "Mns.template.json") == []


def test_the_default_front_door_is_the_http_api_and_its_template_unchanged() -> None:
    default = synthesized().template
    named = synthesized(frontDoor="http-api").template
    assert named.to_json() == default.to_json()
    assert not default.find_resources(LB) and not default.find_resources(GROUP)
    assert not default.find_resources("AWS::EC2::VPC")  # nothing of the load balancer's network either
    assert front_door(None) == front_door("") == front_door(" HTTP-API ") == "http-api"
    with pytest.raises(ValueError):
        front_door("nlb")


@functools.cache
def resources(template: Template) -> dict[str, dict]:
    """The template's resources by logical id, read once (each `find_resources` is a call into the CDK's runtime that
    copies every resource of its type: hundreds of calls cost seconds)."""
    return template.to_json()["Resources"]


def resource(template: Template, type_: str, logical: str) -> dict:
    """The properties of the resource `logical`, which is of `type_`."""
    found = resources(template)[logical]
    assert found["Type"] == type_, (logical, found["Type"])
    return found["Properties"]


def target_of(template: Template, actions: list[dict]) -> str:
    """The function (Handler) or target type a forward action's one target group sends to."""
    [action] = actions
    assert action["Type"] == "forward"
    group = resource(template, GROUP, action["TargetGroupArn"]["Ref"])
    if group["TargetType"] != "lambda":
        return f"{group['TargetType']}:{group['Port']}"
    attributes = {a["Key"]: a["Value"] for a in group["TargetGroupAttributes"]}
    assert attributes["lambda.multi_value_headers.enabled"] == "true"
    [target] = group["Targets"]
    function = resource(template, "AWS::Lambda::Function", target["Id"]["Fn::GetAtt"][0])
    return function["Handler"].removesuffix(".handler")


def test_one_rule_per_route_in_the_listeners_order_each_to_its_function(http_only) -> None:
    _, template, _ = http_only
    rules = {r["Properties"]["Priority"]: r["Properties"] for r in template.find_resources(RULE).values()}
    assert len(rules) == len(ROUTES)
    for rule in listener_rules():
        found = rules[rule.priority]
        conditions = {c["Field"]: c for c in found["Conditions"]}
        assert conditions["http-request-method"]["HttpRequestMethodConfig"]["Values"] == [rule.method]
        assert conditions["path-pattern"]["PathPatternConfig"]["Values"] == [rule.path_pattern]
        assert target_of(template, found["Actions"]) == rule.route
    [listener] = template.find_resources(LISTENER).values()
    assert (listener["Properties"]["Port"], listener["Properties"]["Protocol"]) == (80, "HTTP")  # no domain: HTTP only
    assert target_of(template, listener["Properties"]["DefaultActions"]) == "not_found"


def test_the_message_routes_are_among_the_first_10_rules_and_every_route_still_reaches_its_function(http_only) -> None:
    _, template, _ = http_only
    rules = sorted((r["Properties"] for r in template.find_resources(RULE).values()), key=lambda r: r["Priority"])
    [listener] = template.find_resources(LISTENER).values()

    def routed(method: str, path: str) -> tuple[int, str]:
        """The rules ALB goes through for a request (in priority order, to the first whose conditions hold) and the
        function it sends it to."""
        for processed, rule in enumerate(rules, start=1):
            conditions = {c["Field"]: c for c in rule["Conditions"]}
            methods = conditions["http-request-method"]["HttpRequestMethodConfig"]["Values"]
            [pattern] = conditions["path-pattern"]["PathPatternConfig"]["Values"]
            if method in methods and pattern_matches(pattern, path):
                return processed, target_of(template, rule["Actions"])
        return len(rules), target_of(template, listener["Properties"]["DefaultActions"])

    # send, delete and receive, single or batch (each form on the same method and path): ALB bills the rules a
    # request goes through beyond the first 10, so none of theirs
    processed = {method: routed(method, "/queues/q/messages") for method in ("POST", "DELETE", "GET", "PUT")}
    assert processed == {
        "POST": (1, "post_messages"),
        "DELETE": (3, "delete_messages"),
        "GET": (6, "get_messages"),
        "PUT": (8, "put_messages"),
    }
    for name, route in ROUTES.items():
        for path in sample_paths(route):
            assert routed(route.method, path)[1] == name, (route.method, path)
    assert routed("PATCH", "/queues/q/messages")[1] == "not_found"


def test_elastic_load_balancing_may_invoke_each_route_function_from_its_target_group_only(http_only) -> None:
    _, template, _ = http_only
    permissions = [
        p["Properties"]
        for p in template.find_resources("AWS::Lambda::Permission").values()
        if p["Properties"]["Principal"] == "elasticloadbalancing.amazonaws.com"
    ]
    assert len(permissions) == len(ROUTES) + 1  # and the catch-all
    assert all(p["Action"] == "lambda:InvokeFunction" for p in permissions)
    assert all(p["SourceAccount"] == {"Ref": "AWS::AccountId"} for p in permissions)  # this account's groups only


def test_the_load_balancer_refuses_ambiguous_http_and_logs_to_the_encrypted_access_log_bucket(http_only) -> None:
    stack, template, _ = http_only
    [lb] = template.find_resources(LB).values()
    attributes = {a["Key"]: a["Value"] for a in lb["Properties"]["LoadBalancerAttributes"]}
    assert attributes["routing.http.drop_invalid_header_fields.enabled"] == "true"
    assert attributes["routing.http.desync_mitigation_mode"] == "strictest"
    assert attributes["access_logs.s3.enabled"] == "true"
    assert attributes["access_logs.s3.prefix"] == ACCESS_LOG_PREFIX
    bucket = logical_id(template, "AWS::S3::Bucket", "Mns/Buckets/AccessLogs/Resource")
    assert attributes["access_logs.s3.bucket"] == {"Ref": bucket}
    encryption = template.find_resources("AWS::S3::Bucket")[bucket]["Properties"]["BucketEncryption"]
    assert (
        encryption["ServerSideEncryptionConfiguration"][0]["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"
    )
    policy = next(
        p["Properties"]["PolicyDocument"]["Statement"]
        for p in template.find_resources("AWS::S3::BucketPolicy").values()
        if p["Properties"]["Bucket"] == {"Ref": bucket}
    )
    writes = [s for s in policy if s["Action"] == "s3:PutObject" and ACCESS_LOG_PREFIX in json.dumps(s["Resource"])]
    principals = json.dumps([s["Principal"] for s in writes])
    assert LOG_DELIVERY in principals and "ElbAccounts" in principals
    assert all(s["Effect"] == "Allow" for s in writes) and len(writes) == 2


def test_with_a_domain_https_serves_it_and_http_only_redirects(with_domain_and_tier) -> None:
    stack, template, _ = with_domain_and_tier
    listeners = {
        found["Properties"]["Port"]: found["Properties"] for found in template.find_resources(LISTENER).values()
    }
    assert set(listeners) == {80, 443}
    https = listeners[443]
    assert https["Protocol"] == "HTTPS" and https["Certificates"] == [{"CertificateArn": CERTIFICATE}]
    assert https["SslPolicy"].startswith("ELBSecurityPolicy-TLS13")
    [redirect] = listeners[80]["DefaultActions"]
    assert redirect["Type"] == "redirect" and redirect["RedirectConfig"]["Protocol"] == "HTTPS"
    outputs = template.to_json()["Outputs"]
    assert outputs["Endpoint"]["Value"] == f"https://{DOMAIN}"
    dns = {"Fn::GetAtt": [logical_id(template, LB, "Mns/FrontDoor/Alb/Resource"), "DNSName"]}
    assert outputs["DomainTarget"]["Value"] == outputs["AccountDomainTarget"]["Value"] == dns
    assert not template.find_resources("AWS::ApiGatewayV2::DomainName")  # the domain is the load balancer's


def test_with_the_wait_tier_the_receive_send_and_delete_rules_go_to_the_tasks_from_the_load_balancer(
    with_domain_and_tier,
) -> None:
    _, template, _ = with_domain_and_tier
    rules = {r["Properties"]["Priority"]: r["Properties"] for r in template.find_resources(RULE).values()}
    through_tier = {"get_messages", "post_messages", "delete_messages"}
    for rule in listener_rules():
        expected = f"ip:{HOLD_PORT}" if rule.route in through_tier else rule.route
        assert target_of(template, rules[rule.priority]["Actions"]) == expected
    assert {(ROUTES[r].method, ROUTES[r].path) for r in through_tier} == {
        (method, "/queues/{queue}/messages") for method in ("GET", "POST", "DELETE")
    }
    [tier] = [g["Properties"] for g in template.find_resources(GROUP).values() if g["Properties"]["TargetType"] == "ip"]
    assert (tier["HealthCheckPath"], tier["Matcher"]) == (READY_PATH, {"HttpCode": "204"})
    tasks = logical_id(template, "AWS::EC2::SecurityGroup", "Mns/WaitTier/TaskGroup/Resource")
    front = logical_id(template, "AWS::EC2::SecurityGroup", "Mns/FrontDoor/Group/Resource")
    sources = [
        r["Properties"]
        for r in template.find_resources("AWS::EC2::SecurityGroupIngress").values()
        if r["Properties"]["GroupId"] == {"Fn::GetAtt": [tasks, "GroupId"]}
        and r["Properties"]["SourceSecurityGroupId"] == {"Fn::GetAtt": [front, "GroupId"]}
    ]
    assert [(s["FromPort"], s["ToPort"]) for s in sources] == [(HOLD_PORT, HOLD_PORT)]
    template.resource_count_is("AWS::EC2::VPC", 1)  # the tier's network, shared


def test_pushes_name_a_signing_certificate_fetched_over_https(http_only, with_domain_and_tier) -> None:
    # the HTTP API's endpoint (always HTTPS) without a domain, the domain's over HTTPS with one; never `http://{alb}`
    for (_, template, _), https in ((http_only, '"ApiEndpoint"'), (with_domain_and_tier, f"https://{DOMAIN}/")):
        variables = [
            f["Properties"].get("Environment", {}).get("Variables", {})
            for f in template.find_resources("AWS::Lambda::Function").values()
        ]
        urls = [json.dumps(v[SIGNING_CERT_URL]) for v in variables if SIGNING_CERT_URL in v]
        assert urls and all(https in url and "DNSName" not in url for url in urls), urls
