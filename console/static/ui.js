// Shared pieces of the console: the view library, error display, forms and small hooks.
import { h, render } from "./vendor/preact.mjs";
import { useCallback, useEffect, useRef, useState } from "./vendor/hooks.mjs";
import htm from "./vendor/htm.mjs";

export const html = htm.bind(h);
export { render, useCallback, useEffect, useRef, useState };

/** Runs `load` on mount and when `deps` change; `reload()` runs it again. */
export function useLoad(load, deps) {
  const [state, setState] = useState({ data: undefined, error: null, loading: true });
  const generation = useRef(0);
  const reload = useCallback(async (quiet = false) => {
    const mine = ++generation.current;
    if (!quiet) setState((s) => ({ ...s, loading: true }));
    try {
      const data = await load();
      if (mine === generation.current) setState({ data, error: null, loading: false });
    } catch (error) {
      if (mine === generation.current) setState((s) => ({ ...s, error, loading: false }));
    }
  }, deps);
  useEffect(() => {
    reload();
  }, [reload]);
  return { ...state, reload };
}

/** Calls `tick` every `ms` while `enabled` and the page is visible. */
export function useInterval(tick, ms, enabled = true) {
  const saved = useRef(tick);
  saved.current = tick;
  useEffect(() => {
    if (!enabled) return undefined;
    const id = setInterval(() => {
      if (document.visibilityState !== "hidden") saved.current();
    }, ms);
    return () => clearInterval(id);
  }, [ms, enabled]);
}

/** An action's state: `run(fn)` runs it, keeping its error or its notice for display. */
export function useAction() {
  const [state, setState] = useState({ busy: false, error: null, notice: "" });
  const run = useCallback(async (fn) => {
    setState({ busy: true, error: null, notice: "" });
    try {
      const notice = await fn();
      setState({ busy: false, error: null, notice: notice || "" });
      return true;
    } catch (error) {
      setState({ busy: false, error, notice: "" });
      return false;
    }
  }, []);
  return { ...state, run };
}

/**
 * A form's state: its `values` (one record), `set(key)` (an input's onInput, writing one of them), `put(key)`
 * (a handler given the value itself: a Check's or a Choice's onChange), its `action`, and `submit`, which
 * runs `work(values)` as the action (the notice it returns is shown).
 */
export function useForm(initial, work) {
  const [values, setValues] = useState(initial);
  const action = useAction();
  const put = (key) => (value) => setValues((old) => ({ ...old, [key]: value }));
  const set = (key) => (e) => put(key)(e.currentTarget.value);
  const submit = (e) => {
    e.preventDefault();
    action.run(() => work(values));
  };
  return { values, set, put, action, submit };
}

/** The action an AccessDenied names ("... to do action mns:ListQueue on resource ..."), if it names one. */
export function deniedAction(error) {
  const found = error && error.code === "AccessDenied" && /\baction (\S+)/.exec(error.message || "");
  return found ? found[1] : "";
}

export function isDenied(error) {
  return Boolean(error && error.code === "AccessDenied");
}

export function ErrorBox({ error }) {
  if (!error) return null;
  const action = deniedAction(error);
  return html`<div class=${isDenied(error) ? "error denied" : "error"} role="alert" data-action=${action || undefined}>
    <strong class="error-code">${error.code || "Error"}</strong>
    ${isDenied(error) &&
    html`<span class="denied-summary">
      ${action ? html`This key may not do <code>${action}</code>. ` : "This key may not do this. "}
      Ask an administrator of the account for a policy that allows it, or use another key.
    </span>`}
    <span class="error-message">${error.message}</span>
    ${error.requestId && html`<span class="request-id">Request id: <code>${error.requestId}</code></span>`}
  </div>`;
}

export function Notice({ text }) {
  return text ? html`<p class="notice" role="status">${text}</p>` : null;
}

/** One labelled input; `hint` is read with it. */
export function Field({ id, label, hint, ...input }) {
  const hintId = hint ? `${id}-hint` : undefined;
  return html`<div class="field">
    <label for=${id}>${label}</label>
    <input id=${id} name=${id} aria-describedby=${hintId} ...${input} />
    ${hint && html`<small id=${hintId}>${hint}</small>`}
  </div>`;
}

/** One labelled choice among `options` (each its own label and value). */
export function Choice({ id, label, value, onChange, options }) {
  return html`<div class="field">
    <label for=${id}>${label}</label>
    <select id=${id} value=${value} onChange=${(e) => onChange(e.currentTarget.value)}>
      ${options.map((option) => html`<option>${option}</option>`)}
    </select>
  </div>`;
}

export function Check({ id, label, checked, onChange }) {
  return html`<div class="field check">
    <input type="checkbox" id=${id} checked=${checked} onChange=${(e) => onChange(e.currentTarget.checked)} />
    <label for=${id}>${label}</label>
  </div>`;
}

/** A delete button that asks once more, inline (no modal dialog), with focus on the confirmation. */
export function ConfirmButton({ label, question, onConfirm, disabled, name }) {
  const [asking, setAsking] = useState(false);
  const confirm = useRef(null);
  useEffect(() => {
    if (asking && confirm.current) confirm.current.focus();
  }, [asking]);
  if (!asking) {
    const accessible = name ? `${label} ${name}` : undefined;
    return html`<button type="button" class="danger" disabled=${disabled} aria-label=${accessible}
      onClick=${() => setAsking(true)}>
      ${label}
    </button>`;
  }
  return html`<span class="confirm" role="group" aria-label=${question}>
    <span>${question}</span>
    <button type="button" class="danger" ref=${confirm} onClick=${() => (setAsking(false), onConfirm())}>
      Yes, ${label.toLowerCase()}
    </button>
    <button type="button" onClick=${() => setAsking(false)}>Cancel</button>
  </span>`;
}

/** The page's heading, focused when the page opens (so keyboard and screen-reader users start there). */
export function PageTitle({ children }) {
  const ref = useRef(null);
  useEffect(() => {
    if (ref.current) ref.current.focus();
  }, []);
  return html`<h1 tabindex="-1" ref=${ref}>${children}</h1>`;
}

export function formatTime(ms) {
  if (!ms) return "";
  const date = new Date(Number(ms));
  return date.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

/** Paging by marker: the markers of the pages seen so far, so "Previous" goes back. */
export function usePager() {
  const [markers, setMarkers] = useState([""]);
  return {
    marker: markers[markers.length - 1],
    page: markers.length,
    next: (marker) => setMarkers((m) => [...m, marker]),
    previous: () => setMarkers((m) => (m.length > 1 ? m.slice(0, -1) : m)),
    reset: () => setMarkers([""]),
  };
}

export function Pager({ pager, nextMarker, label }) {
  return html`<nav class="pager" aria-label=${label}>
    <button type="button" disabled=${pager.page === 1} onClick=${pager.previous}>Previous page</button>
    <span>Page ${pager.page}</span>
    <button type="button" disabled=${!nextMarker} onClick=${() => pager.next(nextMarker)}>Next page</button>
  </nav>`;
}
