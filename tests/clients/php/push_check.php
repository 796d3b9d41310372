<?php
// Push check for the PHP SDK's sample HTTP endpoint (Samples/Topic/http_server_sample.php), driven by push_check.sh,
// which serves it with `php -S` (as shipped, and a copy with its signature check uncommented) and passes
// PHP_PUSH_RECEIVERS="name|url|log|statuslog;...". With the PHP SDK as Samples/Topic/ use it: create a topic,
// subscribe each receiver as an HttpEndpoint (XML notifications: the sample parses XML), publish, and read from
// status_router.php's status log how each receiver answered the first push (cases php_push_<name>_2xx); then watch
// PUSH_REDELIVERY_WINDOW (25) s whether the shipped receiver, having answered 2xx, gets the message pushed again
// (php_push_shipped_no_redelivery_after_2xx). Prints `PASS name` / `FAIL name: reason`, `N passed, M failed`.

require_once __DIR__ . '/Common.php';

use AliyunMNS\Client;
use AliyunMNS\Exception\MnsException;
use AliyunMNS\Model\SubscriptionAttributes;
use AliyunMNS\Requests\CreateTopicRequest;
use AliyunMNS\Requests\PublishMessageRequest;

$endPoint = getenv('MNS_ENDPOINT') ?: 'http://127.0.0.1:18081';
$accessId = getenv('MNS_ACCESS_KEY_ID');
$accessKey = getenv('MNS_ACCESS_KEY_SECRET');
$receivers = array();
foreach (array_filter(explode(';', (string)getenv('PHP_PUSH_RECEIVERS'))) as $spec) {
    list($name, $url, $log, $status) = explode('|', $spec);
    $receivers[] = array('name' => $name, 'url' => $url, 'log' => $log, 'status' => $status);
}
if (empty($accessId) || empty($accessKey) || empty($receivers)) {
    echo "Must set MNS_ACCESS_KEY_ID / MNS_ACCESS_KEY_SECRET / PHP_PUSH_RECEIVERS (run push_check.sh)\n";
    exit(2);
}

$passed = 0;
$failed = 0;
function report($name, $reason)
{
    global $passed, $failed;
    if ($reason === NULL) {
        $passed++;
        echo "PASS $name\n";
    } else {
        $failed++;
        echo "FAIL $name: " . str_replace("\n", ' | ', $reason) . "\n";
    }
}

// The POST requests status_router.php recorded: [status, path] each, in order.
function posts($statusLog)
{
    $text = is_file($statusLog) ? file_get_contents($statusLog) : '';
    preg_match_all('/HARNESS-STATUS (\d{3}) POST (\S+)/', $text, $m, PREG_SET_ORDER);
    return array_map(function ($x) { return array((int)$x[1], $x[2]); }, $m);
}

// What the sample itself reported (its error_log messages "md5 mismatch" / "verify signature fail", PHP warnings and
// errors), for a failure's reason.
function sampleLog($log)
{
    $lines = is_file($log) ? file($log, FILE_IGNORE_NEW_LINES) : array();
    $keep = array();
    foreach ($lines as $l) {
        if (!preg_match('/PHP (Warning|Fatal error|Notice|Deprecated|Parse error)|verify signature fail|md5 mismatch/', $l)) continue;
        $l = preg_replace('/^\[[^\]]*\]\s*/', '', $l);
        $keep[] = trim(preg_replace('# in /\S*/#', ' in ', $l));
    }
    return $keep ? implode(' / ', array_unique($keep)) : '(nothing)';
}

$run = substr(bin2hex(random_bytes(4)), 0, 8);
$topicName = "php-push-$run";
$client = new Client($endPoint, $accessId, $accessKey);
$topic = $client->getTopicRef($topicName);
$body = "php push sample message $run";

try {
    $client->createTopic(new CreateTopicRequest($topicName));
    foreach ($receivers as $i => $r) {
        $topic->subscribe(new SubscriptionAttributes("php-push-$i-$run", $r['url'], 'BACKOFF_RETRY', 'XML'));
    }
    $res = $topic->publishMessage(new PublishMessageRequest($body));
    $messageId = $res->getMessageId();
} catch (MnsException $e) {
    foreach ($receivers as $r) {
        report('php_push_' . $r['name'] . '_2xx', 'setup failed: ' . $e);
    }
    echo "$passed passed, $failed failed\n";
    exit(1);
}

$deadline = microtime(TRUE) + 20;
$pending = $receivers;
$seen = array();
$seenAt = array();
while ($pending && microtime(TRUE) < $deadline) {
    foreach ($pending as $k => $r) {
        $p = posts($r['status']);
        if ($p) {
            $seen[$r['name']] = $p;
            $seenAt[$r['name']] = microtime(TRUE);
            unset($pending[$k]);
        }
    }
    usleep(200000);
}

foreach ($receivers as $r) {
    $name = 'php_push_' . $r['name'] . '_2xx';
    if (!isset($seen[$r['name']])) {
        report($name, "no push reached {$r['url']} within 20 s; log: " . sampleLog($r['log']));
        continue;
    }
    list($status, $path) = $seen[$r['name']][0];
    $text = file_get_contents($r['log']);
    if ($status >= 200 && $status < 300) {
        if (strpos($text, $messageId) === FALSE) {
            report($name, "answered $status but its log lacks MessageId $messageId");
        } else {
            report($name, NULL);
        }
    } else {
        report($name, "receiver answered $status to POST $path; sample logged: " . sampleLog($r['log']));
    }
}

// A receiver that answered 2xx has the message: MNS pushes it no more. Watch the shipped receiver for a window
// longer than BACKOFF_RETRY's longest wait (20 s) for a push of the same message again.
$window = (int)(getenv('PUSH_REDELIVERY_WINDOW') ?: 25);
$first = isset($seenAt['shipped']) ? $seenAt['shipped'] : microtime(TRUE);
while (microtime(TRUE) < $first + $window) {
    usleep(500000);
}
foreach ($receivers as $r) {
    $statuses = array_map(function ($x) { return $x[0]; }, posts($r['status']));
    fwrite(STDERR, "  ({$r['name']}: POSTs answered " . implode(',', $statuses) . ")\n");
    if ($r['name'] !== 'shipped') continue;
    if (is_file($r['status']) && preg_match('/ headers=(\S*)/', file_get_contents($r['status']), $m)) {
        echo "# header names the receiver got: {$m[1]}\n";
    }
    $name = 'php_push_shipped_no_redelivery_after_2xx';
    if (!$statuses) {
        report($name, 'no push arrived');
    } elseif ($statuses[0] < 200 || $statuses[0] >= 300) {
        report($name, "the first push was answered {$statuses[0]}, not 2xx");
    } elseif (count($statuses) > 1) {
        report($name, 'the message was pushed ' . count($statuses) . " times within $window s although the receiver"
            . ' answered ' . implode(',', $statuses) . ' (the server did not take the 2xx as delivered)');
    } else {
        report($name, NULL);
    }
}

try {
    foreach ($receivers as $i => $r) {
        $topic->unsubscribe("php-push-$i-$run");
    }
    $client->deleteTopic($topicName);
} catch (MnsException $e) {
    fwrite(STDERR, "cleanup: $e\n");
}

echo "$passed passed, $failed failed\n";
exit($failed === 0 ? 0 : 1);
