// The console's shell: the access key (kept in this tab's sessionStorage only), the hash router and
// the pages. Every call goes to the MNS API of this origin, signed here with the user's key.
import { AccessPage } from "./access.js";
import { MessageHistoryPage } from "./history.js";
import { Client } from "./mns.js";
import { QueueList, QueuePage } from "./queues.js";
import { SubscriptionPage, TopicList, TopicPage } from "./topics.js";
import { Field, PageTitle, html, render, useEffect, useState } from "./ui.js";

const STORAGE_KEY = "mns-console-key";

function storedKey() {
  try {
    return JSON.parse(sessionStorage.getItem(STORAGE_KEY) || "null");
  } catch {
    return null;
  }
}

/** The local runtime offers its default key (config.json); the deployed stack serves no such file. */
async function localDefaults() {
  try {
    const response = await fetch("config.json", { cache: "no-store", credentials: "omit" });
    return response.ok ? await response.json() : null;
  } catch {
    return null;
  }
}

function KeyForm({ initial, defaults, onSave, onCancel }) {
  const start = initial || defaults || {};
  const [values, setValues] = useState({
    accessKeyId: start.accessKeyId || "",
    accessKeySecret: start.accessKeySecret || "",
    accountId: start.accountId || "",
    region: start.region || "",
  });
  const set = (key) => (e) => setValues({ ...values, [key]: e.currentTarget.value });
  const submit = (e) => {
    e.preventDefault();
    onSave({ ...values, accessKeyId: values.accessKeyId.trim() });
  };
  return html`<section class="key-form">
    <${PageTitle}>Access key<//>
    <p>
      Requests are signed in this browser with your AccessKeyId and AccessKeySecret. The key is kept in this
      tab's session storage only and is never sent: only signatures are.
    </p>
    ${defaults && html`<p class="notice">The local runtime's default key is filled in.</p>`}
    <form class="grid-form" onSubmit=${submit}>
      <${Field} id="key-id" label="AccessKeyId" required autocomplete="username" value=${values.accessKeyId}
        onInput=${set("accessKeyId")} />
      <${Field} id="key-secret" label="AccessKeySecret" type="password" required autocomplete="current-password"
        value=${values.accessKeySecret} onInput=${set("accessKeySecret")} />
      <${Field} id="key-account" label="Account id" hint="Optional: names queue endpoints of subscriptions"
        value=${values.accountId} onInput=${set("accountId")} />
      <${Field} id="key-region" label="Region" hint="Optional: as above (e.g. cn-hangzhou)" value=${values.region}
        onInput=${set("region")} />
      <div class="actions">
        <button type="submit">Use this key</button>
        ${onCancel && html`<button type="button" onClick=${onCancel}>Cancel</button>`}
      </div>
    </form>
  </section>`;
}

function parseRoute(hash) {
  const parts = hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "queues" && parts[1] && parts[2] === "messages" && parts[3]) {
    return { page: "queue-message", name: parts[1], id: parts[3] };
  }
  if (parts[0] === "queues" && parts[1]) return { page: "queue", name: parts[1] };
  if (parts[0] === "topics" && parts[1] && parts[2] === "subscriptions" && parts[3]) {
    return { page: "subscription", topic: parts[1], name: parts[3] };
  }
  if (parts[0] === "topics" && parts[1]) return { page: "topic", name: parts[1] };
  if (parts[0] === "topics") return { page: "topics" };
  if (parts[0] === "access") return { page: "access" };
  return { page: "queues" };
}

function useRoute() {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = () => setHash(location.hash);
    window.addEventListener("hashchange", changed);
    return () => window.removeEventListener("hashchange", changed);
  }, []);
  return parseRoute(hash);
}

function navigate(hash) {
  location.hash = hash;
}

function Page({ route, client, account }) {
  const common = { client, account, navigate };
  switch (route.page) {
    case "queue":
      return html`<${QueuePage} key=${`q-${route.name}`} ...${common} name=${route.name} />`;
    case "queue-message":
      return html`<${MessageHistoryPage} key=${`m-${route.name}-${route.id}`} ...${common} queue=${route.name}
        id=${route.id} />`;
    case "topics":
      return html`<${TopicList} key="topics" ...${common} />`;
    case "access":
      return html`<${AccessPage} key="access" ...${common} />`;
    case "topic":
      return html`<${TopicPage} key=${`t-${route.name}`} ...${common} name=${route.name} />`;
    case "subscription":
      return html`<${SubscriptionPage} key=${`s-${route.topic}-${route.name}`} ...${common} topic=${route.topic}
        name=${route.name} />`;
    default:
      return html`<${QueueList} key="queues" ...${common} />`;
  }
}

function App({ defaults }) {
  const [account, setAccount] = useState(storedKey());
  const [editing, setEditing] = useState(!account);
  const [client, setClient] = useState(() =>
    account ? new Client({ keyId: account.accessKeyId, secret: account.accessKeySecret }) : null,
  );
  const route = useRoute();
  const save = (values) => {
    sessionStorage.setItem(STORAGE_KEY, JSON.stringify(values));
    setAccount(values);
    setClient(new Client({ keyId: values.accessKeyId, secret: values.accessKeySecret }));
    setEditing(false);
  };
  const current = (page) => (route.page.startsWith(page) ? "page" : undefined);
  return html`<a class="skip" href="#main" onClick=${(e) => (e.preventDefault(), document.getElementById("main").focus())}>
      Skip to content
    </a>
    <header class="top">
      <a class="brand" href="#/queues">MNS console</a>
      <nav aria-label="Resources">
        <a href="#/queues" aria-current=${route.page.startsWith("queue") ? "page" : undefined}>Queues</a>
        <a href="#/topics" aria-current=${current("topic") || current("subscription")}>Topics</a>
        <a href="#/access" aria-current=${current("access")}>Access</a>
      </nav>
      <div class="who">
        ${account && html`<span>Key <code id="current-key">${account.accessKeyId}</code></span>`}
        ${account && !editing && html`<button type="button" onClick=${() => setEditing(true)}>Change key</button>`}
        ${account &&
        html`<button
          type="button"
          onClick=${() => (sessionStorage.removeItem(STORAGE_KEY), setAccount(null), setClient(null), setEditing(true))}
        >
          Forget key
        </button>`}
      </div>
    </header>
    <main id="main" tabindex="-1">
      ${editing || !client
        ? html`<${KeyForm} initial=${account} defaults=${defaults} onSave=${save}
            onCancel=${account ? () => setEditing(false) : null} />`
        : html`<${Page} route=${route} client=${client} account=${account} />`}
    </main>`;
}

localDefaults().then((defaults) => {
  const root = document.getElementById("app");
  root.textContent = "";
  render(html`<${App} defaults=${defaults} />`, root);
});
