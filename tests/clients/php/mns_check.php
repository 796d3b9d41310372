<?php
// Checks Alibaba's MNS PHP SDK (aliyun-mns-php-sdk, built by shared/clients/php/build.sh, beside the checkout) against an
// MNS-compatible server, written as the SDK's Samples/ use it (Client, getQueueRef/getTopicRef, *Request,
// MnsException and its subclasses). Prints `PASS name` / `FAIL name: reason`, then `N passed, M failed`.
//
// Env: MNS_ENDPOINT (http://127.0.0.1:18081), MNS_ACCESS_KEY_ID, MNS_ACCESS_KEY_SECRET, MNS_ACCOUNT_ID,
//      MNS_REGION (cn-hangzhou), MNS_PHP_SDK_BUILD (~/.cache/mns-sdks/php).

require_once __DIR__ . '/Common.php';

use AliyunMNS\Client;
use AliyunMNS\Exception\MnsException;
use AliyunMNS\Exception\MessageNotExistException;
use AliyunMNS\Exception\QueueNotExistException;
use AliyunMNS\Exception\ReceiptHandleErrorException;
use AliyunMNS\Exception\SubscriptionNotExistException;
use AliyunMNS\Exception\TopicNotExistException;
use AliyunMNS\Model\QueueAttributes;
use AliyunMNS\Model\SendMessageRequestItem;
use AliyunMNS\Model\SubscriptionAttributes;
use AliyunMNS\Model\TopicAttributes;
use AliyunMNS\Requests\BatchReceiveMessageRequest;
use AliyunMNS\Requests\CreateQueueRequest;
use AliyunMNS\Requests\CreateTopicRequest;
use AliyunMNS\Requests\ListQueueRequest;
use AliyunMNS\Requests\ListTopicRequest;
use AliyunMNS\Requests\PublishMessageRequest;
use AliyunMNS\Requests\SendMessageRequest;

$endPoint = getenv('MNS_ENDPOINT') ?: 'http://127.0.0.1:18081';
$accessId = getenv('MNS_ACCESS_KEY_ID');
$accessKey = getenv('MNS_ACCESS_KEY_SECRET');
$accountId = getenv('MNS_ACCOUNT_ID');
$region = getenv('MNS_REGION') ?: 'cn-hangzhou';
if (empty($accessId) || empty($accessKey) || empty($accountId)) {
    echo "Must set MNS_ACCESS_KEY_ID / MNS_ACCESS_KEY_SECRET / MNS_ACCOUNT_ID\n";
    exit(2);
}

$passed = 0;
$failed = 0;
$state = array();

// Runs one case: it passes unless it throws or returns a string (the reason).
function check($name, callable $fn)
{
    global $passed, $failed;
    try {
        $reason = $fn();
    } catch (MnsException $e) {
        $reason = get_class($e) . ' MnsErrorCode=' . $e->getMnsErrorCode() . ' http=' . $e->getCode() . ' ' . $e->getMessage();
    } catch (\Throwable $t) {
        $reason = get_class($t) . ': ' . $t->getMessage();
    }
    if ($reason === NULL || $reason === TRUE) {
        $passed++;
        echo "PASS $name\n";
    } else {
        $failed++;
        echo "FAIL $name: " . str_replace("\n", ' ', (string)$reason) . "\n";
    }
}

// Runs $fn, which must throw an MnsException with one of $codes (and, if given, of class $class).
function expectError(callable $fn, array $codes, $class = NULL)
{
    try {
        $fn();
    } catch (MnsException $e) {
        $code = $e->getMnsErrorCode();
        fwrite(STDERR, "  (error seen: $code " . get_class($e) . ' http=' . $e->getCode() . ")\n");
        if (!in_array($code, $codes, TRUE)) {
            return 'expected ' . implode('/', $codes) . ', got ' . get_class($e) . ' MnsErrorCode=' . var_export($code, TRUE)
                . ' http=' . $e->getCode() . ' message=' . $e->getMessage();
        }
        if ($class !== NULL && !($e instanceof $class)) {
            return "expected $class for $code, got " . get_class($e);
        }
        return NULL;
    }
    return 'expected ' . implode('/', $codes) . ', but the call succeeded';
}

// A queue or topic that does not exist: its getAttribute, then each of the other calls, answer $code as $class.
// NULL when every one did, else "<call>: <reason>" of the first that did not.
function expectMissing($ref, array $calls, $code, $class)
{
    $calls = array_merge(array('getAttribute' => function () use ($ref) { $ref->getAttribute(); }), $calls);
    foreach ($calls as $what => $fn) {
        $r = expectError($fn, array($code), $class);
        if ($r !== NULL) return "$what: $r";
    }
    return NULL;
}

function need($key)
{
    global $state;
    if (!isset($state[$key])) {
        throw new \RuntimeException("skipped: an earlier case did not provide $key");
    }
    return $state[$key];
}

$run = substr(bin2hex(random_bytes(4)), 0, 8);
$queueName = "php-q-$run";
$subQueueName = "php-subq-$run";
$topicName = "php-t-$run";
$subName = "php-sub-$run";

$client = new Client($endPoint, $accessId, $accessKey);
$queue = $client->getQueueRef($queueName);           // base64 on, as the samples default
$subQueue = $client->getQueueRef($subQueueName, FALSE); // topic deliveries are not base64 (TopicSubscribe.php)
$topic = $client->getTopicRef($topicName);

// ---- queues -------------------------------------------------------------------------------------------
check('queue_create', function () use ($client, $queueName, $subQueueName) {
    $client->createQueue(new CreateQueueRequest($queueName));
    $client->createQueue(new CreateQueueRequest($subQueueName));
});

check('queue_get_attributes', function () use ($queue, $queueName) {
    $attrs = $queue->getAttribute()->getQueueAttributes();
    if ($attrs->getQueueName() !== $queueName) return 'QueueName ' . var_export($attrs->getQueueName(), TRUE);
    if ((int)$attrs->getVisibilityTimeout() !== 30) return 'VisibilityTimeout ' . var_export($attrs->getVisibilityTimeout(), TRUE);
    if ((int)$attrs->getMaximumMessageSize() !== 65536) return 'MaximumMessageSize ' . var_export($attrs->getMaximumMessageSize(), TRUE);
});

check('queue_set_attributes', function () use ($queue) {
    $attributes = new QueueAttributes();
    $attributes->setVisibilityTimeout(45);
    $attributes->setPollingWaitSeconds(3);
    $queue->setAttribute($attributes);
    $attrs = $queue->getAttribute()->getQueueAttributes();
    if ((int)$attrs->getVisibilityTimeout() !== 45) return 'VisibilityTimeout after set ' . var_export($attrs->getVisibilityTimeout(), TRUE);
    if ((int)$attrs->getPollingWaitSeconds() !== 3) return 'PollingWaitSeconds after set ' . var_export($attrs->getPollingWaitSeconds(), TRUE);
});

check('queue_list', function () use ($client, $queueName, $subQueueName, $run) {
    $res = $client->listQueue(new ListQueueRequest(100, "php-"));
    $names = $res->getQueueNames();
    foreach (array($queueName, $subQueueName) as $n) {
        if (!in_array($n, $names, TRUE)) return "$n not in " . implode(',', $names);
    }
    $one = $client->listQueue(new ListQueueRequest(1, "php-"));
    if (count($one->getQueueNames()) !== 1) return 'retNum=1 gave ' . count($one->getQueueNames());
    if ($one->isFinished() && count($names) > 1) return 'retNum=1 gave no NextMarker';
});

// ---- messages -----------------------------------------------------------------------------------------
$body = "php-sdk message <&> $run";
check('message_send', function () use ($queue, $body, &$state) {
    $res = $queue->sendMessage(new SendMessageRequestItem($body));
    if (!$res->isSucceed()) return 'not succeeded';
    if (strtoupper(md5(base64_encode($body))) !== $res->getMessageBodyMD5()) return 'MD5 ' . $res->getMessageBodyMD5();
    $state['msgId'] = $res->getMessageId();
});

check('message_peek', function () use ($queue, $body) {
    $res = $queue->peekMessage();
    if ($res->getMessageId() !== need('msgId')) return 'MessageId ' . $res->getMessageId();
    if ($res->getMessageBody() !== $body) return 'body ' . var_export($res->getMessageBody(), TRUE);
});

check('message_receive', function () use ($queue, $body, &$state) {
    $res = $queue->receiveMessage(3);
    if ($res->getMessageId() !== need('msgId')) return 'MessageId ' . $res->getMessageId();
    if ($res->getMessageBody() !== $body) return 'body ' . var_export($res->getMessageBody(), TRUE);
    if ((int)$res->getDequeueCount() !== 1) return 'DequeueCount ' . $res->getDequeueCount();
    $state['handle'] = $res->getReceiptHandle();
});

check('message_change_visibility', function () use ($queue, &$state) {
    $res = $queue->changeMessageVisibility(need('handle'), 10);
    $new = $res->getReceiptHandle();
    if (empty($new)) return 'no new ReceiptHandle';
    $now = (int)(microtime(TRUE) * 1000);
    $next = (int)$res->getNextVisibleTime();
    if ($next < $now + 5000 || $next > $now + 15000) return "NextVisibleTime $next not ~10 s from $now";
    $state['oldHandle'] = $state['handle'];
    $state['handle'] = $new;
});

check('message_delete', function () use ($queue, &$state) {
    $queue->deleteMessage(need('handle'));
    $state['deletedHandle'] = $state['handle'];
});

check('message_receive_empty_MessageNotExist', function () use ($queue) {
    return expectError(function () use ($queue) { $queue->receiveMessage(1); },
        array('MessageNotExist'), MessageNotExistException::class);
});

check('batch_send', function () use ($queue, $run) {
    $items = array();
    for ($i = 0; $i < 5; $i++) {
        $items[] = new SendMessageRequestItem("batch-$i-$run");
    }
    $res = $queue->batchSendMessage($items);
    $ok = 0;
    foreach ($res->getSendMessageResponseItems() as $item) {
        if ($item->isSucceed()) $ok++;
    }
    if ($ok !== 5) return "$ok of 5 succeeded";
});

check('batch_peek', function () use ($queue, $run) {
    $res = $queue->batchPeekMessage(16);
    $bodies = array_map(function ($m) { return $m->getMessageBody(); }, $res->getMessages());
    sort($bodies);
    $want = array();
    for ($i = 0; $i < 5; $i++) $want[] = "batch-$i-$run";
    if ($bodies !== $want) return 'bodies ' . implode(',', $bodies);
});

check('batch_receive', function () use ($queue, $run, &$state) {
    $handles = array();
    $bodies = array();
    for ($round = 0; $round < 3 && count($handles) < 5; $round++) {
        $res = $queue->batchReceiveMessage(new BatchReceiveMessageRequest(16, 3));
        foreach ($res->getMessages() as $m) {
            $handles[] = $m->getReceiptHandle();
            $bodies[] = $m->getMessageBody();
        }
    }
    $state['batchHandles'] = $handles;
    if (count($handles) !== 5) return 'received ' . count($handles) . ' of 5';
    foreach ($bodies as $b) {
        if (strpos($b, "batch-") !== 0 || substr($b, -strlen($run)) !== $run) return "unexpected body $b";
    }
});

check('batch_delete', function () use ($queue) {
    $queue->batchDeleteMessage(need('batchHandles'));
    // deleted, not just invisible: nothing left to peek
    $r = expectError(function () use ($queue) { $queue->batchPeekMessage(16); }, array('MessageNotExist'), MessageNotExistException::class);
    if ($r !== NULL) return "batchPeek after delete: $r";
});

// ---- errors -------------------------------------------------------------------------------------------
check('error_wrong_secret_SignatureDoesNotMatch', function () use ($endPoint, $accessId, $queueName) {
    $bad = new Client($endPoint, $accessId, 'not-the-secret');
    return expectError(function () use ($bad, $queueName) { $bad->getQueueRef($queueName)->getAttribute(); },
        array('SignatureDoesNotMatch'));
});

check('error_missing_queue_QueueNotExist', function () use ($client, $run) {
    $missing = $client->getQueueRef("php-missing-$run");
    $send = function () use ($missing) { $missing->sendMessage(new SendMessageRequest('x')); };
    return expectMissing($missing, array('sendMessage' => $send), 'QueueNotExist', QueueNotExistException::class);
});

check('error_stale_receipt_handle', function () use ($queue) {
    // the handle of a message already deleted
    return expectError(function () use ($queue) { $queue->deleteMessage(need('deletedHandle')); },
        array('MessageNotExist', 'ReceiptHandleError'));
});

check('error_garbage_receipt_handle_ReceiptHandleError', function () use ($queue) {
    return expectError(function () use ($queue) { $queue->deleteMessage('not-a-receipt-handle'); },
        array('ReceiptHandleError', 'MessageNotExist'));
});

check('error_missing_topic_TopicNotExist', function () use ($client, $run) {
    $missing = $client->getTopicRef("php-missing-$run");
    $publish = function () use ($missing) { $missing->publishMessage(new PublishMessageRequest('x')); };
    return expectMissing($missing, array('publishMessage' => $publish), 'TopicNotExist', TopicNotExistException::class);
});

// ---- topics -------------------------------------------------------------------------------------------
check('topic_create', function () use ($client, $topicName) {
    $client->createTopic(new CreateTopicRequest($topicName));
});

check('error_missing_subscription_SubscriptionNotExist', function () use ($topic, $run) {
    return expectError(function () use ($topic, $run) { $topic->getSubscriptionAttribute("php-missing-$run"); },
        array('SubscriptionNotExist'), SubscriptionNotExistException::class);
});

check('topic_get_attributes', function () use ($topic, $topicName) {
    $attrs = $topic->getAttribute()->getTopicAttributes();
    if ($attrs->getTopicName() !== $topicName) return 'TopicName ' . var_export($attrs->getTopicName(), TRUE);
    if ((int)$attrs->getMaximumMessageSize() !== 65536) return 'MaximumMessageSize ' . var_export($attrs->getMaximumMessageSize(), TRUE);
});

check('topic_set_attributes', function () use ($topic) {
    $attributes = new TopicAttributes();
    $attributes->setMaximumMessageSize(32768);
    $topic->setAttribute($attributes);
    $got = (int)$topic->getAttribute()->getTopicAttributes()->getMaximumMessageSize();
    if ($got !== 32768) return "MaximumMessageSize after set $got";
});

check('topic_list', function () use ($client, $topicName) {
    $names = $client->listTopic(new ListTopicRequest(100, 'php-'))->getTopicNames();
    if (!in_array($topicName, $names, TRUE)) return "$topicName not in " . implode(',', $names);
});

check('topic_subscribe_queue', function () use ($topic, $subName, $subQueueName, $region, $accountId) {
    // the SDK's generateQueueEndpoint() takes account and region from the endpoint's host name: written here
    $endpoint = sprintf('acs:mns:%s:%s:queues/%s', $region, $accountId, $subQueueName);
    $topic->subscribe(new SubscriptionAttributes($subName, $endpoint, 'BACKOFF_RETRY', 'SIMPLIFIED'));
    $attrs = $topic->getSubscriptionAttribute($subName)->getSubscriptionAttributes();
    if ($attrs->getEndpoint() !== $endpoint) return 'Endpoint ' . var_export($attrs->getEndpoint(), TRUE);
    if ($attrs->getContentFormat() !== 'SIMPLIFIED') return 'NotifyContentFormat ' . var_export($attrs->getContentFormat(), TRUE);
});

check('topic_list_subscriptions', function () use ($topic, $subName) {
    $names = $topic->listSubscription(100)->getSubscriptionNames();
    if ($names !== array($subName)) return 'subscriptions ' . implode(',', $names);
});

$topicBody = "php-sdk topic message $run";
check('topic_publish', function () use ($topic, $topicBody, &$state) {
    $res = $topic->publishMessage(new PublishMessageRequest($topicBody));
    if (strtoupper(md5($topicBody)) !== strtoupper($res->getMessageBodyMD5())) return 'MD5 ' . $res->getMessageBodyMD5();
    $state['topicMsgId'] = $res->getMessageId();
});

check('topic_delivery_to_queue', function () use ($subQueue, $topicBody) {
    need('topicMsgId');
    $deadline = microtime(TRUE) + 20;
    while (microtime(TRUE) < $deadline) {
        try {
            $res = $subQueue->receiveMessage(5);
        } catch (MessageNotExistException $e) {
            continue;
        }
        $subQueue->deleteMessage($res->getReceiptHandle());
        if ($res->getMessageBody() !== $topicBody) return 'delivered body ' . var_export($res->getMessageBody(), TRUE);
        return NULL;
    }
    return 'nothing delivered within 20 s';
});

check('topic_unsubscribe', function () use ($topic, $subName) {
    $topic->unsubscribe($subName);
    $r = expectError(function () use ($topic, $subName) { $topic->getSubscriptionAttribute($subName); },
        array('SubscriptionNotExist'), SubscriptionNotExistException::class);
    if ($r !== NULL) return "after unsubscribe: $r";
});

check('topic_delete', function () use ($client, $topic, $topicName) {
    $client->deleteTopic($topicName);
    return expectError(function () use ($topic) { $topic->getAttribute(); }, array('TopicNotExist'), TopicNotExistException::class);
});

check('queue_delete', function () use ($client, $queue, $queueName, $subQueueName) {
    $client->deleteQueue($queueName);
    $client->deleteQueue($subQueueName);
    return expectError(function () use ($queue) { $queue->getAttribute(); }, array('QueueNotExist'), QueueNotExistException::class);
});

echo "$passed passed, $failed failed\n";
exit($failed === 0 ? 0 : 1);
