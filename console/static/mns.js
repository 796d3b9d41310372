// A client of the MNS API for the browser: requests signed with HMAC-SHA1 (WebCrypto) over the MNS
// string to sign. Browsers may not set `Date`, so every request carries `x-mns-date`, which the
// service reads in its place (it is also one of the signed x-mns-* headers).

const NS = "http://mns.aliyuncs.com/doc/v1";
const VERSION = "2015-06-06";
const XML_TYPE = "text/xml;charset=UTF-8";
const WITH_META = { "x-mns-with-meta": "true" }; // list pages with each resource's attributes
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

/**
 * The named resources under one path (the queues, the topics, a topic's subscriptions), each an XML record
 * `tag`: a page of them, one of them, create, set attributes, delete, hourly metrics.
 */
class Collection {
  constructor(client, base, tag, listHeaders = {}) {
    this.client = client;
    this.base = base;
    this.tag = tag;
    this.listHeaders = listHeaders;
  }

  path(name) {
    return `${this.base}/${encodeURIComponent(name)}`;
  }

  /** One page: the resources whose names start with `prefix`, after `marker`. */
  async list({ prefix = "", marker = "", limit = 20 } = {}) {
    const headers = { "x-mns-ret-number": limit, ...this.listHeaders };
    if (prefix) headers["x-mns-prefix"] = prefix;
    if (marker) headers["x-mns-marker"] = marker;
    const { root } = await this.client.request("GET", this.base, { headers });
    return { items: children(root, this.tag).map(record), nextMarker: value(root, "NextMarker") || "" };
  }

  async get(name) {
    return record((await this.client.request("GET", this.path(name))).root);
  }

  create(name, attributes) {
    return this.client.request("PUT", this.path(name), { body: xmlBody(this.tag, attributes) });
  }

  setAttributes(name, attributes) {
    return this.client.request("PUT", this.path(name) + "?metaoverride=true", { body: xmlBody(this.tag, attributes) });
  }

  delete(name) {
    return this.client.request("DELETE", this.path(name));
  }

  async metrics(name, hours = 24) {
    return metrics((await this.client.request("GET", this.path(name) + `?metrics=hourly&hours=${hours}`)).root);
  }
}

export class Client {
  constructor({ keyId, secret, base = "" }) {
    this.keyId = keyId;
    this.secret = secret;
    this.base = base;
    this.queues = new Collection(this, "/queues", "Queue", WITH_META);
    this.topics = new Collection(this, "/topics", "Topic", WITH_META);
  }

  /** The subscriptions of `topic`. */
  subscriptions(topic) {
    return new Collection(this, path("topics", topic, "subscriptions"), "Subscription");
  }

  /**
   * A signed request; its answer's root element. A refusal is thrown as an MnsError, unless its root is `results`
   * (a batch whose entries carry each one's outcome: a batch ChangeMessageVisibility some of whose handles failed).
   */
  async request(method, resource, { body = "", headers = {}, results = "" } = {}) {
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
      if (results && root && root.localName === results) return { status: response.status, root, requestId };
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

  /** A queue's last hour by minute (`GET /queues/{q}?metrics=minutely`): counts and gauges per minute. */
  async queueMinutes(queue) {
    return metrics((await this.request("GET", path("queues", queue) + "?metrics=minutely")).root);
  }

  // ---- a queue's receivers (each receives every message of the queue: README, "Multiple receivers")
  async listReceivers(queue) {
    const { root } = await this.request("GET", path("queues", queue, "receivers"));
    return children(root, "Receiver").map(record);
  }

  createReceiver(queue, receiver, { startTime = "" } = {}) {
    const body = startTime ? xmlBody("Receiver", { StartTime: startTime }) : "";
    return this.request("PUT", path("queues", queue, "receivers", receiver), { body });
  }

  deleteReceiver(queue, receiver) {
    return this.request("DELETE", path("queues", queue, "receivers", receiver));
  }

  // ---- messages
  async sendMessage(queue, { body, delaySeconds, priority, groupId }) {
    // A FIFO queue's message names its group and takes no delay or priority of its own.
    const fields = groupId
      ? { MessageBody: body, MessageGroupId: groupId }
      : { MessageBody: body, DelaySeconds: delaySeconds, Priority: priority };
    const { root } = await this.request("POST", path("queues", queue, "messages"), {
      body: xmlBody("Message", fields),
    });
    return record(root);
  }

  async _messages(queue, query) {
    try {
      const { root } = await this.request("GET", path("queues", queue, "messages") + query);
      return children(root, "Message").map(record);
    } catch (error) {
      if (error.code === "MessageNotExist") return []; // an empty queue answers 404
      throw error;
    }
  }

  peekMessages(queue, count = 16) {
    return this._messages(queue, `?peekonly=true&numOfMessages=${count}`);
  }

  receiveMessages(queue, count = 1) {
    return this._messages(queue, `?numOfMessages=${count}&waitseconds=0`);
  }

  deleteMessage(queue, receiptHandle) {
    return this.request("DELETE", path("queues", queue, "messages") + `?ReceiptHandle=${encodeURIComponent(receiptHandle)}`);
  }

  /**
   * A batch ChangeMessageVisibility (`PUT /queues/{q}/messages`, a `<ChangeVisibilities>` body): up to 16 handles to
   * one timeout. Each handle's result, in order: its new `ReceiptHandle` and `NextVisibleTime`, or its `ErrorCode`
   * and `ErrorMessage` (beside the `ReceiptHandle` given); the others are changed whatever one's failure.
   */
  async changeVisibilities(queue, receiptHandles, seconds) {
    const handles = receiptHandles.map((h) => `<ReceiptHandle>${escapeXml(h)}</ReceiptHandle>`).join("");
    const body = xmlBody("ChangeVisibilities", { VisibilityTimeout: seconds }).replace(
      "</ChangeVisibilities>",
      `${handles}</ChangeVisibilities>`,
    );
    const { root } = await this.request("PUT", path("queues", queue, "messages"), {
      body,
      results: "ChangeVisibilities",
    });
    return children(root, "ChangeVisibility").map(record);
  }

  async publishMessage(topic, { body, tag }) {
    const fields = { MessageBody: body, MessageTag: tag };
    const { root } = await this.request("POST", path("topics", topic, "messages"), {
      body: xmlBody("Message", fields),
    });
    return record(root);
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
