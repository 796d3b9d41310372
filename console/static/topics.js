// Topics and subscriptions: list, create, delete, subscribe (queue and HTTP endpoints), publish, and a
// subscription's deliveries and retries per hour.
import { HourlyChart } from "./charts.js";
import { toBase64 } from "./mns.js";
import {
  Check,
  ConfirmButton,
  ErrorBox,
  isDenied,
  Field,
  Notice,
  PageTitle,
  Pager,
  formatTime,
  html,
  useAction,
  useCallback,
  useLoad,
  usePager,
  useState,
} from "./ui.js";

const CHART_SERIES = [
  ["Deliveries", "deliveries"],
  ["Retries", "retries"],
  ["Failures", "failed attempts"],
  ["Drops", "drops"],
];
const topicHref = (topic) => `#/topics/${encodeURIComponent(topic)}`;
const subscriptionHref = (topic, name) => `${topicHref(topic)}/subscriptions/${encodeURIComponent(name)}`;

function CreateTopicForm({ client, onDone }) {
  const [name, setName] = useState("");
  const [size, setSize] = useState("65536");
  const [logging, setLogging] = useState(false);
  const action = useAction();
  const submit = (e) => {
    e.preventDefault();
    action.run(async () => {
      await client.createTopic(name, { MaximumMessageSize: size, LoggingEnabled: logging ? "True" : "False" });
      onDone();
      return `Topic ${name} created.`;
    });
  };
  return html`<form class="grid-form" onSubmit=${submit}>
    <${Field} id="new-topic-name" label="Topic name" required value=${name} onInput=${(e) => setName(e.currentTarget.value)}
      hint="Letters, digits and -, starting with a letter or digit" />
    <${Field} id="new-topic-size" label="Maximum message size (bytes)" type="number" value=${size}
      onInput=${(e) => setSize(e.currentTarget.value)} hint="1024 to 65536" />
    <${Check} id="new-topic-logging" label="LoggingEnabled (record deliveries for charts and analytics)"
      checked=${logging} onChange=${setLogging} />
    <div class="actions"><button type="submit" disabled=${action.busy}>Create topic</button></div>
    <${ErrorBox} error=${action.error} />
    <${Notice} text=${action.notice} />
  </form>`;
}

export function TopicList({ client }) {
  const [prefix, setPrefix] = useState("");
  const [search, setSearch] = useState("");
  const pager = usePager();
  const list = useLoad(() => client.listTopics({ prefix: search, marker: pager.marker, limit: 20 }), [
    client,
    search,
    pager.marker,
  ]);
  const deleting = useAction();
  const items = list.data ? list.data.items : [];
  const submit = (e) => {
    e.preventDefault();
    pager.reset();
    setSearch(prefix);
  };
  return html`<section>
    <${PageTitle}>Topics<//>
    <form class="toolbar" role="search" onSubmit=${submit}>
      <label for="topic-prefix">Name prefix</label>
      <input id="topic-prefix" type="search" value=${prefix} onInput=${(e) => setPrefix(e.currentTarget.value)} />
      <button type="submit">Search</button>
    </form>
    <${ErrorBox} error=${list.error || deleting.error} />
    <${Notice} text=${deleting.notice} />
    ${isDenied(list.error)
      ? null // nothing to list: the refusal above says which action this key may not do
      : html`<table class="list" id="topic-table">
        <caption>${list.loading ? "Loading topics…" : `${items.length} topic(s) on this page`}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Logging</th>
            <th scope="col">Created</th>
            <th scope="col"><span class="visually-hidden">Actions</span></th>
          </tr>
        </thead>
        <tbody>
          ${items.map(
            (t) => html`<tr key=${t.TopicName} data-topic=${t.TopicName}>
              <th scope="row"><a href=${topicHref(t.TopicName)}>${t.TopicName}</a></th>
              <td>${t.LoggingEnabled === "True" ? "on" : "off"}</td>
              <td>${formatTime(Number(t.CreateTime) * 1000)}</td>
              <td>
                <${ConfirmButton} label="Delete" name=${t.TopicName}
                  question=${`Delete topic ${t.TopicName} and its subscriptions?`}
                  onConfirm=${() =>
                    deleting.run(async () => {
                      await client.deleteTopic(t.TopicName);
                      list.reload(true);
                      return `Topic ${t.TopicName} deleted.`;
                    })} />
              </td>
            </tr>`,
          )}
        </tbody>
      </table>
      <${Pager} pager=${pager} nextMarker=${list.data && list.data.nextMarker} label="Topic pages" />`}
    <details class="panel">
      <summary>Create a topic</summary>
      <${CreateTopicForm} client=${client} onDone=${() => list.reload(true)} />
    </details>
  </section>`;
}

function SubscribeForm({ client, topic, account, onDone }) {
  const [name, setName] = useState("");
  const [kind, setKind] = useState("queue");
  const [queue, setQueue] = useState("");
  const [url, setUrl] = useState("http://");
  const [strategy, setStrategy] = useState("BACKOFF_RETRY");
  const [format, setFormat] = useState("XML");
  const [tag, setTag] = useState("");
  const action = useAction();
  const endpoint =
    kind === "queue" ? `acs:mns:${account.region || "<region>"}:${account.accountId || "<account>"}:queues/${queue}` : url;
  const submit = (e) => {
    e.preventDefault();
    action.run(async () => {
      await client.subscribe(topic, name, {
        Endpoint: endpoint,
        NotifyStrategy: strategy,
        NotifyContentFormat: format,
        FilterTag: tag,
      });
      onDone();
      return `Subscription ${name} created.`;
    });
  };
  return html`<form class="grid-form" onSubmit=${submit}>
    <${Field} id="sub-name" label="Subscription name" required value=${name} onInput=${(e) => setName(e.currentTarget.value)} />
    <fieldset class="field">
      <legend>Endpoint</legend>
      <label><input type="radio" name="sub-kind" value="queue" checked=${kind === "queue"}
        onChange=${() => setKind("queue")} /> Queue</label>
      <label><input type="radio" name="sub-kind" value="http" checked=${kind === "http"}
        onChange=${() => setKind("http")} /> HTTP</label>
    </fieldset>
    ${kind === "queue"
      ? html`<${Field} id="sub-queue" label="Queue name" required value=${queue}
          onInput=${(e) => setQueue(e.currentTarget.value)}
          hint=${account.accountId ? `Endpoint: ${endpoint}` : "Set the account id and region with the key (top right)"} />`
      : html`<${Field} id="sub-url" label="HTTP endpoint URL" type="url" required value=${url}
          onInput=${(e) => setUrl(e.currentTarget.value)} />`}
    <div class="field">
      <label for="sub-strategy">Notify strategy</label>
      <select id="sub-strategy" value=${strategy} onChange=${(e) => setStrategy(e.currentTarget.value)}>
        <option>BACKOFF_RETRY</option>
        <option>EXPONENTIAL_DECAY_RETRY</option>
      </select>
    </div>
    <div class="field">
      <label for="sub-format">Content format</label>
      <select id="sub-format" value=${format} onChange=${(e) => setFormat(e.currentTarget.value)}>
        <option>XML</option>
        <option>JSON</option>
        <option>SIMPLIFIED</option>
      </select>
    </div>
    <${Field} id="sub-tag" label="FilterTag" hint="Optional; at most 16 characters" value=${tag}
      onInput=${(e) => setTag(e.currentTarget.value)} />
    <div class="actions"><button type="submit" disabled=${action.busy}>Subscribe</button></div>
    <${ErrorBox} error=${action.error} />
    <${Notice} text=${action.notice} />
  </form>`;
}

function PublishForm({ client, topic, onDone }) {
  const [body, setBody] = useState("");
  const [tag, setTag] = useState("");
  const [base64, setBase64] = useState(false);
  const action = useAction();
  const submit = (e) => {
    e.preventDefault();
    action.run(async () => {
      const sent = await client.publishMessage(topic, { body: base64 ? toBase64(body) : body, tag });
      onDone();
      return `Published message ${sent.MessageId}.`;
    });
  };
  return html`<form class="grid-form" id="publish-form" onSubmit=${submit}>
    <div class="field wide">
      <label for="publish-body">Message body</label>
      <textarea id="publish-body" rows="3" required value=${body} onInput=${(e) => setBody(e.currentTarget.value)} />
    </div>
    <${Field} id="publish-tag" label="MessageTag" hint="Optional; matched against FilterTag" value=${tag}
      onInput=${(e) => setTag(e.currentTarget.value)} />
    <${Check} id="publish-base64" label="Base64-encode the body" checked=${base64} onChange=${setBase64} />
    <div class="actions"><button type="submit" disabled=${action.busy}>Publish message</button></div>
    <${ErrorBox} error=${action.error} />
    <${Notice} text=${action.notice} />
  </form>`;
}

export function TopicPage({ client, account, name, navigate }) {
  const topic = useLoad(() => client.getTopic(name), [client, name]);
  const pager = usePager();
  const subscriptions = useLoad(async () => {
    const page = await client.listSubscriptions(name, { marker: pager.marker, limit: 50 });
    const names = page.items.map((s) => decodeURIComponent(s.SubscriptionURL.split("/").pop()));
    const items = await Promise.all(names.map((s) => client.getSubscription(name, s)));
    return { items, nextMarker: page.nextMarker };
  }, [client, name, pager.marker]);
  const action = useAction();
  const t = topic.data;
  const items = subscriptions.data ? subscriptions.data.items : [];
  return html`<section>
    <p class="crumbs"><a href="#/topics">Topics</a> /</p>
    <${PageTitle}>Topic ${name}<//>
    <${ErrorBox} error=${topic.error} />
    ${t &&
    html`<dl class="counts">
      <div><dt>Messages</dt><dd>${t.MessageCount}</dd></div>
      <div><dt>Logging</dt><dd>${t.LoggingEnabled === "True" ? "on" : "off"}</dd></div>
      <div><dt>Max size</dt><dd>${t.MaximumMessageSize}</dd></div>
      <div><dt>Created</dt><dd>${formatTime(Number(t.CreateTime) * 1000)}</dd></div>
    </dl>`}

    <h2>Subscriptions</h2>
    <${ErrorBox} error=${subscriptions.error || action.error} />
    <${Notice} text=${action.notice} />
    <table class="list" id="subscription-table">
      <caption>${subscriptions.loading ? "Loading subscriptions…" : `${items.length} subscription(s)`}</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Endpoint</th>
          <th scope="col">Strategy</th>
          <th scope="col">Format</th>
          <th scope="col">FilterTag</th>
          <th scope="col"><span class="visually-hidden">Actions</span></th>
        </tr>
      </thead>
      <tbody>
        ${items.map(
          (s) => html`<tr key=${s.SubscriptionName} data-subscription=${s.SubscriptionName}>
            <th scope="row"><a href=${subscriptionHref(name, s.SubscriptionName)}>${s.SubscriptionName}</a></th>
            <td><code>${s.Endpoint}</code></td>
            <td>${s.NotifyStrategy}</td>
            <td>${s.NotifyContentFormat}</td>
            <td>${s.FilterTag || ""}</td>
            <td>
              <${ConfirmButton} label="Unsubscribe" name=${s.SubscriptionName}
                question=${`Remove subscription ${s.SubscriptionName}?`}
                onConfirm=${() =>
                  action.run(async () => {
                    await client.unsubscribe(name, s.SubscriptionName);
                    subscriptions.reload(true);
                    return `Subscription ${s.SubscriptionName} removed.`;
                  })} />
            </td>
          </tr>`,
        )}
      </tbody>
    </table>
    <${Pager} pager=${pager} nextMarker=${subscriptions.data && subscriptions.data.nextMarker}
      label="Subscription pages" />
    <details class="panel">
      <summary>Subscribe</summary>
      <${SubscribeForm} client=${client} topic=${name} account=${account} onDone=${() => subscriptions.reload(true)} />
    </details>

    <h2>Publish a test message</h2>
    <${PublishForm} client=${client} topic=${name} onDone=${() => topic.reload(true)} />

    <h2>Delete</h2>
    <${ConfirmButton} label="Delete topic" question=${`Delete topic ${name} and its subscriptions?`}
      onConfirm=${() => action.run(async () => (await client.deleteTopic(name), navigate("#/topics")))} />
  </section>`;
}

export function SubscriptionPage({ client, topic, name }) {
  const subscription = useLoad(() => client.getSubscription(topic, name), [client, topic, name]);
  const topicInfo = useLoad(() => client.getTopic(topic), [client, topic]);
  const loadMetrics = useCallback((hours) => client.subscriptionMetrics(topic, name, hours), [client, topic, name]);
  const s = subscription.data;
  return html`<section>
    <p class="crumbs"><a href="#/topics">Topics</a> / <a href=${topicHref(topic)}>${topic}</a> /</p>
    <${PageTitle}>Subscription ${name}<//>
    <${ErrorBox} error=${subscription.error} />
    ${s &&
    html`<dl class="attributes">
      <div><dt>Endpoint</dt><dd><code>${s.Endpoint}</code></dd></div>
      <div><dt>Notify strategy</dt><dd>${s.NotifyStrategy}</dd></div>
      <div><dt>Content format</dt><dd>${s.NotifyContentFormat}</dd></div>
      <div><dt>FilterTag</dt><dd>${s.FilterTag || "(none)"}</dd></div>
      <div><dt>Created</dt><dd>${formatTime(Number(s.CreateTime) * 1000)}</dd></div>
    </dl>`}
    <h2>Deliveries per hour</h2>
    <${HourlyChart} id="subscription-chart" title=${`Subscription ${name}: deliveries, retries and drops per hour`}
      load=${loadMetrics} logging=${topicInfo.data ? topicInfo.data.LoggingEnabled === "True" : undefined}
      series=${CHART_SERIES} />
  </section>`;
}
