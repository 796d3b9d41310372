// Push check: the SDK sample's own HTTP endpoint (com.aliyun.mns.sample.topic.subscription.HttpEndpointSubscription,
// compiled unmodified from the SDK's source mirror) receives a topic's pushes, as Sample.publishMsg() drives it:
// ep.start(), topic.subscribe(an HttpEndpoint), Base64TopicMessage publishes, topic.unsubscribe, ep.stop().
//
//   java PushCheck [V2|V4]      or      java PushCheck ENDPOINT ACCESS_KEY_ID SECRET REGION ACCOUNT_ID [V2|V4]
//   (same settings and environment as Check; V2/V4 is the signature of the SDK's own requests)
//
// The endpoint listens on a free port and is subscribed as http://127.0.0.1:{port}/notifications. The sample's
// NSHandler (registered by the sample's start() on /notifications) answers 204 when the push's signature verifies
// and 400 when not; to see that answer per push, the handler the sample registered is looked up in the sample's
// own HttpService and re-registered wrapped in a recorder (reflection on two private fields; the sample's code
// runs unchanged). What the sample prints goes to build/push-endpoint.log (path in PUSH_ENDPOINT_LOG), and the
// lines it printed while handling a push are quoted in a failure's reason.

import com.aliyun.mns.client.CloudTopic;
import com.aliyun.mns.client.MNSClient;
import com.aliyun.mns.model.Base64TopicMessage;
import com.aliyun.mns.model.SubscriptionMeta;
import com.aliyun.mns.model.TopicMessage;
import com.aliyun.mns.model.TopicMeta;
import com.aliyun.mns.sample.topic.subscription.HttpEndpointSubscription;

import org.apache.commons.codec.binary.Base64;
import org.apache.http.Header;
import org.apache.http.HttpEntityEnclosingRequest;
import org.apache.http.HttpException;
import org.apache.http.HttpRequest;
import org.apache.http.HttpResponse;
import org.apache.http.entity.BufferedHttpEntity;
import org.apache.http.message.BasicHttpRequest;
import org.apache.http.protocol.HttpContext;
import org.apache.http.protocol.HttpRequestHandler;
import org.apache.http.protocol.HttpService;
import org.apache.http.protocol.UriHttpRequestHandlerMapper;
import org.apache.http.util.EntityUtils;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.NodeList;

public class PushCheck {
    /** One request the sample endpoint handled. */
    static class Push {
        String messageId, message, uri;
        int status;
        String sampleOutput;          // what the sample printed while handling it
        String thrown;                // the sample handler's exception, if any
        Map<String, String> headers = new LinkedHashMap<String, String>();
        byte[] body;
    }

    static final Map<String, Push> firstPushByMessageId = new ConcurrentHashMap<String, Push>();
    static final List<Push> allPushes = Collections.synchronizedList(new ArrayList<Push>());

    // ------------------------------------------------------------ per-thread capture of the sample's printing
    static final ThreadLocal<ByteArrayOutputStream> capture = new ThreadLocal<ByteArrayOutputStream>();

    /** Writes to the log file, and to the current thread's capture buffer while one is open. */
    static class Tee extends OutputStream {
        final OutputStream log;
        Tee(OutputStream log) { this.log = log; }
        @Override public synchronized void write(int b) throws IOException {
            log.write(b);
            ByteArrayOutputStream c = capture.get();
            if (c != null) c.write(b);
        }
        @Override public synchronized void write(byte[] b, int off, int len) throws IOException {
            log.write(b, off, len);
            ByteArrayOutputStream c = capture.get();
            if (c != null) c.write(b, off, len);
        }
        @Override public synchronized void flush() throws IOException { log.flush(); }
    }

    /** Records the sample handler's answer to each push; the sample's handler does all the work. */
    static class Recorder implements HttpRequestHandler {
        final HttpRequestHandler sample;
        Recorder(HttpRequestHandler sample) { this.sample = sample; }

        @Override
        public void handle(HttpRequest request, HttpResponse response, HttpContext context) throws HttpException, IOException {
            Push p = new Push();
            p.uri = request.getRequestLine().getUri();
            for (Header h : request.getAllHeaders()) p.headers.put(h.getName(), h.getValue());
            if (request instanceof HttpEntityEnclosingRequest) {
                HttpEntityEnclosingRequest r = (HttpEntityEnclosingRequest) request;
                if (r.getEntity() != null) {
                    BufferedHttpEntity buffered = new BufferedHttpEntity(r.getEntity());   // the sample reads it again
                    r.setEntity(buffered);
                    p.body = EntityUtils.toByteArray(buffered);
                    parseNotification(p);
                }
            }
            capture.set(new ByteArrayOutputStream());
            try {
                sample.handle(request, response, context);
            } catch (HttpException | IOException | RuntimeException e) {
                p.thrown = e.toString();
                throw e;
            } finally {
                System.out.flush();
                System.err.flush();
                p.sampleOutput = new String(capture.get().toByteArray(), StandardCharsets.UTF_8);
                capture.remove();
                p.status = response.getStatusLine().getStatusCode();
                allPushes.add(p);
                if (p.messageId != null) firstPushByMessageId.putIfAbsent(p.messageId, p);
            }
        }
    }

    static void parseNotification(Push p) {
        try {
            DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
            Document d = f.newDocumentBuilder().parse(new ByteArrayInputStream(p.body));
            p.messageId = text(d, "MessageId");
            p.message = text(d, "Message");
        } catch (Exception e) {
            p.message = null;
        }
    }

    static String text(Document d, String tag) {
        NodeList nl = d.getElementsByTagName(tag);
        return nl.getLength() > 0 ? nl.item(0).getTextContent() : null;
    }

    /** Diagnosis only: does the push's signature verify when header names are matched case-insensitively? */
    static String caseInsensitiveVerdict(Push p) {
        try {
            Map<String, String> lower = new TreeMap<String, String>();
            for (Map.Entry<String, String> e : p.headers.entrySet()) lower.put(e.getKey().toLowerCase(Locale.ENGLISH), e.getValue());
            StringBuilder sb = new StringBuilder("POST\n");
            sb.append(lower.getOrDefault("content-md5", "")).append("\n");
            sb.append(lower.getOrDefault("content-type", "")).append("\n");
            sb.append(lower.getOrDefault("date", "")).append("\n");
            for (Map.Entry<String, String> e : lower.entrySet())
                if (e.getKey().startsWith("x-mns-")) sb.append(e.getKey()).append(":").append(e.getValue()).append("\n");
            sb.append(p.uri);
            String certUrl = new String(Base64.decodeBase64(lower.get("x-mns-signing-cert-url")), StandardCharsets.UTF_8);
            PublicKey pk;
            try (InputStream in = new URL(certUrl).openStream()) {
                pk = CertificateFactory.getInstance("X.509").generateCertificate(in).getPublicKey();
            }
            Signature s = Signature.getInstance("SHA1withRSA");
            s.initVerify(pk);
            s.update(sb.toString().getBytes(StandardCharsets.UTF_8));
            return s.verify(Base64.decodeBase64(lower.get("authorization"))) ? "verifies" : "does not verify";
        } catch (Exception e) {
            return "could not be checked (" + e + ")";
        }
    }

    static String headerNames(Push p) {
        List<String> names = new ArrayList<String>();
        for (String n : p.headers.keySet())
            if (n.equalsIgnoreCase("content-md5") || n.equalsIgnoreCase("content-type") || n.equalsIgnoreCase("date")) names.add(n);
        return String.join(", ", names);
    }

    static String sampleSaid(Push p) {
        // The sample's verdict lines (not the headers it echoes): authenticate fail, SigningCerURL..., xml tag error.
        List<String> said = new ArrayList<String>();
        for (String line : p.sampleOutput.split("\n")) {
            String l = line.trim();
            if (l.equals("authenticate fail") || l.startsWith("SigningCer") && !l.startsWith("SigningCertURL:")
                || l.equals("xml tag error") || l.startsWith("java.") || l.startsWith("Caused by")) said.add(l);
        }
        return said.isEmpty() ? "" : " (sample printed: " + String.join("; ", said) + ")";
    }

    public static void main(String[] args) throws Exception {
        Check.settings(args);
        PrintStream out = System.out;
        Check.out = out;
        String logPath = System.getenv().getOrDefault("PUSH_ENDPOINT_LOG", "push-endpoint.log");
        FileOutputStream log = new FileOutputStream(logPath);
        PrintStream tee = new PrintStream(new Tee(log), true, "UTF-8");
        System.setOut(tee);
        System.setErr(tee);

        out.println("# Java MNS SDK push check: the SDK sample's HttpEndpointSubscription, SDK requests signed "
            + Check.mode + ", " + Check.endpoint + " (its output: " + logPath + ")");
        MNSClient client = Check.client(Check.accessKeySecret);
        String prefix = "jpush" + Long.toString(System.currentTimeMillis(), 36);
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            port = s.getLocalPort();
        }
        final String subEndpoint = "http://127.0.0.1:" + port + "/notifications";
        HttpEndpointSubscription ep = new HttpEndpointSubscription(port);
        CloudTopic[] topic = new CloudTopic[1];
        String[] subName = new String[1];
        List<TopicMessage> published = new ArrayList<TopicMessage>();
        List<String> bodies = new ArrayList<String>();
        int n = 3;
        try {
            Check.check("push.endpoint.start", () -> {
                ep.start();   // the sample's start(): NSHandler on /notifications, RequestListenerThread on the port
                Thread listener = HttpEndpointSubscription.t;
                Field hsField = listener.getClass().getDeclaredField("httpService");
                hsField.setAccessible(true);
                HttpService hs = (HttpService) hsField.get(listener);
                Field mapperField = HttpService.class.getDeclaredField("handlerMapper");
                mapperField.setAccessible(true);
                UriHttpRequestHandlerMapper mapper = (UriHttpRequestHandlerMapper) mapperField.get(hs);
                HttpRequestHandler sampleHandler = mapper.lookup(new BasicHttpRequest("POST", "/notifications"));
                Check.expect(sampleHandler instanceof HttpEndpointSubscription.NSHandler, "handler on /notifications: " + sampleHandler);
                mapper.register("/notifications", new Recorder(sampleHandler));
                for (int i = 0; i < 50; i++) {   // listening?
                    try (java.net.Socket probe = new java.net.Socket("127.0.0.1", port)) { return; } catch (IOException e) { Thread.sleep(100); }
                }
                Check.fail("the sample endpoint does not listen on port " + port);
            });
            Check.check("push.subscribe", () -> {
                TopicMeta meta = new TopicMeta();
                meta.setTopicName(prefix + "-t");
                topic[0] = client.createTopic(meta);
                // As Sample.publishMsg(): an HttpEndpoint subscription, the format left to the service's default (XML).
                SubscriptionMeta subMeta = new SubscriptionMeta();
                subMeta.setSubscriptionName(prefix + "-sub");
                subMeta.setEndpoint(subEndpoint);
                String url = topic[0].subscribe(subMeta);
                Check.expect(url != null && url.endsWith("/subscriptions/" + prefix + "-sub"), "subscription URL " + url);
                subName[0] = prefix + "-sub";
                SubscriptionMeta got = topic[0].getSubscriptionAttr(subName[0]);
                Check.expect(subEndpoint.equals(got.getEndpoint()), "Endpoint " + got.getEndpoint());
                Check.expect(got.getNotifyContentFormat() == SubscriptionMeta.NotifyContentFormat.XML, "NotifyContentFormat " + got.getNotifyContentFormat());
            });
            Check.check("push.publish", () -> {
                Check.need(subName[0], "subscription");
                for (int i = 1; i <= n; i++) {
                    // As Sample.publishMsg(): Base64TopicMessage (the sample endpoint base64-decodes the Message).
                    TopicMessage msg = new Base64TopicMessage();
                    String body = "hello world! " + i + " " + System.currentTimeMillis();
                    msg.setMessageBody(body);
                    msg = topic[0].publishMessage(msg);
                    Check.expect(msg.getMessageId() != null, "no MessageId for message " + i);
                    published.add(msg);
                    bodies.add(body);
                }
            });
            long deadline = System.currentTimeMillis() + 20000;
            while (System.currentTimeMillis() < deadline) {
                boolean all = true;
                for (TopicMessage m : published) all &= firstPushByMessageId.containsKey(m.getMessageId());
                if (all) break;
                Thread.sleep(200);
            }
            for (int i = 0; i < n; i++) {
                final int k = i;
                Check.check("push." + (i + 1) + ".acceptedBySampleEndpoint", () -> {
                    Check.expect(k < published.size(), "not published");
                    Push p = firstPushByMessageId.get(published.get(k).getMessageId());
                    if (p == null) {
                        Check.fail("no push for message " + published.get(k).getMessageId() + " within 20 s ("
                            + allPushes.size() + " requests reached the endpoint)");
                    }
                    if (p.status != 204) {
                        Check.fail("the sample endpoint answered " + p.status + sampleSaid(p)
                            + (p.thrown != null ? ", handler threw " + p.thrown : "")
                            + "; headers sent: " + headerNames(p)
                            + "; the signature " + caseInsensitiveVerdict(p) + " with header names matched case-insensitively");
                    }
                    String decoded = p.message == null ? null : new String(Base64.decodeBase64(p.message), StandardCharsets.UTF_8);
                    Check.expect(bodies.get(k).equals(decoded), "accepted, but Message decodes to " + decoded);
                });
            }
        } finally {
            try {
                if (topic[0] != null && subName[0] != null) topic[0].unsubscribe(subName[0]);
            } catch (Exception ignored) { }
            try {
                if (topic[0] != null) topic[0].delete();
            } catch (Exception ignored) { }
            ep.stop();
            client.close();
        }
        out.println(Check.passed + " passed, " + Check.failed + " failed");
        out.flush();
        log.close();
        System.exit(Check.failed == 0 ? 0 : 1);
    }
}
