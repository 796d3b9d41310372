"""Every function of the synthesized template, its handler invoked cold with the template's environment on moto and
its role enforced on every AWS call (`tests.handlers.cold`): default, with the stack's own KMS key, with the wait
tier. Beside the functions: the retry state machine's role (its tasks), the Glue jobs' role (the exports they read)
and the wait tier's task role (Cloud Map).

The four calls the roles lacked before `infra.grants` had them, each a test of its own: a FIFO send, a fan-out into a
FIFO queue, SetAccountAttributes and a cold DeleteSubscription.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from local_runtime.roles.calls import requests_of
from local_runtime.roles.policy import decide
from local_runtime.roles.template import cached_template, template_functions
from tests.handlers.cold import ACCOUNT, Deployment, api_event, signing_response, sqs_event, stream_event, xml

CONTEXTS = {"default": {}, "customer-key": {"createKmsKey": "true"}, "wait-tier": {"waitTier": "grip"}}
FIFO = "cold-fifo"
DLQ = "cold-dlq"
QUEUE = "cold-queue"
TOPIC = "cold-topic"
QUEUE_ENDPOINT = f"acs:mns:cn-hangzhou:{ACCOUNT}:queues/{FIFO}"


@pytest.fixture(scope="module", params=sorted(CONTEXTS))
def template(request: pytest.FixtureRequest) -> Path:
    return cached_template(CONTEXTS[request.param])


@pytest.fixture
def deployment(template: Path, tmp_path: Path, aws_credentials: None) -> Iterator[Deployment]:
    with mock_aws():
        yield Deployment(template, tmp_path / "roles.jsonl").make()


def status(deployment: Deployment, function: str, method: str, path: str, query: str = "", body: str = "") -> int:
    route = {
        "put_queue": "PUT /queues/{queue}",
        "post_messages": "POST /queues/{queue}/messages",
        "put_topic": "PUT /topics/{topic}",
        "put_subscription": "PUT /topics/{topic}/subscriptions/{subscription}",
        "delete_subscription": "DELETE /topics/{topic}/subscriptions/{subscription}",
        "post_topic_messages": "POST /topics/{topic}/messages",
        "get_queue": "GET /queues/{queue}",
    }.get(function)
    answer = deployment.invoke(function, api_event(method, path, query, body, route))
    assert answer["statusCode"] < 500, (function, answer["body"])
    deployment.answers.append((function, answer["statusCode"], answer["body"]))
    return int(answer["statusCode"])


def fifo_queue(deployment: Deployment) -> None:
    """The FIFO queue, and a FIFO queue the subscriptions dead-letter to."""
    for name in (FIFO, DLQ):
        assert status(deployment, "put_queue", "PUT", f"/queues/{name}", body=xml("Queue", QueueType="fifo")) == 201


def topic_with_subscriptions(deployment: Deployment) -> None:
    """A topic pushing to the FIFO queue (a dead-letter queue set: the FIFO queue too) and to an HTTP endpoint."""
    assert status(deployment, "put_topic", "PUT", f"/topics/{TOPIC}", body=xml("Topic")) == 201
    dlq = f"<DlqPolicy><Enabled>True</Enabled><DeadLetterTargetQueue>{DLQ}</DeadLetterTargetQueue></DlqPolicy>"
    for name, endpoint in (("to-fifo", QUEUE_ENDPOINT), ("to-http", "http://127.0.0.1:9/push")):
        body = xml("Subscription", Endpoint=endpoint).replace("</Subscription>", dlq + "</Subscription>")
        made = status(deployment, "put_subscription", "PUT", f"/topics/{TOPIC}/subscriptions/{name}", body=body)
        assert made == 201, deployment.answers[-1]


def published(deployment: Deployment) -> list[dict]:
    """The topic message table's items (what its stream carries to the fan-out)."""
    assert (
        status(
            deployment,
            "post_topic_messages",
            "POST",
            f"/topics/{TOPIC}/messages",
            body=xml("Message", MessageBody="pushed"),
        )
        == 201
    )
    table = deployment.local["MNS_TOPIC_MESSAGE_TABLE"]
    return boto3.client("dynamodb").scan(TableName=table)["Items"]


def fifo_holds_one(deployment: Deployment) -> bool:
    """Whether the FIFO queue holds one message (its attributes, read by a cold GetQueueAttributes)."""
    assert status(deployment, "get_queue", "GET", f"/queues/{FIFO}") == 200
    return "<ActiveMessages>1</ActiveMessages>" in deployment.answers[-1][2]


# --- the four refusals of day one ---------------------------------------------------------------------------------


def test_a_send_to_a_fifo_queue_is_allowed(deployment: Deployment) -> None:
    fifo_queue(deployment)
    body = xml("Message", MessageBody="hello", MessageGroupId="G1")
    assert status(deployment, "post_messages", "POST", f"/queues/{FIFO}/messages", body=body) == 201
    assert deployment.refusals() == []


def test_a_fan_out_into_a_fifo_queue_is_allowed(deployment: Deployment) -> None:
    fifo_queue(deployment)
    topic_with_subscriptions(deployment)
    answer = deployment.invoke("fanout", stream_event(published(deployment)))
    assert answer == {"batchItemFailures": []}
    assert fifo_holds_one(deployment)  # the push reached the FIFO queue
    assert deployment.refusals() == []


def test_set_account_attributes_is_allowed(deployment: Deployment) -> None:
    body = xml("Account", LoggingBucket="")
    assert status(deployment, "put_account", "PUT", "/", query="accountmeta=true", body=body) == 204
    assert deployment.refusals() == []


def test_a_cold_delete_subscription_is_allowed(deployment: Deployment) -> None:
    fifo_queue(deployment)
    topic_with_subscriptions(deployment)
    assert status(deployment, "delete_subscription", "DELETE", f"/topics/{TOPIC}/subscriptions/to-http") == 204
    assert deployment.refusals() == []


# --- every function ---------------------------------------------------------------------------------------------


MESSAGE_ID = "0123456789ABCDEF-1-1"  # a message's history: a lookup, whether or not the log holds it
ROUTE_CALLS = [
    # (function, method, path, query, body): each on a cold container, in an order that leaves something to act on
    ("put_queue", "PUT", f"/queues/{QUEUE}", "", xml("Queue", LoggingEnabled="True")),
    ("get_queue", "GET", f"/queues/{QUEUE}", "", ""),
    ("get_queue", "GET", f"/queues/{QUEUE}", "metrics=minutely", ""),
    ("list_queues", "GET", "/queues", "", ""),
    ("post_messages", "POST", f"/queues/{QUEUE}/messages", "", xml("Message", MessageBody="logged")),
    ("get_messages", "GET", f"/queues/{FIFO}/messages", "peekonly=true", ""),
    ("get_queue_message_history", "GET", f"/queues/{QUEUE}/messages/{MESSAGE_ID}/history", "", ""),
    ("put_receiver", "PUT", f"/queues/{QUEUE}/receivers/r1", "", xml("Receiver")),
    ("get_receiver", "GET", f"/queues/{QUEUE}/receivers/r1", "", ""),
    ("list_receivers", "GET", f"/queues/{QUEUE}/receivers", "", ""),
    ("delete_receiver", "DELETE", f"/queues/{QUEUE}/receivers/r1", "", ""),
    ("get_topic", "GET", f"/topics/{TOPIC}", "", ""),
    ("list_topics", "GET", "/topics", "", ""),
    ("get_topic_message_history", "GET", f"/topics/{TOPIC}/messages/{MESSAGE_ID}/history", "", ""),
    ("get_subscription", "GET", f"/topics/{TOPIC}/subscriptions/to-fifo", "", ""),
    ("list_subscriptions", "GET", f"/topics/{TOPIC}/subscriptions", "", ""),
    ("get_account", "GET", "/", "accountmeta=true", ""),
    ("put_account", "PUT", "/", "accountmeta=true", xml("Account", LoggingBucket="")),
    ("post_account", "POST", "/", "securitytoken=true", xml("SecurityToken", DurationSeconds="900")),
    ("get_signing_certificate", "GET", "/certificates/push-signing.pem", "", ""),
    ("not_found", "GET", "/nowhere", "", ""),
]


def fifo_message_cycle(deployment: Deployment) -> None:
    """Send, receive, hide again and delete a FIFO message, each on a cold container (each locates the group)."""
    body = xml("Message", MessageBody="cycle", MessageGroupId="G2")
    assert status(deployment, "post_messages", "POST", f"/queues/{FIFO}/messages", body=body) == 201
    answer = deployment.invoke("get_messages", api_event("GET", f"/queues/{FIFO}/messages", "waitseconds=0"))
    assert answer["statusCode"] == 200, answer["body"]
    handle = answer["body"].split("<ReceiptHandle>")[1].split("<")[0]
    hidden = deployment.invoke(
        "put_messages",
        api_event("PUT", f"/queues/{FIFO}/messages", f"receiptHandle={handle}&visibilityTimeout=60"),
    )
    assert hidden["statusCode"] == 200, hidden["body"]
    handle = hidden["body"].split("<ReceiptHandle>")[1].split("<")[0]
    deleted = deployment.invoke(
        "delete_messages", api_event("DELETE", f"/queues/{FIFO}/messages", f"ReceiptHandle={handle}")
    )
    assert deleted["statusCode"] == 204, deleted["body"]


def pushes(deployment: Deployment) -> None:
    """The fan-out (a FIFO queue endpoint, an HTTP one handed to the first-attempt queue), the first attempt (which
    fails and starts the retry workflow) and the push worker (a retry, and a drop into the FIFO dead-letter queue)."""
    topic_with_subscriptions(deployment)
    items = published(deployment)
    assert deployment.invoke("fanout", stream_event(items)) == {"batchItemFailures": []}
    sqs = boto3.client("sqs")
    queue = deployment.local["MNS_FIRST_ATTEMPT_QUEUE_URL"]
    handed = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, AttributeNames=["All"])["Messages"]
    assert deployment.invoke("first_attempt", sqs_event(handed)) == {"batchItemFailures": []}
    machine = deployment.local["MNS_PUSH_STATE_MACHINE_ARN"]
    states = boto3.client("stepfunctions")
    (execution,) = states.list_executions(stateMachineArn=machine)["executions"]
    delivery = json.loads(states.describe_execution(executionArn=execution["executionArn"])["input"])["delivery"]
    tasks = [
        {"delivery": delivery, "token": "cold-token", "attempt": 1},
        {"delivery": {**delivery, "subscription": "to-fifo"}, "drop": True},
    ]
    messages = [{"MessageId": f"m{i}", "ReceiptHandle": f"r{i}", "Body": json.dumps(t)} for i, t in enumerate(tasks)]
    assert deployment.invoke("push_worker", sqs_event(messages)) == {"batchItemFailures": []}


def beside_the_api(deployment: Deployment) -> None:
    """The operation log (a logging queue's lease), the sampler, the exports, the backlog snapshot, the signing key's
    custom resource and the console."""
    dynamodb = boto3.client("dynamodb")
    leases = [i for i in dynamodb.scan(TableName=deployment.local["MNS_MESSAGE_TABLE"])["Items"] if "l" in i]
    assert leases
    assert deployment.invoke("oplog", stream_event(leases))
    assert deployment.invoke("sample_metrics", {"source": "aws.events", "detail-type": "Scheduled Event"})
    assert deployment.invoke("export_tables", {})
    snapshot = deployment.invoke("snapshot_backlog", {})
    assert snapshot["queues"] >= 1 and not snapshot["failed"], snapshot
    with signing_response() as (url, answers):
        event = {
            "RequestType": "Create",
            "ResponseURL": url,
            "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/Mns/1",
            "RequestId": "cold",
            "LogicalResourceId": "SigningKeyMaterial",
            "ResourceProperties": {"SecretArn": deployment.local["MNS_SIGNING_KEY_SECRET_ARN"]},
        }
        deployment.invoke("signing_setup", event)
        assert answers and answers[0]["Status"] == "SUCCESS", answers
    console = deployment.invoke("console", api_event("GET", "/console", route="GET /console"))
    assert console["statusCode"] < 400


def test_every_function_runs_cold_under_its_role(deployment: Deployment, template: Path) -> None:
    fifo_queue(deployment)
    fifo_message_cycle(deployment)
    pushes(deployment)
    for function, method, path, query, body in ROUTE_CALLS:
        status(deployment, function, method, path, query, body)
    beside_the_api(deployment)
    for function, method, path in (
        ("delete_subscription", "DELETE", f"/topics/{TOPIC}/subscriptions/to-http"),
        ("delete_topic", "DELETE", f"/topics/{TOPIC}"),
        ("delete_queue", "DELETE", f"/queues/{QUEUE}"),
    ):
        assert status(deployment, function, method, path) == 204
    assert deployment.refusals() == []
    invoked = {record["function"] for record in deployment.calls()}
    silent = {"console", "get_signing_certificate"}  # no AWS call of their own: invoked above, nothing to check
    assert invoked | silent == set(template_functions(json.loads(template.read_text())))


# --- the roles beside the functions -----------------------------------------------------------------------------


def test_the_retry_state_machine_may_send_each_task_it_sends(deployment: Deployment, template: Path) -> None:
    """The definition's tasks (SQS sendMessage to the push queue, `mnsd.push.workflow`), each checked against the
    state machine's role as synthesized (with the key: through SQS)."""
    assert deployment.roles is not None
    document = json.loads(template.read_text())
    (machine,) = [r for r in document["Resources"].values() if r["Type"] == "AWS::StepFunctions::StateMachine"]
    definition = json.loads(str(deployment.roles.resolver.resolve(machine["Properties"]["DefinitionString"])))
    tasks = [s for s in walk_states(definition) if s.get("Type") == "Task"]
    assert tasks
    role = deployment.roles.role("Mns/Push/Retries/Role/Resource")
    for task in tasks:
        assert ":states:::sqs:sendMessage" in task["Resource"]
        for request in requests_of(deployment.roles.place, "sqs", "SendMessage", task["Parameters"]):
            assert decide(role.statements, request).allowed, request.describe()


def test_the_glue_jobs_may_read_the_exports_they_read(deployment: Deployment) -> None:
    """The jobs' own reads of the exports (`glue_jobs.exports.S3Files`: the listing and the manifests) under the job
    role as synthesized; what Spark reads and writes is not a boto3 call (docs/deploying.md)."""
    from glue_jobs.exports import S3Files

    s3 = boto3.client("s3")
    s3.put_object(Bucket="mns-data", Key="exports/log/AWSDynamoDB/1/manifest-summary.json", Body=b"{}")
    files = S3Files()
    found = deployment.run("glue", lambda: files.list("s3://mns-data/exports/log"), "Mns/Analytics/JobRole/Resource")
    assert [f.path for f in found] == ["s3://mns-data/exports/log/AWSDynamoDB/1/manifest-summary.json"]
    read = deployment.run("glue", lambda: files.read_text(found[0].path), "Mns/Analytics/JobRole/Resource")
    assert read == "{}"
    assert {r["call"] for r in deployment.calls()} == {"s3.ListObjectsV2", "s3.GetObject"}
    assert deployment.refusals() == []


@pytest.fixture
def tier_deployment(tmp_path: Path, aws_credentials: None) -> Iterator[Deployment]:
    with mock_aws():
        yield Deployment(cached_template(CONTEXTS["wait-tier"]), tmp_path / "roles.jsonl").make()


def test_the_wait_tier_task_may_find_its_peers(tier_deployment: Deployment) -> None:
    """The tier's one AWS call (`wait_tier.peers.cloud_map`: DiscoverInstances) under its task role as synthesized."""
    from wait_tier.peers import cloud_map

    assert tier_deployment.roles is not None
    (task_role,) = [p for p in tier_deployment.roles.by_path if p.endswith("/TaskRole/Resource")]
    peers = tier_deployment.run("wait_tier", lambda: cloud_map("mns.local", "hold", 8081, "us-east-1")(), task_role)
    assert peers == []
    assert [r["call"] for r in tier_deployment.calls()] == ["servicediscovery.DiscoverInstances"]
    assert tier_deployment.refusals() == []


def walk_states(definition: dict) -> Iterator[dict]:
    for state in definition.get("States", {}).values():
        yield state
        for branch in state.get("Branches", []):
            yield from walk_states(branch)
        if "Iterator" in state:
            yield from walk_states(state["Iterator"])
