// Checks Alibaba's MNS Go SDK (aliyun-mns-go-sdk, built by shared/clients/go/build.sh, beside the checkout) against an
// MNS-compatible server, written as the SDK's example/ uses it (NewAliMNSClientWithConfig, NewMNSQueueManager,
// NewMNSQueue with respChan/errChan, NewMNSTopicManager, NewMNSTopic, ERR_MNS_*.IsEqual). Prints
// `PASS name` / `FAIL name: reason`, then `N passed, M failed`.
//
// Env: MNS_ENDPOINT (http://127.0.0.1:18081), MNS_ACCESS_KEY_ID, MNS_ACCESS_KEY_SECRET, MNS_ACCOUNT_ID,
// MNS_REGION (cn-hangzhou).
//
//	GO111MODULE=off GOPATH=~/.cache/mns-sdks/go/gopath:/usr/share/gocode GOPROXY=off go build -o mns_check mns_check.go
package main

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	ali_mns "github.com/aliyun/aliyun-mns-go-sdk"
	"github.com/gogap/errors"
)

var passed, failed int

// check runs one case: it passes when fn returns nil (panics are failures too).
func check(name string, fn func() error) {
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		err = fn()
	}()
	if err == nil {
		passed++
		fmt.Printf("PASS %s\n", name)
	} else {
		failed++
		fmt.Printf("FAIL %s: %s\n", name, strings.ReplaceAll(err.Error(), "\n", " "))
	}
}

// mnsCode is the MNS error code an SDK error carries (from the decoded <Error>), or "".
func mnsCode(err error) string {
	if ec, ok := err.(errors.ErrCode); ok {
		if resp, ok := ec.Context()["resp"].(ali_mns.ErrorResponse); ok {
			return resp.Code
		}
	}
	return ""
}

// expectError: err must be one of the SDK's error templates, carrying one of the codes.
func expectError(err error, codes []string, templates ...errors.ErrCodeTemplate) error {
	if err == nil {
		return fmt.Errorf("expected %s, but the call succeeded", strings.Join(codes, "/"))
	}
	code := mnsCode(err)
	fmt.Fprintf(os.Stderr, "  (error seen: %s: %v)\n", code, err)
	found := false
	for _, c := range codes {
		found = found || c == code
	}
	if !found {
		return fmt.Errorf("expected %s, got code %q: %v", strings.Join(codes, "/"), code, err)
	}
	if len(templates) > 0 {
		for i := range templates {
			if templates[i].IsEqual(err) {
				return nil
			}
		}
		return fmt.Errorf("code %s but not the SDK's typed error: %v", code, err)
	}
	return nil
}

// await is the examples' respChan/errChan pattern: call starts the SDK call, which answers on one of the two
// channels; no answer within `seconds` is an error.
func await[T any](seconds int64, call func(chan T, chan error)) (T, error) {
	respChan := make(chan T, 1)
	errChan := make(chan error, 1)
	go call(respChan, errChan)
	var none T
	select {
	case resp := <-respChan:
		return resp, nil
	case err := <-errChan:
		return none, err
	case <-time.After(time.Duration(seconds) * time.Second):
		return none, fmt.Errorf("no answer within %d s", seconds)
	}
}

// receive is the examples' ReceiveMessage pattern: one long poll.
func receive(q ali_mns.AliMNSQueue, wait int64) (ali_mns.MessageReceiveResponse, error) {
	return await(wait+15, func(r chan ali_mns.MessageReceiveResponse, e chan error) { q.ReceiveMessage(r, e, wait) })
}

func peek(q ali_mns.AliMNSQueue) (ali_mns.MessageReceiveResponse, error) {
	return await(15, func(r chan ali_mns.MessageReceiveResponse, e chan error) { q.PeekMessage(r, e) })
}

func batchReceive(q ali_mns.AliMNSQueue, n int32, wait int64) (ali_mns.BatchMessageReceiveResponse, error) {
	return await(wait+15, func(r chan ali_mns.BatchMessageReceiveResponse, e chan error) {
		q.BatchReceiveMessage(r, e, n, wait)
	})
}

func batchPeek(q ali_mns.AliMNSQueue, n int32) (ali_mns.BatchMessageReceiveResponse, error) {
	return await(15, func(r chan ali_mns.BatchMessageReceiveResponse, e chan error) { q.BatchPeekMessage(r, e, n) })
}

// namedCall is one SDK call of a case, named for the failure message.
type namedCall struct {
	name string
	call func() error
}

// expectEach calls each in order, expecting the error `code` (the SDK's typed error `template`); the first call that
// does not answer so fails the case, named.
func expectEach(code string, template errors.ErrCodeTemplate, calls []namedCall) error {
	for _, c := range calls {
		if e := expectError(c.call(), []string{code}, template); e != nil {
			return fmt.Errorf("%s: %v", c.name, e)
		}
	}
	return nil
}

func md5Upper(s string) string {
	sum := md5.Sum([]byte(s))
	return strings.ToUpper(hex.EncodeToString(sum[:]))
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func main() {
	endpoint := env("MNS_ENDPOINT", "http://127.0.0.1:18081")
	keyID, secret, accountID := os.Getenv("MNS_ACCESS_KEY_ID"), os.Getenv("MNS_ACCESS_KEY_SECRET"), os.Getenv("MNS_ACCOUNT_ID")
	region := env("MNS_REGION", "cn-hangzhou")
	if keyID == "" || secret == "" || accountID == "" {
		fmt.Println("Must set MNS_ACCESS_KEY_ID / MNS_ACCESS_KEY_SECRET / MNS_ACCOUNT_ID")
		os.Exit(2)
	}

	client, e := ali_mns.NewAliMNSClientWithConfig(ali_mns.AliMNSClientConfig{
		EndPoint:        endpoint,
		AccessKeyId:     keyID,
		AccessKeySecret: secret,
		Region:          region,
	})
	if e != nil {
		fmt.Println(e)
		os.Exit(2)
	}

	b := make([]byte, 4)
	rand.Read(b)
	run := hex.EncodeToString(b)
	queueName, subQueueName := "go-q-"+run, "go-subq-"+run
	topicName, subName := "go-t-"+run, "go-sub-"+run

	queueManager := ali_mns.NewMNSQueueManager(client)
	topicManager := ali_mns.NewMNSTopicManager(client)
	var queue, subQueue ali_mns.AliMNSQueue
	var topic ali_mns.AliMNSTopic
	var msgID, handle, deletedHandle, topicMsgID string
	var batchHandles []string
	skipped := func(what string) error { return fmt.Errorf("skipped: an earlier case did not provide %s", what) }

	// ---- queues ---------------------------------------------------------------------------------------
	check("queue_create", func() error {
		if err := queueManager.CreateQueue(queueName, 0, 65536, 345600, 30, 0, 3); err != nil {
			return err
		}
		if err := queueManager.CreateSimpleQueue(subQueueName); err != nil {
			return err
		}
		var err error
		if queue, err = ali_mns.NewMNSQueue(queueName, client); err != nil {
			return err
		}
		subQueue, err = ali_mns.NewMNSQueue(subQueueName, client)
		return err
	})

	check("queue_get_attributes", func() error {
		attr, err := queueManager.GetQueueAttributes(queueName)
		if err != nil {
			return err
		}
		if attr.QueueName != queueName || attr.VisibilityTimeout != 30 || attr.MaxMessageSize != 65536 || attr.MessageRetentionPeriod != 345600 {
			return fmt.Errorf("attributes %+v", attr)
		}
		return nil
	})

	check("queue_set_attributes", func() error {
		if err := queueManager.SetQueueAttributes(queueName, 0, 65536, 345600, 45, 3, 3); err != nil {
			return err
		}
		attr, err := queueManager.GetQueueAttributes(queueName)
		if err != nil {
			return err
		}
		if attr.VisibilityTimeout != 45 || attr.PollingWaitSeconds != 3 {
			return fmt.Errorf("after set: VisibilityTimeout %d PollingWaitSeconds %d", attr.VisibilityTimeout, attr.PollingWaitSeconds)
		}
		return nil
	})

	check("queue_list", func() error {
		queues, err := queueManager.ListQueue("", 100, "go-")
		if err != nil {
			return err
		}
		var urls []string
		for _, q := range queues.Queues {
			urls = append(urls, q.QueueURL)
		}
		for _, n := range []string{queueName, subQueueName} {
			found := false
			for _, u := range urls {
				found = found || strings.HasSuffix(u, "/queues/"+n)
			}
			if !found {
				return fmt.Errorf("%s not in %v", n, urls)
			}
		}
		one, err := queueManager.ListQueue("", 1, "go-")
		if err != nil {
			return err
		}
		if len(one.Queues) != 1 || one.NextMarker == "" {
			return fmt.Errorf("retNumber=1 gave %d queues, NextMarker %q", len(one.Queues), one.NextMarker)
		}
		return nil
	})

	// ---- messages -------------------------------------------------------------------------------------
	body := "go-sdk message <&> " + run
	check("message_send", func() error {
		if queue == nil {
			return skipped("the queue")
		}
		// Priority as the examples set it: a zero Priority is sent as 0, which MNS refuses
		resp, err := queue.SendMessage(ali_mns.MessageSendRequest{MessageBody: body, DelaySeconds: 0, Priority: 8})
		if err != nil {
			return err
		}
		if resp.MessageBodyMD5 != md5Upper(body) {
			return fmt.Errorf("MessageBodyMD5 %s, want %s", resp.MessageBodyMD5, md5Upper(body))
		}
		msgID = resp.MessageId
		return nil
	})

	check("message_peek", func() error {
		if msgID == "" {
			return skipped("a message")
		}
		resp, err := peek(queue)
		if err != nil {
			return err
		}
		if resp.MessageId != msgID || resp.MessageBody != body || resp.Priority != 8 {
			return fmt.Errorf("peeked %+v", resp)
		}
		return nil
	})

	check("message_receive", func() error {
		if msgID == "" {
			return skipped("a message")
		}
		resp, err := receive(queue, 3)
		if err != nil {
			return err
		}
		if resp.MessageId != msgID || resp.MessageBody != body || resp.DequeueCount != 1 || resp.ReceiptHandle == "" {
			return fmt.Errorf("received %+v", resp)
		}
		handle = resp.ReceiptHandle
		return nil
	})

	check("message_change_visibility", func() error {
		if handle == "" {
			return skipped("a receipt handle")
		}
		ret, err := queue.ChangeMessageVisibility(handle, 10)
		if err != nil {
			return err
		}
		now := time.Now().UnixNano() / int64(time.Millisecond)
		if ret.ReceiptHandle == "" || ret.NextVisibleTime < now+5000 || ret.NextVisibleTime > now+15000 {
			return fmt.Errorf("ReceiptHandle %q NextVisibleTime %d (now %d)", ret.ReceiptHandle, ret.NextVisibleTime, now)
		}
		handle = ret.ReceiptHandle
		return nil
	})

	check("message_delete", func() error {
		if handle == "" {
			return skipped("a receipt handle")
		}
		if err := queue.DeleteMessage(handle); err != nil {
			return err
		}
		deletedHandle = handle
		return nil
	})

	check("message_receive_empty_MessageNotExist", func() error {
		if queue == nil {
			return skipped("the queue")
		}
		_, err := receive(queue, 1)
		return expectError(err, []string{"MessageNotExist"}, ali_mns.ERR_MNS_MESSAGE_NOT_EXIST)
	})

	var batchBodies []string
	for i := 0; i < 5; i++ {
		batchBodies = append(batchBodies, fmt.Sprintf("batch-%d-%s", i, run))
	}
	check("batch_send", func() error {
		if queue == nil {
			return skipped("the queue")
		}
		var msgs []ali_mns.MessageSendRequest
		for _, b := range batchBodies {
			msgs = append(msgs, ali_mns.MessageSendRequest{MessageBody: b, DelaySeconds: 0, Priority: 8})
		}
		resp, err := queue.BatchSendMessage(msgs...)
		if err != nil {
			return err
		}
		ok := 0
		for _, m := range resp.Messages {
			if m.ErrorCode == "" && m.MessageId != "" {
				ok++
			}
		}
		if ok != 5 {
			return fmt.Errorf("%d of 5 sent: %+v", ok, resp.Messages)
		}
		return nil
	})

	check("batch_peek", func() error {
		if queue == nil {
			return skipped("the queue")
		}
		resp, err := batchPeek(queue, 16)
		if err != nil {
			return err
		}
		var got []string
		for _, m := range resp.Messages {
			got = append(got, m.MessageBody)
		}
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(batchBodies, ",") {
			return fmt.Errorf("peeked %v", got)
		}
		return nil
	})

	check("batch_receive", func() error {
		if queue == nil {
			return skipped("the queue")
		}
		for round := 0; round < 3 && len(batchHandles) < 5; round++ {
			resp, err := batchReceive(queue, 16, 3)
			if err != nil {
				return err
			}
			for _, m := range resp.Messages {
				if !strings.HasPrefix(m.MessageBody, "batch-") || !strings.HasSuffix(m.MessageBody, run) {
					return fmt.Errorf("unexpected body %q", m.MessageBody)
				}
				batchHandles = append(batchHandles, m.ReceiptHandle)
			}
		}
		if len(batchHandles) != 5 {
			return fmt.Errorf("received %d of 5", len(batchHandles))
		}
		return nil
	})

	check("batch_delete", func() error {
		if len(batchHandles) == 0 {
			return skipped("receipt handles")
		}
		resp, err := queue.BatchDeleteMessage(batchHandles...)
		if err != nil {
			return fmt.Errorf("%v (failed entries %+v)", err, resp.FailedMessages)
		}
		// deleted, not just invisible: nothing left to peek
		_, err = batchPeek(queue, 16)
		if e := expectError(err, []string{"MessageNotExist"}, ali_mns.ERR_MNS_MESSAGE_NOT_EXIST); e != nil {
			return fmt.Errorf("batch peek after delete: %v", e)
		}
		return nil
	})

	// ---- errors ---------------------------------------------------------------------------------------
	check("error_wrong_secret_SignatureDoesNotMatch", func() error {
		bad, err := ali_mns.NewAliMNSClientWithConfig(ali_mns.AliMNSClientConfig{
			EndPoint: endpoint, AccessKeyId: keyID, AccessKeySecret: "not-the-secret", Region: region,
		})
		if err != nil {
			return err
		}
		_, err = ali_mns.NewMNSQueueManager(bad).GetQueueAttributes(queueName)
		return expectError(err, []string{"SignatureDoesNotMatch"}, ali_mns.ERR_MNS_SIGNATURE_DOES_NOT_MATCH)
	})

	check("error_missing_queue_QueueNotExist", func() error {
		missing, err := ali_mns.NewMNSQueue("go-missing-"+run, client)
		if err != nil {
			return err
		}
		return expectEach("QueueNotExist", ali_mns.ERR_MNS_QUEUE_NOT_EXIST, []namedCall{
			{"GetQueueAttributes", func() error { _, err := queueManager.GetQueueAttributes("go-missing-" + run); return err }},
			{"SendMessage", func() error {
				_, err := missing.SendMessage(ali_mns.MessageSendRequest{MessageBody: "x", Priority: 8})
				return err
			}},
		})
	})

	check("error_stale_receipt_handle", func() error {
		if deletedHandle == "" {
			return skipped("a deleted message's receipt handle")
		}
		err := queue.DeleteMessage(deletedHandle)
		return expectError(err, []string{"MessageNotExist", "ReceiptHandleError"},
			ali_mns.ERR_MNS_MESSAGE_NOT_EXIST, ali_mns.ERR_MNS_RECEIPT_HANDLE_ERROR)
	})

	check("error_garbage_receipt_handle_ReceiptHandleError", func() error {
		if queue == nil {
			return skipped("the queue")
		}
		err := queue.DeleteMessage("not-a-receipt-handle")
		return expectError(err, []string{"ReceiptHandleError", "MessageNotExist"},
			ali_mns.ERR_MNS_RECEIPT_HANDLE_ERROR, ali_mns.ERR_MNS_MESSAGE_NOT_EXIST)
	})

	check("error_missing_topic_TopicNotExist", func() error {
		missing, err := ali_mns.NewMNSTopic("go-missing-"+run, client)
		if err != nil {
			return err
		}
		return expectEach("TopicNotExist", ali_mns.ERR_MNS_TOPIC_NOT_EXIST, []namedCall{
			{"GetTopicAttributes", func() error { _, err := topicManager.GetTopicAttributes("go-missing-" + run); return err }},
			{"PublishMessage", func() error {
				_, err := missing.PublishMessage(ali_mns.MessagePublishRequest{MessageBody: "x"})
				return err
			}},
		})
	})

	// ---- topics ---------------------------------------------------------------------------------------
	check("topic_create", func() error {
		if err := topicManager.CreateSimpleTopic(topicName); err != nil {
			return err
		}
		var err error
		topic, err = ali_mns.NewMNSTopic(topicName, client)
		return err
	})

	check("error_missing_subscription_SubscriptionNotExist", func() error {
		if topic == nil {
			return skipped("the topic")
		}
		_, err := topic.GetSubscriptionAttributes("go-missing-" + run)
		// the SDK maps no template to SubscriptionNotExist: it is ERR_MNS_UNKNOWN_CODE carrying the code
		return expectError(err, []string{"SubscriptionNotExist"}, ali_mns.ERR_MNS_UNKNOWN_CODE)
	})

	check("topic_get_attributes", func() error {
		attr, err := topicManager.GetTopicAttributes(topicName)
		if err != nil {
			return err
		}
		if attr.TopicName != topicName || attr.MaxMessageSize != 65536 {
			return fmt.Errorf("attributes %+v", attr)
		}
		return nil
	})

	check("topic_set_attributes", func() error {
		if err := topicManager.SetTopicAttributes(topicName, 32768, false); err != nil {
			return err
		}
		attr, err := topicManager.GetTopicAttributes(topicName)
		if err != nil {
			return err
		}
		if attr.MaxMessageSize != 32768 {
			return fmt.Errorf("MaximumMessageSize after set %d", attr.MaxMessageSize)
		}
		return nil
	})

	check("topic_list", func() error {
		topics, err := topicManager.ListTopic("", 100, "go-")
		if err != nil {
			return err
		}
		for _, t := range topics.Topics {
			if strings.HasSuffix(t.TopicURL, "/topics/"+topicName) {
				return nil
			}
		}
		return fmt.Errorf("%s not in %+v", topicName, topics.Topics)
	})

	// the SDK's GenerateQueueEndpoint takes the account from the endpoint's host name: written here
	queueEndpoint := fmt.Sprintf("acs:mns:%s:%s:queues/%s", region, accountID, subQueueName)
	check("topic_subscribe_queue", func() error {
		if topic == nil {
			return skipped("the topic")
		}
		err := topic.Subscribe(subName, ali_mns.MessageSubscribeRequest{
			Endpoint:            queueEndpoint,
			NotifyContentFormat: ali_mns.SIMPLIFIED,
		})
		if err != nil {
			return err
		}
		attr, err := topic.GetSubscriptionAttributes(subName)
		if err != nil {
			return err
		}
		if attr.Endpoint != queueEndpoint || attr.NotifyContentFormat != ali_mns.SIMPLIFIED || attr.TopicName != topicName {
			return fmt.Errorf("subscription attributes %+v", attr)
		}
		return nil
	})

	check("topic_list_subscriptions", func() error {
		if topic == nil {
			return skipped("the topic")
		}
		subs, err := topic.ListSubscriptionByTopic("", 100, "")
		if err != nil {
			return err
		}
		if len(subs.Subscriptions) != 1 || !strings.HasSuffix(subs.Subscriptions[0].SubscriptionURL, "/subscriptions/"+subName) {
			return fmt.Errorf("subscriptions %+v", subs.Subscriptions)
		}
		return nil
	})

	topicBody := "go-sdk topic message " + run
	check("topic_publish", func() error {
		if topic == nil {
			return skipped("the topic")
		}
		resp, err := topic.PublishMessage(ali_mns.MessagePublishRequest{MessageBody: topicBody})
		if err != nil {
			return err
		}
		if !strings.EqualFold(resp.MessageBodyMD5, md5Upper(topicBody)) || resp.MessageId == "" {
			return fmt.Errorf("publish response %+v", resp)
		}
		topicMsgID = resp.MessageId
		return nil
	})

	check("topic_delivery_to_queue", func() error {
		if topicMsgID == "" || subQueue == nil {
			return skipped("a published message")
		}
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			resp, err := receive(subQueue, 5)
			if ali_mns.ERR_MNS_MESSAGE_NOT_EXIST.IsEqual(err) {
				continue
			}
			if err != nil {
				return err
			}
			if e := subQueue.DeleteMessage(resp.ReceiptHandle); e != nil {
				return fmt.Errorf("delete delivered message: %v", e)
			}
			if resp.MessageBody != topicBody {
				return fmt.Errorf("delivered body %q", resp.MessageBody)
			}
			return nil
		}
		return fmt.Errorf("nothing delivered within 20 s")
	})

	check("topic_unsubscribe", func() error {
		if topic == nil {
			return skipped("the topic")
		}
		if err := topic.Unsubscribe(subName); err != nil {
			return err
		}
		_, err := topic.GetSubscriptionAttributes(subName)
		if e := expectError(err, []string{"SubscriptionNotExist"}); e != nil {
			return fmt.Errorf("after unsubscribe: %v", e)
		}
		return nil
	})

	check("topic_delete", func() error {
		if err := topicManager.DeleteTopic(topicName); err != nil {
			return err
		}
		_, err := topicManager.GetTopicAttributes(topicName)
		return expectError(err, []string{"TopicNotExist"}, ali_mns.ERR_MNS_TOPIC_NOT_EXIST)
	})

	check("queue_delete", func() error {
		if err := queueManager.DeleteQueue(queueName); err != nil {
			return err
		}
		if err := queueManager.DeleteQueue(subQueueName); err != nil {
			return err
		}
		_, err := queueManager.GetQueueAttributes(queueName)
		return expectError(err, []string{"QueueNotExist"}, ali_mns.ERR_MNS_QUEUE_NOT_EXIST)
	})

	fmt.Printf("%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}
