// Access: the account's access keys and what each may do (ListAccessKeys, answered to a root key only).
// Keys are made, rotated and given policies with `python -m admin`; no secret ever reaches the console.
import { ErrorBox, PageTitle, html, isDenied, useLoad } from "./ui.js";

/** A policy document's statements as "Allow mns:SendMessage, mns:ReceiveMessage on …" lines. */
function statements(policy) {
  try {
    const parsed = JSON.parse(policy);
    const list = (value) => (Array.isArray(value) ? value : [value]).join(", ");
    return (parsed.Statement || []).map((s) => `${s.Effect} ${list(s.Action)} on ${list(s.Resource)}`);
  } catch {
    return [];
  }
}

function pretty(policy) {
  try {
    return JSON.stringify(JSON.parse(policy), null, 2);
  } catch {
    return policy;
  }
}

function KeyRow({ accessKey, current }) {
  const root = accessKey.Root === "True";
  return html`<tr data-key=${accessKey.AccessKeyId}>
    <th scope="row">
      <code>${accessKey.AccessKeyId}</code>
      ${current && html` <span class="muted">(this key)</span>`}
    </th>
    <td>${root ? html`<span class="badge root">Root</span>` : html`<span class="badge">Policy</span>`}</td>
    <td>
      ${root
        ? html`<span class="muted">Anything in this account</span>`
        : html`<ul class="actions-list">
              ${statements(accessKey.Policy).map((line) => html`<li>${line}</li>`)}
            </ul>
            <details>
              <summary>Policy document</summary>
              <pre class="policy">${pretty(accessKey.Policy)}</pre>
            </details>`}
    </td>
  </tr>`;
}

export function AccessPage({ client }) {
  const keys = useLoad(() => client.listAccessKeys(), [client]);
  const items = keys.data || [];
  return html`<section class="access">
    <${PageTitle}>Access keys<//>
    <p>
      The keys of this account and what each may do: a root key anything in the account, any other key what
      its policy allows. Only a root key sees this list. Keys and their policies are managed with${" "}
      <code>python -m admin</code>; secrets are never shown.
    </p>
    <${ErrorBox} error=${keys.error} />
    ${isDenied(keys.error)
      ? null
      : html`<table class="list" id="key-table">
          <caption>${keys.loading ? "Loading keys…" : `${items.length} key(s)`}</caption>
          <thead>
            <tr>
              <th scope="col">AccessKeyId</th>
              <th scope="col">Kind</th>
              <th scope="col">May do</th>
            </tr>
          </thead>
          <tbody>
            ${items.map(
              (k) => html`<${KeyRow} key=${k.AccessKeyId} accessKey=${k} current=${k.AccessKeyId === client.keyId} />`,
            )}
          </tbody>
        </table>`}
  </section>`;
}
