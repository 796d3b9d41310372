// What the queue and topic pages share: the list page (name-prefix search, one page of resources with a
// delete per row, the pager, a create panel), the table of named resources, a resource page's head, facts
// and delete section, and the fields and ending their forms have in common.
import {
  ConfirmButton,
  ErrorBox,
  Notice,
  PageTitle,
  Pager,
  html,
  isDenied,
  useAction,
  useLoad,
  usePager,
  useState,
} from "./ui.js";

/** A LoggingEnabled attribute as the pages show it. */
export const onOff = (flag) => (flag === "True" ? "on" : "off");

/** A form's submit button, then its action's error or notice. */
export function FormEnd({ action, label }) {
  return html`<div class="actions"><button type="submit" disabled=${action.busy}>${label}</button></div>
    <${ErrorBox} error=${action.error} />
    <${Notice} text=${action.notice} />`;
}

/** The message body of a send or publish form. */
export function BodyField({ id, value, onInput }) {
  return html`<div class="field wide">
    <label for=${id}>Message body</label>
    <textarea id=${id} rows="3" required value=${value} onInput=${(e) => onInput(e.currentTarget.value)} />
  </div>`;
}

/** Removal of one row of `list` by `action`: `call(name)`, then the list again (quietly), then `notice(name)`. */
export function removal(action, list, call, notice) {
  return (name) =>
    action.run(async () => {
      await call(name);
      list.reload(true);
      return notice(name);
    });
}

/**
 * A table of named resources: a row each (`data-<kind>` holds its name) with its name linking to
 * `href(name)`, the cells `cells(item)` gives under `headings` ([label, class]), and a button that runs
 * `remove.run(name)` after an inline confirmation (`remove.label`, `remove.question(name)`).
 */
export function ResourceTable({ id, kind, caption, headings, items, nameOf, href, cells, remove }) {
  return html`<table class="list" id=${id}>
    <caption>${caption}</caption>
    <thead>
      <tr>
        <th scope="col">Name</th>
        ${headings.map(([label, className]) => html`<th scope="col" class=${className}>${label}</th>`)}
        <th scope="col"><span class="visually-hidden">Actions</span></th>
      </tr>
    </thead>
    <tbody>
      ${items.map((item) => {
        const name = nameOf(item);
        return html`<tr key=${name} ...${{ [`data-${kind}`]: name }}>
          <th scope="row"><a href=${href(name)}>${name}</a></th>
          ${cells(item)}
          <td>
            <${ConfirmButton} label=${remove.label} name=${name} question=${remove.question(name)}
              onConfirm=${() => remove.run(name)} />
          </td>
        </tr>`;
      })}
    </tbody>
  </table>`;
}

/** A name-prefix search over a paged listing: `load(search, marker)` gives the page shown. */
export function useSearch(load, deps) {
  const [prefix, setPrefix] = useState("");
  const [search, setSearch] = useState("");
  const pager = usePager();
  const list = useLoad(() => load(search, pager.marker), [...deps, search, pager.marker]);
  const submit = (e) => {
    e.preventDefault();
    pager.reset();
    setSearch(prefix);
  };
  return { prefix, setPrefix, pager, list, submit };
}

/**
 * The list page of one kind of resource (`kind` "queue" or "topic"): the search form of `found`
 * (`useSearch`; `options` before its button, `children` after it), the page of resources as a
 * ResourceTable (`table`: its headings, nameOf, href, cells, and `remove` {question, call, notice}), the
 * pager, and `create` in a panel.
 */
export function ListPage({ title, kind, found, table, options, children, create }) {
  const { list, pager } = found;
  const deleting = useAction();
  const items = list.data ? list.data.items : [];
  const noun = kind[0].toUpperCase() + kind.slice(1);
  const { question, call, notice } = table.remove;
  const remove = { label: "Delete", question, run: removal(deleting, list, call, notice) };
  return html`<section>
    <${PageTitle}>${title}<//>
    <form class="toolbar" role="search" onSubmit=${found.submit}>
      <label for=${`${kind}-prefix`}>Name prefix</label>
      <input id=${`${kind}-prefix`} type="search" value=${found.prefix}
        onInput=${(e) => found.setPrefix(e.currentTarget.value)} />
      ${options}
      <button type="submit">Search</button>
      ${children}
    </form>
    <${ErrorBox} error=${list.error || deleting.error} />
    <${Notice} text=${deleting.notice} />
    ${isDenied(list.error)
      ? null // nothing to list: the refusal above says which action this key may not do
      : html`<${ResourceTable} ...${table} id=${`${kind}-table`} kind=${kind} items=${items} remove=${remove}
          caption=${list.loading ? `Loading ${kind}s…` : `${items.length} ${kind}(s) on this page`} />
        <${Pager} pager=${pager} nextMarker=${list.data && list.data.nextMarker} label=${`${noun} pages`} />`}
    <details class="panel">
      <summary>Create a ${kind}</summary>
      ${create}
    </details>
  </section>`;
}

/** A resource page's head: the crumbs (links to the pages above), its title, and the error loading it. */
export function PageHead({ crumbs, title, error }) {
  return html`<p class="crumbs">${crumbs} /</p>
    <${PageTitle}>${title}<//>
    <${ErrorBox} error=${error} />`;
}

/** A resource's facts as a description list: [term, value, id of the value (optional)] each. */
export function Facts({ className, facts, live }) {
  return html`<dl class=${className} aria-live=${live ? "polite" : undefined}>
    ${facts.map(([term, value, id]) => html`<div><dt>${term}</dt><dd id=${id}>${value}</dd></div>`)}
  </dl>`;
}

/** A resource page's last section: `remove()` after an inline confirmation, then to the page at `back`. */
export function DeleteSection({ action, label, question, remove, navigate, back }) {
  return html`<h2>Delete</h2>
    <${ConfirmButton} label=${label} question=${question}
      onConfirm=${() => action.run(async () => (await remove(), navigate(back)))} />`;
}
