// Queues: the list (prefix search, paging, live counts), create, and a queue's page (peek, send,
// receive, delete, attributes, the last hour by minute, hourly activity).
import { HourlyChart, MinuteCharts } from "./charts.js";
import { fromBase64, toBase64 } from "./mns.js";
import { BodyField, DeleteSection, Facts, FormEnd, ListPage, PageHead, onOff, useSearch } from "./resources.js";
import { Tags } from "./tags.js";
import {
  Check,
  ErrorBox,
  Field,
  Notice,
  formatTime,
  html,
  useAction,
  useCallback,
  useForm,
  useInterval,
  useLoad,
  useState,
} from "./ui.js";

const REFRESH_MS = 5000;
const CHART_SERIES = [
  ["Sends", "sends"],
  ["Receives", "receives"],
  ["Deletes", "deletes"],
  ["Expired", "expired"],
];
// The last hour by minute (`?metrics=minutely`): each series under its CloudWatch name.
const MINUTE_SERIES = [
  ["NumberOfMessagesSent", "Sent", "count"],
  ["NumberOfMessagesReceived", "Received", "count"],
  ["NumberOfEmptyReceives", "Empty receives", "count"],
  ["NumberOfMessagesDeleted", "Deleted", "count"],
  ["NumberOfMessagesDeadLettered", "Dead-lettered", "count"],
  ["ApproximateNumberOfMessagesVisible", "Active", "gauge"],
  ["ApproximateNumberOfMessagesNotVisible", "Inactive", "gauge"],
  ["ApproximateNumberOfMessagesDelayed", "Delayed", "gauge"],
  ["ApproximateAgeOfOldestMessage", "Oldest message age (s)", "gauge"],
];
const ATTRIBUTES = [
  ["VisibilityTimeout", "Visibility timeout (s)", "1 to 43200", 30],
  ["DelaySeconds", "Delay (s)", "0 to 604800", 0],
  ["MaximumMessageSize", "Maximum message size (bytes)", "1024 to 65536", 65536],
  ["MessageRetentionPeriod", "Retention (s)", "60 to 1296000 (15 days)", 345600],
  ["PollingWaitSeconds", "Polling wait (s)", "0 to 30", 0],
];

function QueueAttributesForm({ client, name, current, onDone }) {
  const creating = name === undefined;
  const initial = {};
  for (const [key, , , fallback] of ATTRIBUTES) initial[key] = String(current ? current[key] : fallback);
  const logging = current ? current.LoggingEnabled === "True" : false;
  const form = useForm({ ...initial, QueueName: "", QueueType: "normal", logging }, async (values) => {
    const attributes = { LoggingEnabled: values.logging ? "True" : "False" };
    for (const [key] of ATTRIBUTES) attributes[key] = values[key];
    if (creating) {
      await client.queues.create(values.QueueName, { ...attributes, QueueType: values.QueueType });
      onDone(values.QueueName);
      return `Queue ${values.QueueName} created.`;
    }
    await client.queues.setAttributes(name, attributes);
    onDone(name);
    return "Attributes saved.";
  });
  const { values, set } = form;
  const prefix = creating ? "new-queue" : "queue";
  return html`<form class="grid-form" onSubmit=${form.submit}>
    ${creating &&
    html`<${Field}
      id="new-queue-name"
      label="Queue name"
      hint="Letters, digits and -, starting with a letter or digit"
      required
      value=${values.QueueName}
      onInput=${set("QueueName")}
    />`}
    ${creating &&
    html`<label for="new-queue-type">Queue type</label>
      <select id="new-queue-type" value=${values.QueueType} onChange=${(e) => form.put("QueueType")(e.currentTarget.value)}>
        <option value="normal">normal</option>
        <option value="fifo">fifo (each MessageGroupId in send order; fixed at creation)</option>
      </select>`}
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
      checked=${values.logging} onChange=${form.put("logging")} />
    <${FormEnd} action=${form.action} label=${creating ? "Create queue" : "Save attributes"} />
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
  const [limit, setLimit] = useState(20);
  const [live, setLive] = useState(true);
  const [counts, setCounts] = useState({});
  const found = useSearch((prefix, marker) => client.queues.list({ prefix, marker, limit }), [client, limit]);
  const { list, pager } = found;
  const refreshCounts = useCallback(async () => {
    if (!list.data) return;
    const answers = await Promise.all(
      list.data.items.map((q) => client.queues.get(q.QueueName).catch((error) => ({ QueueName: q.QueueName, error }))),
    );
    setCounts(Object.fromEntries(answers.map((c) => [c.QueueName, c])));
  }, [client, list.data]);
  useLoad(refreshCounts, [refreshCounts]);
  useInterval(refreshCounts, REFRESH_MS, live);
  const table = {
    headings: [
      ["Active", "num"],
      ["Inactive", "num"],
      ["Delayed", "num"],
      ["Logging"],
    ],
    nameOf: (q) => q.QueueName,
    href: (name) => `#/queues/${encodeURIComponent(name)}`,
    cells: (q) => html`<${Counts} counts=${counts[q.QueueName]} /><td>${onOff(q.LoggingEnabled)}</td>`,
    remove: {
      question: (name) => `Delete queue ${name} and its messages?`,
      call: (name) => client.queues.delete(name),
      notice: (name) => `Queue ${name} deleted.`,
    },
  };
  return html`<${ListPage} title="Queues" kind="queue" found=${found} table=${table}
    options=${html`<label for="queue-limit">Per page</label>
      <select id="queue-limit" value=${limit} onChange=${(e) => (pager.reset(), setLimit(Number(e.currentTarget.value)))}>
        ${[10, 20, 50, 100].map((n) => html`<option value=${n}>${n}</option>`)}
      </select>`}
    create=${html`<${QueueAttributesForm} client=${client} onDone=${() => list.reload(true)} />`}>
    <${Check} id="queue-live" label="Refresh counts every 5 s" checked=${live} onChange=${setLive} />
  <//>`;
}

function MessageBody({ body, decode }) {
  const decoded = decode ? fromBase64(body) : undefined;
  return html`<pre class="body">${decoded !== undefined ? decoded : body}</pre>
    ${decode && decoded === undefined ? html`<small class="muted">not base64: shown as sent</small>` : null}
    ${decoded !== undefined ? html`<small class="muted">base64-decoded</small>` : null}`;
}

// A table of messages; a received one's (`selection`: the ids chosen and `choose(id, on)`) has a box to choose
// each message, for a batch ChangeMessageVisibility, and shows when each becomes visible again.
function Messages({ title, messages, decode, onDelete, selection }) {
  if (!messages) return null;
  if (!messages.length) return html`<p class="muted">${title}: no message.</p>`;
  const all = selection && messages.every((m) => selection.chosen.has(m.MessageId));
  return html`<table class="list messages">
    <caption>${title}</caption>
    <thead>
      <tr>
        ${selection &&
        html`<th scope="col"><input type="checkbox" id="select-all" aria-label="Select every message" checked=${all}
          onChange=${(e) => messages.forEach((m) => selection.choose(m.MessageId, e.currentTarget.checked))} /></th>`}
        <th scope="col">Message id</th>
        <th scope="col">Body</th>
        <th scope="col" class="num">Priority</th>
        <th scope="col">Group</th>
        <th scope="col" class="num">Dequeues</th>
        <th scope="col">Enqueued</th>
        ${selection && html`<th scope="col">Visible again</th>`}
        ${onDelete && html`<th scope="col"><span class="visually-hidden">Actions</span></th>`}
      </tr>
    </thead>
    <tbody>
      ${messages.map(
        (m) => html`<tr key=${m.MessageId} data-message=${m.MessageId}>
          ${selection &&
          html`<td><input type="checkbox" class="choose" aria-label=${`Select message ${m.MessageId}`}
            checked=${selection.chosen.has(m.MessageId)}
            onChange=${(e) => selection.choose(m.MessageId, e.currentTarget.checked)} /></td>`}
          <td><code>${m.MessageId}</code></td>
          <td><${MessageBody} body=${m.MessageBody} decode=${decode} /></td>
          <td class="num">${m.Priority}</td>
          <td data-group=${m.MessageGroupId || ""}>${m.MessageGroupId || ""}</td>
          <td class="num">${m.DequeueCount}</td>
          <td>${formatTime(m.EnqueueTime)}</td>
          ${selection && html`<td data-visible=${m.NextVisibleTime}>${formatTime(m.NextVisibleTime)}</td>`}
          ${onDelete &&
          html`<td><button type="button" onClick=${() => onDelete(m)}>Delete message</button></td>`}
        </tr>`,
      )}
    </tbody>
  </table>`;
}

function SendForm({ client, name, fifo, onSent }) {
  const form = useForm({ body: "", delay: "0", priority: "8", group: "", base64: true }, async (values) => {
    const sent = await client.sendMessage(name, {
      body: values.base64 ? toBase64(values.body) : values.body,
      delaySeconds: values.delay,
      priority: values.priority,
      groupId: fifo ? values.group : "",
    });
    onSent();
    return `Sent message ${sent.MessageId}.`;
  });
  const { values, set } = form;
  return html`<form class="grid-form" id="send-form" onSubmit=${form.submit}>
    <${BodyField} id="send-body" value=${values.body} onInput=${form.put("body")} />
    ${fifo
      ? html`<${Field} id="send-group" label="MessageGroupId" hint="1-128 printable characters, no spaces or |"
          required value=${values.group} onInput=${set("group")} />`
      : html`<${Field} id="send-delay" label="Delay (s)" hint="0 to 604800" type="number" min="0"
            value=${values.delay} onInput=${set("delay")} />
          <${Field} id="send-priority" label="Priority" hint="1 (highest) to 16" type="number" min="1" max="16"
            value=${values.priority} onInput=${set("priority")} />`}
    <${Check} id="send-base64" label="Base64-encode the body (what the SDKs read by default)" checked=${values.base64}
      onChange=${form.put("base64")} />
    <${FormEnd} action=${form.action} label="Send message" />
  </form>`;
}

// A queue's receivers: each receives every message sent to the queue, with its own counts (README, "Multiple
// receivers"); its messages are reached as the queue `{queue}.{receiver}`.
function Receivers({ client, name, live }) {
  const receivers = useLoad(() => client.listReceivers(name), [client, name]);
  useInterval(() => receivers.reload(true), REFRESH_MS, live);
  const action = useAction();
  const form = useForm({ receiver: "", start: "" }, async (values) => {
    const startTime = values.start ? String(Math.floor(new Date(values.start).getTime() / 1000)) : "";
    await client.createReceiver(name, values.receiver, { startTime });
    receivers.reload(true);
    return `Receiver ${values.receiver} created.`;
  });
  const remove = (r) =>
    action.run(async () => {
      await client.deleteReceiver(name, r.ReceiverName);
      receivers.reload(true);
      return `Receiver ${r.ReceiverName} deleted.`;
    });
  const list = receivers.data || [];
  return html`<h2>Receivers</h2>
    <${ErrorBox} error=${receivers.error || action.error} />
    <${Notice} text=${action.notice} />
    ${list.length
      ? html`<table class="list receivers">
          <caption>Receivers (each gets every message; reach one as queue <code>${name}.name</code>)</caption>
          <thead>
            <tr>
              <th scope="col">Receiver</th>
              <th scope="col" class="num">Active</th>
              <th scope="col" class="num">Inactive</th>
              <th scope="col" class="num">Delayed</th>
              <th scope="col">Started</th>
              <th scope="col"><span class="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            ${list.map(
              (r) => html`<tr key=${r.ReceiverName} data-receiver=${r.ReceiverName}>
                <td><a href=${`#/queues/${encodeURIComponent(r.Address)}`}>${r.ReceiverName}</a></td>
                <${Counts} counts=${r} />
                <td>${formatTime(Number(r.StartTime) * 1000)}</td>
                <td><button type="button" onClick=${() => remove(r)} disabled=${action.busy}>Delete receiver</button></td>
              </tr>`,
            )}
          </tbody>
        </table>`
      : html`<p class="muted">No receiver: consumers of the queue share its messages.</p>`}
    <form class="grid-form" id="receiver-form" onSubmit=${form.submit}>
      <${Field} id="receiver-name" label="Receiver name" hint="1-64 letters, digits and -" required
        value=${form.values.receiver} onInput=${form.set("receiver")} />
      <${Field} id="receiver-start" label="Start from (optional)" hint="a time within the queue's retention; empty: now"
        type="datetime-local" value=${form.values.start} onInput=${form.set("start")} />
      <${FormEnd} action=${form.action} label="Add receiver" />
    </form>`;
}

// A batch ChangeMessageVisibility of the received messages chosen: each keeps its place in the list with its new
// receipt handle and time; a handle the queue refused (deleted since, its time over) is named with its error code.
function VisibilityForm({ client, name, received, chosen, onChanged }) {
  const form = useForm({ seconds: "0" }, async (values) => {
    const picked = received.filter((m) => chosen.has(m.MessageId));
    const results = await client.changeVisibilities(name, picked.map((m) => m.ReceiptHandle), values.seconds);
    const changed = new Map();
    const refused = [];
    results.forEach((r, i) =>
      r.ErrorCode ? refused.push(`${picked[i].MessageId} (${r.ErrorCode})`) : changed.set(picked[i].MessageId, r),
    );
    onChanged(changed);
    const done = `Visibility changed for ${changed.size} of ${picked.length} messages`;
    return refused.length ? `${done}; not changed: ${refused.join(", ")}.` : `${done}.`;
  });
  return html`<form class="toolbar" id="visibility-form" onSubmit=${form.submit}>
    <label for="visibility-seconds">Visible again in (s)</label>
    <input id="visibility-seconds" type="number" min="0" max="43200" value=${form.values.seconds}
      onInput=${form.set("seconds")} />
    <button type="submit" disabled=${!chosen.size || form.action.busy}>Change visibility of selected</button>
    <small class="muted">0 gives them back now; up to 16 at once</small>
    <${ErrorBox} error=${form.action.error} />
    <${Notice} text=${form.action.notice} />
  </form>`;
}

export function QueuePage({ client, name, navigate }) {
  const queue = useLoad(() => client.queues.get(name), [client, name]);
  const [live, setLive] = useState(true);
  const [decode, setDecode] = useState(true);
  const [peeked, setPeeked] = useState(undefined);
  const [received, setReceived] = useState(undefined);
  const [count, setCount] = useState("1");
  const [chosen, setChosen] = useState(new Set());
  const action = useAction();
  const choose = (id, on) =>
    setChosen((old) => {
      const next = new Set(old);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  const changed = (results) => {
    setReceived((list) =>
      list.map((m) => (results.has(m.MessageId) ? { ...m, ...results.get(m.MessageId) } : m)),
    );
    queue.reload(true);
  };
  useInterval(() => queue.reload(true), REFRESH_MS, live);
  const loadMetrics = useCallback((hours) => client.queues.metrics(name, hours), [client, name]);
  const loadMinutes = useCallback(() => client.queueMinutes(name), [client, name]);
  const q = queue.data;
  const peek = () =>
    action.run(async () => {
      setPeeked(await client.peekMessages(name, 16));
      queue.reload(true);
    });
  const receive = () =>
    action.run(async () => {
      setReceived(await client.receiveMessages(name, Number(count)));
      setChosen(new Set());
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
    <${PageHead} crumbs=${html`<a href="#/queues">Queues</a>`} title=${`Queue ${name}`} error=${queue.error} />
    ${q &&
    html`<${Facts} className="counts" live=${true} facts=${[
      ["Type", q.QueueType || "normal", "queue-type"],
      ["Active", q.ActiveMessages, "count-active"],
      ["Inactive", q.InactiveMessages, "count-inactive"],
      ["Delayed", q.DelayMessages, "count-delayed"],
      ...(q.QueueType === "fifo" ? [["Groups in flight", q.MessageGroupsInFlight, "count-groups"]] : []),
      ["Logging", onOff(q.LoggingEnabled)],
      ["Metrics", onOff(q.MetricsEnabled)],
      ...(q.Alarms ? [["Alarms", q.Alarms]] : []),
      ["Modified", formatTime(Number(q.LastModifyTime) * 1000)],
    ]} />`}
    <${Check} id="queue-page-live" label="Refresh counts every 5 s" checked=${live} onChange=${setLive} />

    <h2>Send a test message</h2>
    ${q && html`<${SendForm} client=${client} name=${name} fifo=${q.QueueType === "fifo"} onSent=${() => queue.reload(true)} />`}

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
        decode=${decode} onDelete=${remove} selection=${{ chosen, choose }} />
      ${received && received.length > 0 &&
      html`<${VisibilityForm} client=${client} name=${name} received=${received} chosen=${chosen} onChanged=${changed} />`}
    </div>

    ${q && q.QueueType !== "fifo" && !name.includes(".") && html`<${Receivers} client=${client} name=${name} live=${live} />`}

    <h2>Last hour by minute</h2>
    ${q && html`<${MinuteCharts} id="queue-minutes" name=${name} load=${loadMinutes} series=${MINUTE_SERIES} />`}

    <h2>Activity per hour</h2>
    ${q &&
    html`<${HourlyChart} id="queue-chart" title=${`Queue ${name}: sends, receives and deletes per hour`}
      load=${loadMetrics} logging=${q.LoggingEnabled === "True"}
      series=${CHART_SERIES} />`}

    ${q && html`<${Tags} client=${client} kind="queue" name=${name} />`}

    <h2>Attributes</h2>
    ${q && html`<${QueueAttributesForm} client=${client} name=${name} current=${q} onDone=${() => queue.reload(true)} />`}

    <${DeleteSection} action=${action} label="Delete queue" question=${`Delete queue ${name} and its messages?`}
      remove=${() => client.queues.delete(name)} navigate=${navigate} back="#/queues" />
  </section>`;
}
