// A client of the MNS API for the browser: requests signed with HMAC-SHA1 (WebCrypto) over the MNS
// string to sign. Browsers may not set `Date`, so every request carries `x-mns-date`, which the
// service reads in its place (it is also one of the signed x-mns-* headers).

const NS = "http://mns.aliyuncs.com/doc/v1/";
const VERSION = "2015-06-06";
const XML_TYPE = "text/xml;charset=UTF-8";
const encoder = new TextEncoder();

export class MnsError extends Error {
  constructor(status, code, message, requestId) {
    super(message || code);
    this.status = status;
    this.code = code;
    this.requestId = requestId || "";
  }
}

export function stringToSign(method, contentMd5, contentType, date, headers, resource) {
  const mns = Object.entries(headers)
    .map(([name, value]) => [name.toLowerCase(), String(value).trim()])
    .filter(([name]) => name.startsWith("x-mns-"))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}:${value}\n`)
    .join("");
  return `${method}\n${contentMd5}\n${contentType}\n${date}\n${mns}${resource}`;
}

export async function hmacSha1(secret, text) {
  if (!globalThis.crypto || !crypto.subtle) {
    throw new MnsError(0, "InsecureContext", "Signing needs WebCrypto: open the console over https or on localhost.");
  }
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-1" }, false, [
    "sign",
  ]);
  const digest = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(text)));
  return btoa(String.fromCharCode(...digest));
}

export function escapeXml(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function xmlBody(root, fields) {
  const inner = Object.entries(fields)
    .filter(([, value]) => value !== undefined && value !== null && value !== "")
    .map(([name, value]) => `<${name}>${escapeXml(value)}</${name}>`)
    .join("");
  return `<?xml version="1.0" encoding="UTF-8"?><${root} xmlns="${NS}">${inner}</${root}>`;
}

function children(parent, name) {
  return parent ? Array.from(parent.getElementsByTagNameNS(NS, name)) : [];
}

function value(parent, name) {
  const node = children(parent, name)[0];
  return node ? node.textContent : undefined;
}

/** The direct children of `element` as {TagName: text}. */
function record(element) {
  const out = {};
  for (const child of Array.from(element.children)) out[child.localName] = child.textContent;
  return out;
}

/** Text as UTF-8 base64 (what the SDKs send by default), and back (undefined when it is not). */
export function toBase64(text) {
  return btoa(String.fromCharCode(...encoder.encode(text)));
}

export function fromBase64(text) {
  if (!text || !/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  try {
    const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

const path = (...parts) => "/" + parts.map(encodeURIComponent).join("/");

export class Client {
  constructor({ keyId, secret, base = "" }) {
    this.keyId = keyId;
    this.secret = secret;
    this.base = base;
  }

  async request(method, resource, { body = "", headers = {} } = {}) {
    const date = new Date().toUTCString();
    const mns = { "x-mns-version": VERSION, "x-mns-date": date };
    for (const [name, v] of Object.entries(headers)) mns[name.toLowerCase()] = String(v);
    const contentType = body ? XML_TYPE : "";
    const signature = await hmacSha1(this.secret, stringToSign(method, "", contentType, date, mns, resource));
    const sent = { ...mns, Authorization: `MNS ${this.keyId}:${signature}` };
    if (contentType) sent["Content-Type"] = contentType;
    let response;
    try {
      response = await fetch(this.base + resource, {
        method,
        headers: sent,
        body: body || undefined,
        cache: "no-store",
        credentials: "omit",
      });
    } catch (error) {
      throw new MnsError(0, "NetworkError", String(error.message || error));
    }
    const text = await response.text();
    const doc = text ? new DOMParser().parseFromString(text, "application/xml") : null;
    const requestId = response.headers.get("x-mns-request-id") || "";
    if (!response.ok) {
      const root = doc && doc.documentElement;
      if (root && root.localName === "Error") {
        throw new MnsError(response.status, value(root, "Code"), value(root, "Message"), value(root, "RequestId"));
      }
      throw new MnsError(response.status, `HTTP${response.status}`, text.slice(0, 200), requestId);
    }
    return { status: response.status, root: doc && doc.documentElement, requestId };
  }

  // ---- the account
  /** ListAccessKeys (`GET /?accesskeys=true`): the account's keys, a root key's call only; never secrets. */
  async listAccessKeys() {
    const { root } = await this.request("GET", "/?accesskeys=true");
    return children(root, "AccessKey").map(record);
  }

  // ---- queues
  async listQueues({ prefix = "", marker = "", limit = 20 } = {}) {
    const headers = { "x-mns-ret-number": limit, "x-mns-with-meta": "true" };
    if (prefix) headers["x-mns-prefix"] = prefix;
    if (marker) headers["x-mns-marker"] = marker;
    const { root } = await this.request("GET", "/queues", { headers });
    return { items: children(root, "Queue").map(record), nextMarker: value(root, "NextMarker") || "" };
  }

  async getQueue(name) {
    return record((await this.request("GET", path("queues", name))).root);
  }

  createQueue(name, attributes) {
    return this.request("PUT", path("queues", name), { body: xmlBody("Queue", attributes) });
  }

  setQueueAttributes(name, attributes) {
    return this.request("PUT", path("queues", name) + "?metaoverride=true", { body: xmlBody("Queue", attributes) });
  }

  deleteQueue(name) {
    return this.request("DELETE", path("queues", name));
  }

  async sendMessage(name, { body, delaySeconds, priority }) {
    const fields = { MessageBody: body, DelaySeconds: delaySeconds, Priority: priority };
    const { root } = await this.request("POST", path("queues", name, "messages"), {
      body: xmlBody("Message", fields),
    });
    return record(root);
  }

  async _messages(name, query) {
    try {
      const { root } = await this.request("GET", path("queues", name, "messages") + query);
      return children(root, "Message").map(record);
    } catch (error) {
      if (error.code === "MessageNotExist") return []; // an empty queue answers 404
      throw error;
    }
  }

  peekMessages(name, count = 16) {
    return this._messages(name, `?peekonly=true&numOfMessages=${count}`);
  }

  receiveMessages(name, count = 1) {
    return this._messages(name, `?numOfMessages=${count}&waitseconds=0`);
  }

  deleteMessage(name, receiptHandle) {
    return this.request("DELETE", path("queues", name, "messages") + `?ReceiptHandle=${encodeURIComponent(receiptHandle)}`);
  }

  async queueMetrics(name, hours = 24) {
    const { root } = await this.request("GET", path("queues", name) + `?metrics=hourly&hours=${hours}`);
    return metrics(root);
  }

  // ---- topics and subscriptions
  async listTopics({ prefix = "", marker = "", limit = 20 } = {}) {
    const headers = { "x-mns-ret-number": limit, "x-mns-with-meta": "true" };
    if (prefix) headers["x-mns-prefix"] = prefix;
    if (marker) headers["x-mns-marker"] = marker;
    const { root } = await this.request("GET", "/topics", { headers });
    return { items: children(root, "Topic").map(record), nextMarker: value(root, "NextMarker") || "" };
  }

  async getTopic(name) {
    return record((await this.request("GET", path("topics", name))).root);
  }

  createTopic(name, attributes) {
    return this.request("PUT", path("topics", name), { body: xmlBody("Topic", attributes) });
  }

  deleteTopic(name) {
    return this.request("DELETE", path("topics", name));
  }

  async publishMessage(topic, { body, tag }) {
    const fields = { MessageBody: body, MessageTag: tag };
    const { root } = await this.request("POST", path("topics", topic, "messages"), {
      body: xmlBody("Message", fields),
    });
    return record(root);
  }

  async listSubscriptions(topic, { prefix = "", marker = "", limit = 50 } = {}) {
    const headers = { "x-mns-ret-number": limit };
    if (prefix) headers["x-mns-prefix"] = prefix;
    if (marker) headers["x-mns-marker"] = marker;
    const { root } = await this.request("GET", path("topics", topic, "subscriptions"), { headers });
    return { items: children(root, "Subscription").map(record), nextMarker: value(root, "NextMarker") || "" };
  }

  async getSubscription(topic, name) {
    return record((await this.request("GET", path("topics", topic, "subscriptions", name))).root);
  }

  subscribe(topic, name, attributes) {
    return this.request("PUT", path("topics", topic, "subscriptions", name), {
      body: xmlBody("Subscription", attributes),
    });
  }

  unsubscribe(topic, name) {
    return this.request("DELETE", path("topics", topic, "subscriptions", name));
  }

  async subscriptionMetrics(topic, name, hours = 24) {
    const resource = path("topics", topic, "subscriptions", name) + `?metrics=hourly&hours=${hours}`;
    return metrics((await this.request("GET", resource)).root);
  }
}

/** `<...Metrics>`: its fields, and `Buckets` as a list of {Time, <series>...} with numbers. */
function metrics(root) {
  const out = {};
  for (const child of Array.from(root.children)) {
    if (child.localName !== "Buckets") out[child.localName] = child.textContent;
  }
  out.buckets = children(root, "Bucket").map((bucket) => {
    const row = {};
    for (const [name, text] of Object.entries(record(bucket))) row[name] = Number(text);
    return row;
  });
  return out;
}
