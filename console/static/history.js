// A message's history by its id (`#/queues/{q}/messages/{id}`): what the operation log of a LoggingEnabled queue
// recorded of one message, oldest first, with each event's time, kind, key and dequeue count.
import { Facts, PageHead, onOff } from "./resources.js";
import { Field, formatTime, html, useLoad, useState } from "./ui.js";

// Each kind of event as the page names it.
const KINDS = {
  send: "Sent",
  receive: "Received",
  change_visibility: "Visibility changed",
  delete: "Deleted",
  dead_letter: "Dead-lettered",
  redrive: "Redriven",
  rewind: "Rewound",
  expire: "Expired",
  publish: "Published",
  push: "Pushed",
  drop: "Dropped",
};

// What a refusal means here (the codes of docs/analytics.md, "A message's history").
const EXPLAINED = {
  LoggingNotEnabled: "This queue does not log its messages' events: turn LoggingEnabled on to record them from now on.",
  MessageHistoryExpired: "This message is older than the operation log keeps (7 days): its history aged out.",
  MessageHistoryNotExist: "The operation log holds no event of this message id in its window: check the id.",
};

/** An event's time to the millisecond (events of one message often share a second). */
function exactTime(ms) {
  return new Date(Number(ms)).toISOString().replace("T", " ").replace("Z", " UTC");
}

/** Whether a visibility change gave the message back (receivable at once). */
function givenBack(event) {
  return event.Kind === "change_visibility" && Number(event.NextVisibleTime) <= Number(event.Time);
}

function details(event) {
  const parts = [];
  if (event.NextVisibleTime && !givenBack(event)) parts.push(`hidden until ${exactTime(event.NextVisibleTime)}`);
  if (event.TargetQueue) parts.push(`to ${event.TargetQueue} as ${event.TargetMessageId || "?"}`);
  if (event.Kind === "send" && event.BodySize) parts.push(`${event.BodySize} bytes, priority ${event.Priority}`);
  if (event.Kind === "send" && Number(event.DelaySeconds) > 0) parts.push(`delayed ${event.DelaySeconds} s`);
  if (event.SubscriptionName) parts.push(`subscription ${event.SubscriptionName}`);
  if (event.Attempt) parts.push(`attempt ${event.Attempt}: ${event.Outcome || ""} ${event.Status || ""}`.trim());
  return parts.join("; ");
}

/** Look up a message of `queue` by its id (on the queue's page): goes to its history page. */
export function HistoryLookup({ queue, navigate }) {
  const [id, setId] = useState("");
  const submit = (e) => {
    e.preventDefault();
    const wanted = id.trim();
    if (wanted) navigate(`#/queues/${encodeURIComponent(queue)}/messages/${encodeURIComponent(wanted)}`);
  };
  return html`<form class="grid-form" id="history-form" onSubmit=${submit}>
    <${Field} id="history-id" label="Message id" hint="Its events while the queue logged them (LoggingEnabled)"
      required value=${id} onInput=${(e) => setId(e.currentTarget.value)} />
    <div class="actions"><button type="submit">Show history</button></div>
  </form>`;
}

export function MessageHistoryPage({ client, queue, id }) {
  const history = useLoad(() => client.messageHistory(queue, id), [client, queue, id]);
  const found = history.data;
  const error = history.error;
  const queueLink = html`<a href="#/queues">Queues</a> / <a href=${`#/queues/${encodeURIComponent(queue)}`}>${queue}</a>`;
  return html`<section>
    <${PageHead} crumbs=${queueLink} title=${`Message ${id}`} error=${error} />
    ${error && EXPLAINED[error.code] && html`<p class="explained" id="history-explained">${EXPLAINED[error.code]}</p>`}
    ${history.loading && !found && html`<p class="muted">loading…</p>`}
    ${found &&
    html`<${Facts} className="counts" facts=${[
      ["Queue", found.QueueName],
      ["Events", found.events.length, "history-count"],
      ["Logging now", onOff(found.LoggingEnabled)],
      ["Log keeps", `${Math.round(Number(found.LogRetentionPeriod) / 86400)} days (since ${formatTime(found.Since)})`],
      ...(found.Truncated === "True" ? [["Truncated", "the first events only"]] : []),
    ]} />
      <table class="list history" id="history">
        <caption>Events of message <code>${id}</code>, oldest first</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Event</th>
            <th scope="col">Key</th>
            <th scope="col" class="num">Dequeue count</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          ${found.events.map(
            (e, n) => html`<tr key=${n} data-kind=${e.Kind}>
              <td>${exactTime(e.Time)}</td>
              <td>${givenBack(e) ? "Given back" : KINDS[e.Kind] || e.Kind} <small class="muted">${e.Kind}</small></td>
              <td>${e.AccessKeyId ? html`<code>${e.AccessKeyId}</code>` : html`<span class="muted">—</span>`}</td>
              <td class="num">${e.DequeueCount}</td>
              <td>${details(e)}</td>
            </tr>`,
          )}
        </tbody>
      </table>`}
  </section>`;
}
