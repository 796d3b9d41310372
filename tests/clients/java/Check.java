// Checks Alibaba's Java MNS SDK (aliyun-sdk-mns 2.0.0, built from source) against an MNS endpoint, driving it
// the way the SDK's samples do (src/test/java/com/aliyun/mns/sample/): MNSClientBuilder with a
// ClientConfiguration carrying the signature version and a region, CloudQueue / CloudTopic, ServiceException's
// getErrorCode().
//
//   java Check [V2|V4]                                   settings from the environment (below)
//   java Check ENDPOINT ACCESS_KEY_ID SECRET REGION ACCOUNT_ID [V2|V4]
//
// Env: MNS_ENDPOINT (http://127.0.0.1:8080), MNS_ACCESS_KEY_ID, MNS_ACCESS_KEY_SECRET, MNS_REGION (cn-hangzhou),
// MNS_ACCOUNT_ID (for the queue endpoint of a subscription), MNS_SIGN_VERSION (V2).
// Prints `PASS name` / `FAIL name: reason` per case, then `N passed, M failed`; exit status 1 when any failed.

import com.aliyun.mns.client.CloudQueue;
import com.aliyun.mns.client.CloudTopic;
import com.aliyun.mns.client.MNSClient;
import com.aliyun.mns.client.MNSClientBuilder;
import com.aliyun.mns.common.ClientException;
import com.aliyun.mns.common.ServiceException;
import com.aliyun.mns.common.ServiceHandlingRequiredException;
import com.aliyun.mns.common.auth.SignVersion;
import com.aliyun.mns.common.http.ClientConfiguration;
import com.aliyun.mns.model.AccountAttributes;
import com.aliyun.mns.model.Message;
import com.aliyun.mns.model.MessagePropertyValue;
import com.aliyun.mns.model.PagingListResult;
import com.aliyun.mns.model.QueueMeta;
import com.aliyun.mns.model.RawTopicMessage;
import com.aliyun.mns.model.SubscriptionMeta;
import com.aliyun.mns.model.TopicMessage;
import com.aliyun.mns.model.TopicMeta;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

public class Check {
    // ---------------------------------------------------------------- case runner (shared with PushCheck)
    interface Body { void run() throws Exception; }

    /** A case's own failure: its message is the reason. */
    static class Failure extends Exception {
        Failure(String m) { super(m); }
    }

    static int passed, failed;
    /** Where the case lines go (PushCheck keeps System.out for the sample endpoint's own printing). */
    static java.io.PrintStream out = System.out;

    static void check(String name, Body body) {
        try {
            body.run();
            passed++;
            out.println("PASS " + name);
        } catch (Throwable t) {
            failed++;
            out.println("FAIL " + name + ": " + describe(t));
        }
        out.flush();
    }

    static void fail(String reason) throws Failure { throw new Failure(reason); }

    static void expect(boolean ok, String reason) throws Failure { if (!ok) throw new Failure(reason); }

    static <T> T need(T value, String what) throws Failure {
        if (value == null) throw new Failure("prerequisite missing: " + what);
        return value;
    }

    static String oneLine(String s) {
        if (s == null) return "null";
        s = s.replaceAll("\\s*\\n\\s*", " | ").trim();
        return s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }

    static String describe(Throwable t) {
        if (t instanceof Failure) return t.getMessage();
        if (t instanceof ServiceException) {
            ServiceException se = (ServiceException) t;
            return "ServiceException errorCode=" + se.getErrorCode() + " message=" + oneLine(se.getMessage());
        }
        if (t instanceof ServiceHandlingRequiredException) {
            ServiceHandlingRequiredException se = (ServiceHandlingRequiredException) t;
            return "ServiceHandlingRequiredException errorCode=" + se.getErrorCode() + " message=" + oneLine(se.getMessage());
        }
        if (t instanceof ClientException) {
            ClientException ce = (ClientException) t;
            String cause = ce.getCause() != null && ce.getCause() != ce ? " (cause " + ce.getCause().getClass().getSimpleName() + ")" : "";
            return "ClientException" + cause + ": " + oneLine(ce.getMessage());
        }
        return t.getClass().getName() + ": " + oneLine(t.getMessage());
    }

    /** The case passes when body throws an error whose getErrorCode() is one of codes. */
    static void expectError(String name, Body body, String... codes) {
        check(name, () -> {
            String code;
            String kind;
            try {
                body.run();
                throw new Failure("no exception; expected ServiceException with errorCode " + String.join(" or ", codes));
            } catch (ServiceException se) {
                code = se.getErrorCode();
                kind = "ServiceException";
            } catch (ServiceHandlingRequiredException se) {
                // deleteMessage/batchDeleteMessage wrap the ServiceException into this checked exception.
                if (!(se.getCause() instanceof ServiceException)) throw se;
                code = se.getErrorCode();
                kind = "ServiceHandlingRequiredException";
            }
            if (!Arrays.asList(codes).contains(code))
                fail(kind + " errorCode=" + code + ", expected " + String.join(" or ", codes));
        });
    }

    static String setting(String[] args, int index, String env, String dflt) {
        if (args.length >= 6 && args[index] != null && !args[index].isEmpty()) return args[index];
        String v = System.getenv(env);
        return v != null && !v.isEmpty() ? v : dflt;
    }

    // ---------------------------------------------------------------- settings
    static String endpoint, accessKeyId, accessKeySecret, region, accountId, mode;

    static void settings(String[] args) {
        endpoint = setting(args, 0, "MNS_ENDPOINT", "http://127.0.0.1:8080");
        accessKeyId = setting(args, 1, "MNS_ACCESS_KEY_ID", null);
        accessKeySecret = setting(args, 2, "MNS_ACCESS_KEY_SECRET", null);
        region = setting(args, 3, "MNS_REGION", "cn-hangzhou");
        accountId = setting(args, 4, "MNS_ACCOUNT_ID", null);
        mode = args.length == 1 ? args[0] : args.length >= 6 ? args[5] : System.getenv("MNS_SIGN_VERSION");
        mode = mode == null || mode.isEmpty() ? "V2" : mode.toUpperCase();
        if (accessKeyId == null || accessKeySecret == null || accountId == null || !(mode.equals("V2") || mode.equals("V4"))) {
            System.err.println("usage: java Check [V2|V4]  (env MNS_ENDPOINT MNS_ACCESS_KEY_ID MNS_ACCESS_KEY_SECRET MNS_REGION MNS_ACCOUNT_ID)\n"
                + "   or: java Check ENDPOINT ACCESS_KEY_ID SECRET REGION ACCOUNT_ID V2|V4");
            System.exit(2);
        }
    }

    /** As MNSClientV4Demo: a ClientConfiguration with the signature version, an account endpoint and a region. */
    static MNSClient client(String secret) {
        ClientConfiguration clientConfig = new ClientConfiguration();
        clientConfig.setSignatureVersion(mode.equals("V4") ? SignVersion.V4 : SignVersion.V2);
        return MNSClientBuilder.create()
            .accountEndpoint(endpoint)
            .accessKeyId(accessKeyId)
            .accessKeySecret(secret)
            .clientConfiguration(clientConfig)
            .region(region)
            .build();
    }

    /** Every name a listing gives, page by page (10 a page) until it answers no marker. */
    static <M> List<String> allNames(Function<String, PagingListResult<M>> list, Function<M, String> name) {
        List<String> names = new ArrayList<String>();
        String marker = null;
        do {
            PagingListResult<M> page = list.apply(marker);
            if (page == null || page.getResult() == null) break;   // the SDK answers null for an empty list
            for (M m : page.getResult()) names.add(name.apply(m));
            marker = page.getMarker();
        } while (marker != null && !marker.isEmpty());
        return names;
    }

    static List<String> queueNames(MNSClient client, String prefix) {
        return allNames(marker -> client.listQueue(prefix, marker, 10), QueueMeta::getQueueName);
    }

    static List<String> topicNames(MNSClient client, String prefix) {
        return allNames(marker -> client.listTopic(prefix, marker, 10), TopicMeta::getTopicName);
    }

    static List<Message> popUpTo(CloudQueue q, int n, int waitSeconds) throws Exception {
        List<Message> got = new ArrayList<Message>();
        for (int i = 0; i < 5 && got.size() < n; i++) {
            List<Message> batch = q.batchPopMessage(n - got.size(), waitSeconds);
            if (batch != null) got.addAll(batch);
        }
        return got;
    }

    // ---------------------------------------------------------------- state shared by the cases
    static MNSClient client;
    static String prefix;
    static CloudQueue queue, queue2, subQueue;
    static Message sent, received;
    static String changedHandle;
    static List<Message> batchSent, batchReceived;
    static CloudTopic topic;
    static String subName;
    static TopicMessage published;

    public static void main(String[] args) throws Exception {
        settings(args);
        System.out.println("# Java MNS SDK check, " + mode + " signatures, " + endpoint + " (region " + region + ", account " + accountId + ")");
        client = client(accessKeySecret);
        prefix = "jchk" + mode.toLowerCase() + Long.toString(System.currentTimeMillis(), 36);
        try {
            queueCases();
            messageCases();
            batchCases();
            errorCases();
            topicCases();
            accountCases();
        } finally {
            cleanup();
            client.close();
        }
        System.out.println(passed + " passed, " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }

    static void queueCases() {
        check("queue.create", () -> {
            QueueMeta meta = new QueueMeta();
            meta.setQueueName(prefix + "-q");
            meta.setPollingWaitSeconds(0);
            meta.setMaxMessageSize(2048L);
            meta.setVisibilityTimeout(30L);
            CloudQueue q = client.createQueue(meta);
            expect(q.getQueueURL() != null && q.getQueueURL().endsWith("/queues/" + prefix + "-q"), "queue URL " + q.getQueueURL());
            queue = q;
            // a second one, for the prefix listing, created as Sample.queueOperators does its second queue
            QueueMeta meta2 = new QueueMeta();
            meta2.setQueueName(prefix + "-q2");
            CloudQueue q2 = client.getQueueRef(prefix + "-q2");
            q2.create(meta2);
            queue2 = q2;
        });
        check("queue.getAttributes", () -> {
            QueueMeta m = need(queue, "queue").getAttributes();
            expect((prefix + "-q").equals(m.getQueueName()), "QueueName " + m.getQueueName());
            expect(Long.valueOf(2048L).equals(m.getMaxMessageSize()), "MaximumMessageSize " + m.getMaxMessageSize());
            expect(Long.valueOf(30L).equals(m.getVisibilityTimeout()), "VisibilityTimeout " + m.getVisibilityTimeout());
            expect(m.getCreateTime() != null, "no CreateTime");
        });
        check("queue.setAttributes", () -> {
            QueueMeta newMeta = new QueueMeta();
            newMeta.setQueueName(prefix + "-q");
            newMeta.setMaxMessageSize(4096L);
            need(queue, "queue").setAttributes(newMeta);
            QueueMeta m = queue.getAttributes();
            expect(Long.valueOf(4096L).equals(m.getMaxMessageSize()), "MaximumMessageSize after set " + m.getMaxMessageSize());
        });
        check("queue.listWithPrefix", () -> {
            List<String> names = queueNames(client, prefix);
            Set<String> want = new HashSet<String>(Arrays.asList(prefix + "-q", prefix + "-q2"));
            expect(new HashSet<String>(names).equals(want), "listQueue(" + prefix + ") = " + names);
            PagingListResult<String> urls = client.listQueueURL(prefix, null, 1);
            expect(urls.getResult().size() == 1 && urls.getMarker() != null && !urls.getMarker().isEmpty(),
                "listQueueURL(prefix, null, 1) = " + urls.getResult() + " marker " + urls.getMarker());
        });
        check("queue.isQueueExist.true", () -> expect(need(queue, "queue").isQueueExist(), "isQueueExist() false"));
        check("queue.isQueueExist.false", () -> expect(!client.getQueueRef(prefix + "-missing").isQueueExist(), "isQueueExist() true"));
        check("queue.delete", () -> {
            need(queue2, "queue2").delete();
            List<String> names = queueNames(client, prefix);
            expect(!names.contains(prefix + "-q2"), "still listed: " + names);
            queue2 = null;
        });
    }

    static void messageCases() {
        check("message.send", () -> {
            Message message = new Message();
            message.setMessageBodyAsRawString("hello from the Java SDK " + prefix);
            Message putMsg = need(queue, "queue").putMessage(message);
            expect(putMsg.getMessageId() != null, "no MessageId");
            expect(putMsg.getMessageBodyMD5() != null, "no MessageBodyMD5");
            sent = putMsg;
        });
        check("message.peek", () -> {
            need(sent, "sent message");
            Message peekMsg = queue.peekMessage();
            expect(peekMsg != null, "peekMessage() returned null");
            expect(sent.getMessageId().equals(peekMsg.getMessageId()), "MessageId " + peekMsg.getMessageId() + " != " + sent.getMessageId());
            expect(("hello from the Java SDK " + prefix).equals(peekMsg.getMessageBodyAsRawString()), "body " + peekMsg.getMessageBodyAsRawString());
            expect(peekMsg.getReceiptHandle() == null, "peek returned a receipt handle");
        });
        check("message.receive", () -> {
            need(sent, "sent message");
            Message popMsg = queue.popMessage();
            expect(popMsg != null, "popMessage() returned null");
            expect(sent.getMessageId().equals(popMsg.getMessageId()), "MessageId " + popMsg.getMessageId());
            expect(("hello from the Java SDK " + prefix).equals(popMsg.getMessageBodyAsRawString()), "body " + popMsg.getMessageBodyAsRawString());
            expect(popMsg.getReceiptHandle() != null && !popMsg.getReceiptHandle().isEmpty(), "no ReceiptHandle");
            expect(Integer.valueOf(1).equals(popMsg.getDequeueCount()), "DequeueCount " + popMsg.getDequeueCount());
            received = popMsg;
        });
        check("message.changeVisibility", () -> {
            String rh = need(received, "received message").getReceiptHandle();
            String newRh = queue.changeMessageVisibilityTimeout(rh, 100);
            expect(newRh != null && !newRh.isEmpty(), "no new ReceiptHandle");
            expect(!newRh.equals(rh), "ReceiptHandle unchanged");
            changedHandle = newRh;
        });
        check("message.delete", () -> {
            queue.deleteMessage(need(changedHandle, "changed receipt handle"));
            QueueMeta m = queue.getAttributes();
            expect(Long.valueOf(0).equals(m.getActiveMessages()) && Long.valueOf(0).equals(m.getInactiveMessages()),
                "after delete: ActiveMessages " + m.getActiveMessages() + ", InactiveMessages " + m.getInactiveMessages());
        });
        check("message.userProperties", () -> {
            // As SendMessageDemo: user properties beside the body, read back as ReceiveMessageDemo prints them.
            Message message = new Message();
            message.setMessageBodyAsRawString("with properties");
            Map<String, MessagePropertyValue> userProperties = new HashMap<String, MessagePropertyValue>();
            userProperties.put("key1", new MessagePropertyValue("value1"));
            userProperties.put("key2", new MessagePropertyValue(1));
            message.setUserProperties(userProperties);
            need(queue, "queue").putMessage(message);
            Message popMsg = queue.popMessage(3);
            expect(popMsg != null, "popMessage(3) returned null");
            queue.deleteMessage(popMsg.getReceiptHandle());
            Map<String, MessagePropertyValue> got = popMsg.getUserProperties();
            expect(got != null && got.containsKey("key1") && got.containsKey("key2"), "user properties " + got);
            expect("value1".equals(got.get("key1").getStringValueByType()), "key1 = " + got.get("key1").getStringValueByType());
            expect("1".equals(got.get("key2").getStringValueByType()), "key2 = " + got.get("key2").getStringValueByType());
        });
        check("message.popEmptyReturnsNull", () -> {
            Message popMsg = need(queue, "queue").popMessage();
            expect(popMsg == null, "popMessage() on an empty queue returned " + popMsg);
        });
        check("message.longPoll.delivers", () -> {
            need(queue, "queue");
            Thread sender = new Thread(() -> {
                try {
                    Thread.sleep(1000);
                    Message m = new Message();
                    m.setMessageBodyAsRawString("late");
                    queue.putMessage(m);
                } catch (Exception e) {
                    System.out.println("# long-poll sender: " + describe(e));
                }
            });
            long t0 = System.currentTimeMillis();
            sender.start();
            Message popMsg = queue.popMessage(10);
            long ms = System.currentTimeMillis() - t0;
            sender.join();
            expect(popMsg != null, "popMessage(10) returned null after " + ms + " ms");
            queue.deleteMessage(popMsg.getReceiptHandle());
            expect("late".equals(popMsg.getMessageBodyAsRawString()), "body " + popMsg.getMessageBodyAsRawString());
            expect(ms >= 800 && ms < 8000, "answered after " + ms + " ms (message sent after 1000 ms)");
        });
        check("message.longPoll.timesOut", () -> {
            long t0 = System.currentTimeMillis();
            Message popMsg = need(queue, "queue").popMessage(2);
            long ms = System.currentTimeMillis() - t0;
            expect(popMsg == null, "popMessage(2) on an empty queue returned " + popMsg);
            expect(ms >= 1800, "empty long poll answered after " + ms + " ms, expected ~2000");
        });
    }

    static void batchCases() {
        check("batch.send", () -> {
            List<Message> msgs = new ArrayList<Message>();
            for (int i = 0; i < 5; i++) {
                Message message = new Message();
                message.setMessageBody("message_body_" + i);   // base64, as Sample.messageBatchOperators
                msgs.add(message);
            }
            List<Message> putMsgs = need(queue, "queue").batchPutMessage(msgs);
            expect(putMsgs.size() == 5, putMsgs.size() + " results");
            for (Message m : putMsgs) expect(m.getMessageId() != null && !m.isErrorMessage(), "result " + m);
            batchSent = putMsgs;
        });
        check("batch.peek", () -> {
            need(batchSent, "batch sent");
            List<Message> peeked = queue.batchPeekMessage(5);
            expect(peeked != null && peeked.size() == 5, "batchPeekMessage(5) returned " + (peeked == null ? null : peeked.size()));
            Set<String> body = new HashSet<String>();
            for (Message m : peeked) body.add(m.getMessageBodyAsString());
            for (int i = 0; i < 5; i++) expect(body.contains("message_body_" + i), "bodies " + body);
        });
        check("batch.receive", () -> {
            need(batchSent, "batch sent");
            List<Message> got = popUpTo(queue, 5, 1);
            expect(got.size() == 5, got.size() + " messages received");
            Set<String> ids = new HashSet<String>();
            for (Message m : got) {
                ids.add(m.getMessageId());
                expect(m.getReceiptHandle() != null, "no ReceiptHandle");
            }
            Set<String> want = new HashSet<String>();
            for (Message m : batchSent) want.add(m.getMessageId());
            expect(ids.equals(want), "ids " + ids + " != " + want);
            batchReceived = got;
        });
        check("batch.delete", () -> {
            List<String> handles = new ArrayList<String>();
            for (Message m : need(batchReceived, "batch received")) handles.add(m.getReceiptHandle());
            queue.batchDeleteMessage(handles);
            QueueMeta m = queue.getAttributes();
            expect(Long.valueOf(0).equals(m.getActiveMessages()) && Long.valueOf(0).equals(m.getInactiveMessages()),
                "after batch delete: ActiveMessages " + m.getActiveMessages() + ", InactiveMessages " + m.getInactiveMessages());
        });
    }

    static void errorCases() {
        expectError("error.SignatureDoesNotMatch", () -> {
            MNSClient bad = client(accessKeySecret + "-wrong");
            try {
                bad.getQueueRef(prefix + "-q").getAttributes();
            } finally {
                bad.close();
            }
        }, "SignatureDoesNotMatch");
        expectError("error.QueueNotExist", () -> client.getQueueRef(prefix + "-missing").getAttributes(), "QueueNotExist");
        expectError("error.QueueNotExist.send", () -> client.getQueueRef(prefix + "-missing").putMessage(new Message("x")), "QueueNotExist");
        expectError("error.staleReceiptHandle", () -> {
            Message m = new Message();
            m.setMessageBodyAsRawString("stale");
            need(queue, "queue").putMessage(m);
            Message popMsg = queue.popMessage(3);
            need(popMsg, "a received message");
            queue.deleteMessage(popMsg.getReceiptHandle());
            queue.deleteMessage(popMsg.getReceiptHandle());   // deleted already
        }, "MessageNotExist", "ReceiptHandleError");
        expectError("error.garbageReceiptHandle", () -> need(queue, "queue").deleteMessage("not-a-receipt-handle"),
            "ReceiptHandleError", "MessageNotExist");
        expectError("error.TopicNotExist", () -> client.getTopicRef(prefix + "-missing").getAttribute(), "TopicNotExist");
        // On a topic created for the purpose, so that the error can only be the subscription's.
        expectError("error.SubscriptionNotExist", () -> {
            TopicMeta meta = new TopicMeta();
            meta.setTopicName(prefix + "-t2");
            CloudTopic t = client.createTopic(meta);
            try {
                t.getSubscriptionAttr("missing");
            } finally {
                t.delete();
            }
        }, "SubscriptionNotExist");
    }

    static void topicCases() {
        check("topic.create", () -> {
            TopicMeta meta = new TopicMeta();
            meta.setTopicName(prefix + "-t");
            CloudTopic t = client.createTopic(meta);
            expect(t.getTopicURL() != null && t.getTopicURL().endsWith("/topics/" + prefix + "-t"), "topic URL " + t.getTopicURL());
            topic = t;
        });
        check("topic.getAttribute", () -> {
            TopicMeta m = need(topic, "topic").getAttribute();
            expect((prefix + "-t").equals(m.getTopicName()), "TopicName " + m.getTopicName());
            expect(m.getMaxMessageSize() != null && m.getMaxMessageSize() > 0, "MaximumMessageSize " + m.getMaxMessageSize());
        });
        check("topic.setAttribute", () -> {
            TopicMeta meta = new TopicMeta();
            meta.setTopicName(prefix + "-t");
            meta.setMaxMessageSize(4096L);
            need(topic, "topic").setAttribute(meta);
            TopicMeta m = topic.getAttribute();
            expect(Long.valueOf(4096L).equals(m.getMaxMessageSize()), "MaximumMessageSize after set " + m.getMaxMessageSize());
        });
        check("topic.list", () -> {
            need(topic, "topic");
            List<String> names = topicNames(client, prefix);
            expect(names.equals(Arrays.asList(prefix + "-t")), "listTopic(" + prefix + ") = " + names);
            PagingListResult<String> urls = client.listTopicURL(prefix, null, 10);
            expect(urls.getResult().size() == 1 && urls.getResult().get(0).endsWith("/topics/" + prefix + "-t"), "listTopicURL = " + urls.getResult());
        });
        check("topic.subscribeQueue", () -> {
            need(topic, "topic");
            QueueMeta qm = new QueueMeta();
            qm.setQueueName(prefix + "-sq");
            subQueue = client.createQueue(qm);
            // As SubscribeQueueDemo: the queue endpoint written out (the SDK would take region/account from the host).
            String subArn = String.format("acs:mns:%s:%s:queues/%s", region, accountId, prefix + "-sq");
            SubscriptionMeta subMeta = new SubscriptionMeta();
            subMeta.setSubscriptionName(prefix + "-sub");
            subMeta.setEndpoint(subArn);
            subMeta.setNotifyContentFormat(SubscriptionMeta.NotifyContentFormat.SIMPLIFIED);
            String subUrl = topic.subscribe(subMeta);
            expect(subUrl != null && subUrl.endsWith("/subscriptions/" + prefix + "-sub"), "subscription URL " + subUrl);
            subName = prefix + "-sub";
        });
        check("topic.getSubscriptionAttr", () -> {
            SubscriptionMeta m = need(topic, "topic").getSubscriptionAttr(need(subName, "subscription"));
            expect(String.format("acs:mns:%s:%s:queues/%s", region, accountId, prefix + "-sq").equals(m.getEndpoint()), "Endpoint " + m.getEndpoint());
            expect(m.getNotifyContentFormat() == SubscriptionMeta.NotifyContentFormat.SIMPLIFIED, "NotifyContentFormat " + m.getNotifyContentFormat());
            expect((prefix + "-t").equals(m.getTopicName()), "TopicName " + m.getTopicName());
        });
        check("topic.listSubscriptions", () -> {
            need(subName, "subscription");
            PagingListResult<String> urls = topic.listSubscriptionUrls(prefix, null, 10);
            expect(urls != null && urls.getResult().size() == 1 && urls.getResult().get(0).endsWith("/subscriptions/" + subName),
                "listSubscriptionUrls = " + (urls == null ? null : urls.getResult()));
        });
        check("topic.listSubscriptions.withMeta", () -> {
            // listSubscriptions sends x-mns-with-meta: true and reads each subscription's fields.
            need(subName, "subscription");
            PagingListResult<SubscriptionMeta> subs = topic.listSubscriptions(prefix, null, 10);
            need(subs, "a non-empty list");
            List<String> names = new ArrayList<String>();
            for (SubscriptionMeta m : subs.getResult()) names.add(m.getSubscriptionName() + " -> " + m.getEndpoint());
            String arn = String.format("acs:mns:%s:%s:queues/%s", region, accountId, prefix + "-sq");
            expect(names.equals(Arrays.asList(subName + " -> " + arn)), "listSubscriptions (name -> endpoint) = " + names);
        });
        check("topic.publish", () -> {
            // As PublishMessageDemo (msgBodyBase64Switch=false): a RawTopicMessage with user properties.
            TopicMessage msg = new RawTopicMessage();
            msg.setMessageBody("published " + prefix);
            Map<String, MessagePropertyValue> userProperties = new HashMap<String, MessagePropertyValue>();
            userProperties.put("key1", new MessagePropertyValue("value1"));
            msg.setUserProperties(userProperties);
            TopicMessage result = need(topic, "topic").publishMessage(msg);
            expect(result.getMessageId() != null, "no MessageId");
            expect(result.getMessageBodyMD5() != null, "no MessageBodyMD5");
            published = result;
        });
        check("topic.deliveredToQueue", () -> {
            need(published, "published message");
            need(subName, "subscription");
            Message popMsg = need(subQueue, "subscribed queue").popMessage(10);
            expect(popMsg != null, "nothing in the subscribed queue after 10 s");
            subQueue.deleteMessage(popMsg.getReceiptHandle());
            expect(("published " + prefix).equals(popMsg.getMessageBodyAsRawString()), "body " + popMsg.getMessageBodyAsRawString());
        });
        check("topic.unsubscribe", () -> {
            need(topic, "topic").unsubscribe(need(subName, "subscription"));
            PagingListResult<String> urls = topic.listSubscriptionUrls(prefix, null, 10);   // null when empty
            expect(urls == null || urls.getResult() == null || urls.getResult().isEmpty(), "still listed: " + (urls == null ? null : urls.getResult()));
            subName = null;
        });
        check("topic.delete", () -> {
            need(topic, "topic").delete();
            List<String> names = topicNames(client, prefix);
            expect(names.isEmpty(), "still listed: " + names);
            topic = null;
        });
    }

    static void accountCases() {
        check("account.getAttributes", () -> {
            AccountAttributes a = client.getAccountAttributes();
            expect(a != null, "null");
        });
        check("account.setAttributes", () -> {
            String before = client.getAccountAttributes().getLoggingBucket();
            AccountAttributes a = new AccountAttributes();
            a.setLoggingBucket(prefix + "-logs");
            client.setAccountAttributes(a);
            String after = client.getAccountAttributes().getLoggingBucket();
            AccountAttributes restore = new AccountAttributes();
            restore.setLoggingBucket(before == null ? "" : before);
            client.setAccountAttributes(restore);
            expect((prefix + "-logs").equals(after), "LoggingBucket after set " + after);
        });
    }

    /** Best effort: leaves nothing behind on a server that keeps its data. */
    static void cleanup() {
        for (String q : Arrays.asList(prefix + "-q", prefix + "-q2", prefix + "-sq")) {
            try { client.getQueueRef(q).delete(); } catch (Exception ignored) { }
        }
        for (String t : Arrays.asList(prefix + "-t", prefix + "-t2")) {
            try { client.getTopicRef(t).delete(); } catch (Exception ignored) { }
        }
    }
}
