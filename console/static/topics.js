// Topics and subscriptions: list, create, delete, subscribe (queue and HTTP endpoints), publish, and a
// subscription's deliveries and retries per hour.
import { HourlyChart } from "./charts.js";
import { toBase64 } from "./mns.js";
import {
  BodyField,
  DeleteSection,
  Facts,
  FormEnd,
  ListPage,
  PageHead,
  ResourceTable,
  onOff,
  removal,
  useSearch,
} from "./resources.js";
import { Tags } from "./tags.js";
import {
  Check,
  Choice,
  ErrorBox,
  Field,
  Notice,
  Pager,
  formatTime,
  html,
  useAction,
  useCallback,
  useForm,
  useLoad,
  usePager,
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
  const form = useForm({ name: "", size: "65536", logging: false }, async ({ name, size, logging }) => {
    await client.topics.create(name, { MaximumMessageSize: size, LoggingEnabled: logging ? "True" : "False" });
    onDone();
    return `Topic ${name} created.`;
  });
  const { values, set } = form;
  return html`<form class="grid-form" onSubmit=${form.submit}>
    <${Field} id="new-topic-name" label="Topic name" required value=${values.name} onInput=${set("name")}
      hint="Letters, digits and -, starting with a letter or digit" />
    <${Field} id="new-topic-size" label="Maximum message size (bytes)" type="number" value=${values.size}
      onInput=${set("size")} hint="1024 to 65536" />
    <${Check} id="new-topic-logging" label="LoggingEnabled (record deliveries for charts and analytics)"
      checked=${values.logging} onChange=${form.put("logging")} />
    <${FormEnd} action=${form.action} label="Create topic" />
  </form>`;
}

export function TopicList({ client }) {
  const found = useSearch((prefix, marker) => client.topics.list({ prefix, marker, limit: 20 }), [client]);
  const table = {
    headings: [["Logging"], ["Created"]],
    nameOf: (t) => t.TopicName,
    href: topicHref,
    cells: (t) => html`<td>${onOff(t.LoggingEnabled)}</td><td>${formatTime(Number(t.CreateTime) * 1000)}</td>`,
    remove: {
      question: (name) => `Delete topic ${name} and its subscriptions?`,
      call: (name) => client.topics.delete(name),
      notice: (name) => `Topic ${name} deleted.`,
    },
  };
  return html`<${ListPage} title="Topics" kind="topic" found=${found} table=${table}
    create=${html`<${CreateTopicForm} client=${client} onDone=${() => found.list.reload(true)} />`} />`;
}

/** The endpoint a subscription form names: the queue's resource name (of the key's account), or the URL. */
const endpointOf = (values, account) =>
  values.kind === "queue"
    ? `acs:mns:${account.region || "<region>"}:${account.accountId || "<account>"}:queues/${values.queue}`
    : values.url;

function SubscribeForm({ client, topic, account, onDone }) {
  const initial = { name: "", kind: "queue", queue: "", url: "http://", strategy: "BACKOFF_RETRY", format: "XML", tag: "" };
  const form = useForm(initial, async (values) => {
    await client.subscriptions(topic).create(values.name, {
      Endpoint: endpointOf(values, account),
      NotifyStrategy: values.strategy,
      NotifyContentFormat: values.format,
      FilterTag: values.tag,
    });
    onDone();
    return `Subscription ${values.name} created.`;
  });
  const { values, set, put } = form;
  return html`<form class="grid-form" onSubmit=${form.submit}>
    <${Field} id="sub-name" label="Subscription name" required value=${values.name} onInput=${set("name")} />
    <fieldset class="field">
      <legend>Endpoint</legend>
      <label><input type="radio" name="sub-kind" value="queue" checked=${values.kind === "queue"}
        onChange=${() => put("kind")("queue")} /> Queue</label>
      <label><input type="radio" name="sub-kind" value="http" checked=${values.kind === "http"}
        onChange=${() => put("kind")("http")} /> HTTP</label>
    </fieldset>
    ${values.kind === "queue"
      ? html`<${Field} id="sub-queue" label="Queue name" required value=${values.queue} onInput=${set("queue")}
          hint=${account.accountId
            ? `Endpoint: ${endpointOf(values, account)}`
            : "Set the account id and region with the key (top right)"} />`
      : html`<${Field} id="sub-url" label="HTTP endpoint URL" type="url" required value=${values.url}
          onInput=${set("url")} />`}
    <${Choice} id="sub-strategy" label="Notify strategy" value=${values.strategy} onChange=${put("strategy")}
      options=${["BACKOFF_RETRY", "EXPONENTIAL_DECAY_RETRY"]} />
    <${Choice} id="sub-format" label="Content format" value=${values.format} onChange=${put("format")}
      options=${["XML", "JSON", "SIMPLIFIED"]} />
    <${Field} id="sub-tag" label="FilterTag" hint="Optional; at most 16 characters" value=${values.tag}
      onInput=${set("tag")} />
    <${FormEnd} action=${form.action} label="Subscribe" />
  </form>`;
}

function PublishForm({ client, topic, onDone }) {
  const form = useForm({ body: "", tag: "", base64: false }, async ({ body, tag, base64 }) => {
    const sent = await client.publishMessage(topic, { body: base64 ? toBase64(body) : body, tag });
    onDone();
    return `Published message ${sent.MessageId}.`;
  });
  const { values, put } = form;
  return html`<form class="grid-form" id="publish-form" onSubmit=${form.submit}>
    <${BodyField} id="publish-body" value=${values.body} onInput=${put("body")} />
    <${Field} id="publish-tag" label="MessageTag" hint="Optional; matched against FilterTag" value=${values.tag}
      onInput=${form.set("tag")} />
    <${Check} id="publish-base64" label="Base64-encode the body" checked=${values.base64} onChange=${put("base64")} />
    <${FormEnd} action=${form.action} label="Publish message" />
  </form>`;
}

export function TopicPage({ client, account, name, navigate }) {
  const topic = useLoad(() => client.topics.get(name), [client, name]);
  const pager = usePager();
  const subscriptions = useLoad(async () => {
    const page = await client.subscriptions(name).list({ marker: pager.marker, limit: 50 });
    const names = page.items.map((s) => decodeURIComponent(s.SubscriptionURL.split("/").pop()));
    const items = await Promise.all(names.map((s) => client.subscriptions(name).get(s)));
    return { items, nextMarker: page.nextMarker };
  }, [client, name, pager.marker]);
  const action = useAction();
  const t = topic.data;
  const items = subscriptions.data ? subscriptions.data.items : [];
  return html`<section>
    <${PageHead} crumbs=${html`<a href="#/topics">Topics</a>`} title=${`Topic ${name}`} error=${topic.error} />
    ${t &&
    html`<${Facts} className="counts" facts=${[
      ["Messages", t.MessageCount],
      ["Logging", onOff(t.LoggingEnabled)],
      ["Metrics", onOff(t.MetricsEnabled)],
      ["Max size", t.MaximumMessageSize],
      ["Created", formatTime(Number(t.CreateTime) * 1000)],
    ]} />`}

    <h2>Subscriptions</h2>
    <${ErrorBox} error=${subscriptions.error || action.error} />
    <${Notice} text=${action.notice} />
    <${ResourceTable} id="subscription-table" kind="subscription" items=${items}
      caption=${subscriptions.loading ? "Loading subscriptions…" : `${items.length} subscription(s)`}
      headings=${[["Endpoint"], ["Strategy"], ["Format"], ["FilterTag"]]}
      nameOf=${(s) => s.SubscriptionName} href=${(s) => subscriptionHref(name, s)} cells=${(s) => html`
        <td><code>${s.Endpoint}</code></td>
        <td>${s.NotifyStrategy}</td>
        <td>${s.NotifyContentFormat}</td>
        <td>${s.FilterTag || ""}</td>`}
      remove=${{
        label: "Unsubscribe",
        question: (s) => `Remove subscription ${s}?`,
        run: removal(action, subscriptions, (s) => client.subscriptions(name).delete(s), (s) => `Subscription ${s} removed.`),
      }} />
    <${Pager} pager=${pager} nextMarker=${subscriptions.data && subscriptions.data.nextMarker}
      label="Subscription pages" />
    <details class="panel">
      <summary>Subscribe</summary>
      <${SubscribeForm} client=${client} topic=${name} account=${account} onDone=${() => subscriptions.reload(true)} />
    </details>

    <h2>Publish a test message</h2>
    <${PublishForm} client=${client} topic=${name} onDone=${() => topic.reload(true)} />

    ${t && html`<${Tags} client=${client} kind="topic" name=${name} />`}

    <${DeleteSection} action=${action} label="Delete topic" question=${`Delete topic ${name} and its subscriptions?`}
      remove=${() => client.topics.delete(name)} navigate=${navigate} back="#/topics" />
  </section>`;
}

export function SubscriptionPage({ client, topic, name }) {
  const subscription = useLoad(() => client.subscriptions(topic).get(name), [client, topic, name]);
  const topicInfo = useLoad(() => client.topics.get(topic), [client, topic]);
  const loadMetrics = useCallback((hours) => client.subscriptions(topic).metrics(name, hours), [client, topic, name]);
  const s = subscription.data;
  return html`<section>
    <${PageHead} crumbs=${html`<a href="#/topics">Topics</a> / <a href=${topicHref(topic)}>${topic}</a>`}
      title=${`Subscription ${name}`} error=${subscription.error} />
    ${s &&
    html`<${Facts} className="attributes" facts=${[
      ["Endpoint", html`<code>${s.Endpoint}</code>`],
      ["Notify strategy", s.NotifyStrategy],
      ["Content format", s.NotifyContentFormat],
      ["FilterTag", s.FilterTag || "(none)"],
      ["Created", formatTime(Number(s.CreateTime) * 1000)],
    ]} />`}
    <h2>Deliveries per hour</h2>
    <${HourlyChart} id="subscription-chart" title=${`Subscription ${name}: deliveries, retries and drops per hour`}
      load=${loadMetrics} logging=${topicInfo.data ? topicInfo.data.LoggingEnabled === "True" : undefined}
      series=${CHART_SERIES} />
  </section>`;
}
