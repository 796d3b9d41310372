// A client of the Mns-open OpenAPI (`POST /`, the control plane of Alibaba's current SDKs and of Terraform) for the
// browser: v1 signatures (HMAC-SHA1 keyed by the secret and "&", over the sorted, percent-encoded parameters), the
// action's parameters in a form body. The console reads and edits tags through it (the XML API has none).
import { MnsError, hmacSha1 } from "./mns.js";

const VERSION = "2022-01-19";

/** RFC 3986 percent-encoding: every byte but A-Z a-z 0-9 - _ . ~ */
export function percentEncode(text) {
  return encodeURIComponent(String(text)).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function v1StringToSign(method, params) {
  const pairs = Object.entries(params)
    .filter(([name]) => name !== "Signature")
    .map(([name, value]) => [percentEncode(name), percentEncode(value)])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join("&");
  return `${method}&%2F&${percentEncode(pairs)}`;
}

const form = (params) =>
  Object.entries(params)
    .map(([name, value]) => `${percentEncode(name)}=${percentEncode(value)}`)
    .join("&");

export class OpenApi {
  constructor({ keyId, secret, base = "" }) {
    this.keyId = keyId;
    this.secret = secret;
    this.base = base;
  }

  /** One action: its answer's `Data`, or an MnsError with the answer's `Code`. */
  async call(action, params = {}) {
    const query = {
      Action: action,
      Version: VERSION,
      Format: "JSON",
      AccessKeyId: this.keyId,
      SignatureMethod: "HMAC-SHA1",
      SignatureVersion: "1.0",
      SignatureNonce: crypto.randomUUID(),
      Timestamp: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
    };
    query.Signature = await hmacSha1(`${this.secret}&`, v1StringToSign("POST", { ...query, ...params }));
    let response;
    try {
      response = await fetch(`${this.base}/?${form(query)}`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: form(params),
        cache: "no-store",
        credentials: "omit",
      });
    } catch (error) {
      throw new MnsError(0, "NetworkError", String(error.message || error));
    }
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) throw new MnsError(response.status, answer.Code, answer.Message, answer.RequestId);
    return answer.Data;
  }

  /** The tags of a queue or a topic (`kind`: "queue" or "topic"), as [{TagKey, TagValue}]. */
  async tags(kind, name) {
    const [action, parameter] = kind === "queue" ? ["GetQueueAttributes", "QueueName"] : ["GetTopicAttributes", "TopicName"];
    return (await this.call(action, { [parameter]: name })).Tags || [];
  }

  tag(kind, name, key, value) {
    return this.call("TagResources", { ResourceType: kind, "ResourceId.1": name, "Tag.1.Key": key, "Tag.1.Value": value });
  }

  untag(kind, name, key) {
    return this.call("UntagResources", { ResourceType: kind, "ResourceId.1": name, "TagKey.1": key });
  }
}
