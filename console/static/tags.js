// A queue's or a topic's tags (kept with it; read and changed through the Mns-open OpenAPI: `openapi.js`): a table
// with a Remove button per tag, and a form that adds a tag or gives a key a new value.
import { OpenApi } from "./openapi.js";
import { ErrorBox, Field, Notice, html, useAction, useLoad, useState } from "./ui.js";

export function Tags({ client, kind, name }) {
  const api = new OpenApi(client);
  const tags = useLoad(() => api.tags(kind, name), [client, kind, name]);
  const action = useAction();
  const [key, setKey] = useState("");
  const [value, setValue] = useState("");
  const id = `${kind}-tags`;
  const add = (e) => {
    e.preventDefault();
    action.run(async () => {
      await api.tag(kind, name, key, value);
      tags.reload(true);
      setKey("");
      setValue("");
      return `Tag ${key} set.`;
    });
  };
  const remove = (tagKey) =>
    action.run(async () => {
      await api.untag(kind, name, tagKey);
      tags.reload(true);
      return `Tag ${tagKey} removed.`;
    });
  const items = tags.data || [];
  return html`<h2>Tags</h2>
    <${ErrorBox} error=${tags.error || action.error} />
    <${Notice} text=${action.notice} />
    <table id=${id}>
      <caption>${tags.loading ? "Loading tags…" : `${items.length} tag(s)`}</caption>
      <thead><tr><th scope="col">Key</th><th scope="col">Value</th><th scope="col">Remove</th></tr></thead>
      <tbody>
        ${items.map(
          (t) => html`<tr data-tag=${t.TagKey}>
            <th scope="row">${t.TagKey}</th>
            <td>${t.TagValue}</td>
            <td><button type="button" onClick=${() => remove(t.TagKey)} disabled=${action.busy}
              aria-label=${`Remove tag ${t.TagKey}`}>Remove</button></td>
          </tr>`,
        )}
      </tbody>
    </table>
    <form class="grid-form" onSubmit=${add}>
      <${Field} id=${`${id}-key`} label="Tag key" hint="1 to 128 characters, not starting with aliyun or acs:" required
        value=${key} onInput=${(e) => setKey(e.currentTarget.value)} />
      <${Field} id=${`${id}-value`} label="Tag value" hint="Up to 128 characters" value=${value}
        onInput=${(e) => setValue(e.currentTarget.value)} />
      <div class="actions"><button type="submit" disabled=${action.busy}>Set tag</button></div>
    </form>`;
}
