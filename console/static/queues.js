// Queues: the list (prefix search, paging, live counts), create, and a queue's page (peek, send,
// receive, delete, attributes, hourly activity).
import { HourlyChart } from "./charts.js";
import { fromBase64, toBase64 } from "./mns.js";
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
  useInterval,
  useLoad,
  usePager,
  useState,
} from "./ui.js";

const REFRESH_MS = 5000;
const CHART_SERIES = [
  ["Sends", "sends"],
  ["Receives", "receives"],
  ["Deletes", "deletes"],
  ["Expired", "expired"],
];
const ATTRIBUTES = [
  ["VisibilityTimeout", "Visibility timeout (s)", "1 to 43200", 30],
  ["DelaySeconds", "Delay (s)", "0 to 604800", 0],
  ["MaximumMessageSize", "Maximum message size (bytes)", "1024 to 65536", 65536],
  ["MessageRetentionPeriod", "Retention (s)", "60 to 604800", 345600],
  ["PollingWaitSeconds", "Polling wait (s)", "0 to 30", 0],
];

function QueueAttributesForm({ client, name, current, onDone }) {
  const creating = name === undefined;
  const initial = {};
  for (const [key, , , fallback] of ATTRIBUTES) initial[key] = String(current ? current[key] : fallback);
  const [values, setValues] = useState({ ...initial, QueueName: "" });
  const [logging, setLogging] = useState(current ? current.LoggingEnabled === "True" : false);
  const action = useAction();
  const set = (key) => (e) => setValues({ ...values, [key]: e.currentTarget.value });
  const prefix = creating ? "new-queue" : "queue";
  const submit = (e) => {
    e.preventDefault();
    const attributes = { LoggingEnabled: logging ? "True" : "False" };
    for (const [key] of ATTRIBUTES) attributes[key] = values[key];
    action.run(async () => {
      if (creating) {
        await client.createQueue(values.QueueName, attributes);
        onDone(values.QueueName);
        return `Queue ${values.QueueName} created.`;
      }
      await client.setQueueAttributes(name, attributes);
      onDone(name);
      return "Attributes saved.";
    });
  };
  return html`<form class="grid-form" onSubmit=${submit}>
    ${creating &&
    html`<${Field}
      id="new-queue-name"
      label="Queue name"
      hint="Letters, digits and -, starting with a letter or digit"
      required
      value=${values.QueueName}
      onInput=${set("QueueName")}
    />`}
    ${ATTRIBUTES.map(
      ([key, label, hint]) =>
        html`<${Field}
          id=${`${prefix}-${key}`}
          label=${label}
          hint=${hint}
          type="number"
          value=${values[key]}
          onInput=${set(key)}
        />`,
    )}
    <${Check} id=${`${prefix}-logging`} label="LoggingEnabled (record activity for charts and analytics)"
      checked=${logging} onChange=${setLogging} />
    <div class="actions">
      <button type="submit" disabled=${action.busy}>${creating ? "Create queue" : "Save attributes"}</button>
    </div>
    <${ErrorBox} error=${action.error} />
    <${Notice} text=${action.notice} />
  </form>`;
}

function Counts({ counts }) {
  if (!counts) return html`<td colspan="3" class="muted">loading…</td>`;
  if (counts.error) return html`<td colspan="3" class="muted">${counts.error.code}</td>`;
  return html`<td class="num" data-count="active">${counts.ActiveMessages}</td>
    <td class="num" data-count="inactive">${counts.InactiveMessages}</td>
    <td class="num" data-count="delayed">${counts.DelayMessages}</td>`;
}

export function QueueList({ client }) {
  const [prefix, setPrefix] = useState("");
  const [search, setSearch] = useState("");
  const [limit, setLimit] = useState(20);
  const [live, setLive] = useState(true);
  const [counts, setCounts] = useState({});
  const pager = usePager();
  const list = useLoad(
    () => client.listQueues({ prefix: search, marker: pager.marker, limit }),
    [client, search, pager.marker, limit],
  );
  const deleting = useAction();
  const items = list.data ? list.data.items : [];
  const refreshCounts = useCallback(async () => {
    if (!list.data) return;
    const found = await Promise.all(
      list.data.items.map((q) => client.getQueue(q.QueueName).catch((error) => ({ QueueName: q.QueueName, error }))),
    );
    setCounts(Object.fromEntries(found.map((c) => [c.QueueName, c])));
  }, [client, list.data]);
  useLoad(refreshCounts, [refreshCounts]);
  useInterval(refreshCounts, REFRESH_MS, live);
  const submit = (e) => {
    e.preventDefault();
    pager.reset();
    setSearch(prefix);
  };
  return html`<section>
    <${PageTitle}>Queues<//>
    <form class="toolbar" role="search" onSubmit=${submit}>
      <label for="queue-prefix">Name prefix</label>
      <input id="queue-prefix" type="search" value=${prefix} onInput=${(e) => setPrefix(e.currentTarget.value)} />
      <label for="queue-limit">Per page</label>
      <select id="queue-limit" value=${limit} onChange=${(e) => (pager.reset(), setLimit(Number(e.currentTarget.value)))}>
        ${[10, 20, 50, 100].map((n) => html`<option value=${n}>${n}</option>`)}
      </select>
      <button type="submit">Search</button>
      <${Check} id="queue-live" label="Refresh counts every 5 s" checked=${live} onChange=${setLive} />
    </form>
    <${ErrorBox} error=${list.error || deleting.error} />
    <${Notice} text=${deleting.notice} />
    ${isDenied(list.error)
      ? null // nothing to list: the refusal above says which action this key may not do
      : html`<table class="list" id="queue-table">
        <caption>${list.loading ? "Loading queues…" : `${items.length} queue(s) on this page`}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col" class="num">Active</th>
            <th scope="col" class="num">Inactive</th>
            <th scope="col" class="num">Delayed</th>
            <th scope="col">Logging</th>
            <th scope="col"><span class="visually-hidden">Actions</span></th>
          </tr>
        </thead>
        <tbody>
          ${items.map(
            (q) => html`<tr key=${q.QueueName} data-queue=${q.QueueName}>
              <th scope="row"><a href=${`#/queues/${encodeURIComponent(q.QueueName)}`}>${q.QueueName}</a></th>
              <${Counts} counts=${counts[q.QueueName]} />
              <td>${q.LoggingEnabled === "True" ? "on" : "off"}</td>
              <td>
                <${ConfirmButton}
                  label="Delete"
                  name=${q.QueueName}
                  question=${`Delete queue ${q.QueueName} and its messages?`}
                  onConfirm=${() =>
                    deleting.run(async () => {
                      await client.deleteQueue(q.QueueName);
                      list.reload(true);
                      return `Queue ${q.QueueName} deleted.`;
                    })}
                />
              </td>
            </tr>`,
          )}
        </tbody>
      </table>
      <${Pager} pager=${pager} nextMarker=${list.data && list.data.nextMarker} label="Queue pages" />`}
    <details class="panel">
      <summary>Create a queue</summary>
      <${QueueAttributesForm} client=${client} onDone=${() => list.reload(true)} />
    </details>
  </section>`;
}

function MessageBody({ body, decode }) {
  const decoded = decode ? fromBase64(body) : undefined;
  return html`<pre class="body">${decoded !== undefined ? decoded : body}</pre>
    ${decode && decoded === undefined ? html`<small class="muted">not base64: shown as sent</small>` : null}
    ${decoded !== undefined ? html`<small class="muted">base64-decoded</small>` : null}`;
}

function Messages({ title, messages, decode, onDelete }) {
  if (!messages) return null;
  if (!messages.length) return html`<p class="muted">${title}: no message.</p>`;
  return html`<table class="list messages">
    <caption>${title}</caption>
    <thead>
      <tr>
        <th scope="col">Message id</th>
        <th scope="col">Body</th>
        <th scope="col" class="num">Priority</th>
        <th scope="col" class="num">Dequeues</th>
        <th scope="col">Enqueued</th>
        ${onDelete && html`<th scope="col"><span class="visually-hidden">Actions</span></th>`}
      </tr>
    </thead>
    <tbody>
      ${messages.map(
        (m) => html`<tr key=${m.ReceiptHandle || m.MessageId} data-message=${m.MessageId}>
          <td><code>${m.MessageId}</code></td>
          <td><${MessageBody} body=${m.MessageBody} decode=${decode} /></td>
          <td class="num">${m.Priority}</td>
          <td class="num">${m.DequeueCount}</td>
          <td>${formatTime(m.EnqueueTime)}</td>
          ${onDelete &&
          html`<td><button type="button" onClick=${() => onDelete(m)}>Delete message</button></td>`}
        </tr>`,
      )}
    </tbody>
  </table>`;
}

function SendForm({ client, name, onSent }) {
  const [body, setBody] = useState("");
  const [delay, setDelay] = useState("0");
  const [priority, setPriority] = useState("8");
  const [base64, setBase64] = useState(true);
  const action = useAction();
  const submit = (e) => {
    e.preventDefault();
    action.run(async () => {
      const sent = await client.sendMessage(name, {
        body: base64 ? toBase64(body) : body,
        delaySeconds: delay,
        priority,
      });
      onSent();
      return `Sent message ${sent.MessageId}.`;
    });
  };
  return html`<form class="grid-form" id="send-form" onSubmit=${submit}>
    <div class="field wide">
      <label for="send-body">Message body</label>
      <textarea id="send-body" rows="3" required value=${body} onInput=${(e) => setBody(e.currentTarget.value)} />
    </div>
    <${Field} id="send-delay" label="Delay (s)" hint="0 to 604800" type="number" min="0" value=${delay}
      onInput=${(e) => setDelay(e.currentTarget.value)} />
    <${Field} id="send-priority" label="Priority" hint="1 (highest) to 16" type="number" min="1" max="16"
      value=${priority} onInput=${(e) => setPriority(e.currentTarget.value)} />
    <${Check} id="send-base64" label="Base64-encode the body (what the SDKs read by default)" checked=${base64}
      onChange=${setBase64} />
    <div class="actions"><button type="submit" disabled=${action.busy}>Send message</button></div>
    <${ErrorBox} error=${action.error} />
    <${Notice} text=${action.notice} />
  </form>`;
}

export function QueuePage({ client, name, navigate }) {
  const queue = useLoad(() => client.getQueue(name), [client, name]);
  const [live, setLive] = useState(true);
  const [decode, setDecode] = useState(true);
  const [peeked, setPeeked] = useState(undefined);
  const [received, setReceived] = useState(undefined);
  const [count, setCount] = useState("1");
  const action = useAction();
  useInterval(() => queue.reload(true), REFRESH_MS, live);
  const loadMetrics = useCallback((hours) => client.queueMetrics(name, hours), [client, name]);
  const q = queue.data;
  const peek = () =>
    action.run(async () => {
      setPeeked(await client.peekMessages(name, 16));
      queue.reload(true);
    });
  const receive = () =>
    action.run(async () => {
      setReceived(await client.receiveMessages(name, Number(count)));
      queue.reload(true);
    });
  const remove = (m) =>
    action.run(async () => {
      await client.deleteMessage(name, m.ReceiptHandle);
      setReceived((list) => list.filter((r) => r.ReceiptHandle !== m.ReceiptHandle));
      queue.reload(true);
      return `Deleted message ${m.MessageId}.`;
    });
  return html`<section>
    <p class="crumbs"><a href="#/queues">Queues</a> /</p>
    <${PageTitle}>Queue ${name}<//>
    <${ErrorBox} error=${queue.error} />
    ${q &&
    html`<dl class="counts" aria-live="polite">
      <div><dt>Active</dt><dd id="count-active">${q.ActiveMessages}</dd></div>
      <div><dt>Inactive</dt><dd id="count-inactive">${q.InactiveMessages}</dd></div>
      <div><dt>Delayed</dt><dd id="count-delayed">${q.DelayMessages}</dd></div>
      <div><dt>Logging</dt><dd>${q.LoggingEnabled === "True" ? "on" : "off"}</dd></div>
      <div><dt>Modified</dt><dd>${formatTime(Number(q.LastModifyTime) * 1000)}</dd></div>
    </dl>`}
    <${Check} id="queue-page-live" label="Refresh counts every 5 s" checked=${live} onChange=${setLive} />

    <h2>Send a test message</h2>
    <${SendForm} client=${client} name=${name} onSent=${() => queue.reload(true)} />

    <h2>Messages</h2>
    <div class="toolbar">
      <button type="button" onClick=${peek} disabled=${action.busy}>Peek messages</button>
      <label for="receive-count">Receive</label>
      <select id="receive-count" value=${count} onChange=${(e) => setCount(e.currentTarget.value)}>
        ${[1, 4, 8, 16].map((n) => html`<option value=${n}>${n}</option>`)}
      </select>
      <button type="button" onClick=${receive} disabled=${action.busy}>Receive messages</button>
      <${Check} id="decode-base64" label="Decode base64 bodies" checked=${decode} onChange=${setDecode} />
    </div>
    <${ErrorBox} error=${action.error} />
    <${Notice} text=${action.notice} />
    <div id="peeked"><${Messages} title="Peeked (Active messages, left in place)" messages=${peeked} decode=${decode} /></div>
    <div id="received">
      <${Messages} title="Received (Inactive until deleted or the visibility timeout passes)" messages=${received}
        decode=${decode} onDelete=${remove} />
    </div>

    <h2>Activity per hour</h2>
    ${q &&
    html`<${HourlyChart} id="queue-chart" title=${`Queue ${name}: sends, receives and deletes per hour`}
      load=${loadMetrics} logging=${q.LoggingEnabled === "True"}
      series=${CHART_SERIES} />`}

    <h2>Attributes</h2>
    ${q && html`<${QueueAttributesForm} client=${client} name=${name} current=${q} onDone=${() => queue.reload(true)} />`}

    <h2>Delete</h2>
    <${ConfirmButton} label="Delete queue" question=${`Delete queue ${name} and its messages?`}
      onConfirm=${() => action.run(async () => (await client.deleteQueue(name), navigate("#/queues")))} />
  </section>`;
}
