// Activity charts (uPlot, loaded by index.html as the global `uPlot`), from the metrics extension of
// GetQueueAttributes / GetSubscriptionAttributes: hourly (`?metrics=hourly`, from the operation log) and a
// queue's last hour by minute (`?metrics=minutely`).
import { ErrorBox, formatTime, html, useEffect, useInterval, useLoad, useRef, useState } from "./ui.js";

const COLORS = ["#1f6feb", "#2da44e", "#cf222e", "#bf8700", "#8250df"];
const MINUTE_REFRESH_MS = 60000;

/** Draws `options` + `data` in `box` (its width, at least `minWidth`), labelled `title`; returns the cleanup. */
function mount(box, title, options, data, minWidth, height) {
  const width = () => Math.max(minWidth, box.clientWidth);
  const plot = new globalThis.uPlot({ ...options, width: width(), height }, data, box);
  const canvas = box.querySelector("canvas");
  if (canvas) {
    canvas.setAttribute("role", "img");
    canvas.setAttribute("aria-label", title);
  }
  const resize = () => plot.setSize({ width: width(), height });
  window.addEventListener("resize", resize);
  return () => {
    window.removeEventListener("resize", resize);
    plot.destroy();
  };
}

function Plot({ title, buckets, series }) {
  const box = useRef(null);
  useEffect(() => {
    if (!box.current || !globalThis.uPlot) return undefined;
    // Each hour's count holds from its start to the next hour's (a step after each point); a last point at the
    // end of the current hour gives that hour its width too.
    const end = buckets.length ? buckets[buckets.length - 1].Time + 3600 : 0;
    const column = (key) => [...buckets.map((b) => b[key] || 0), buckets.length ? buckets[buckets.length - 1][key] || 0 : 0];
    const data = [[...buckets.map((b) => b.Time), end], ...series.map(([key]) => column(key))];
    const options = {
      scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max(1, max)] } },
      axes: [{}, { label: "per hour" }],
      legend: { live: false },
      series: [
        {},
        ...series.map(([key, label], i) => ({
          label,
          stroke: COLORS[i % COLORS.length],
          width: 2,
          points: { show: true, size: 5 },
          paths: globalThis.uPlot.paths.stepped({ align: 1 }),
        })),
      ],
    };
    return mount(box.current, title, options, data, 320, 240);
  }, [buckets, series]);
  return html`<div class="plot" ref=${box}></div>`;
}

/** A chart of `load()`'s hourly buckets; `series` is [[field, label], ...]. */
export function HourlyChart({ id, title, load, series, logging }) {
  const [hours, setHours] = useState(24);
  const metrics = useLoad(() => load(hours), [hours, load]);
  const buckets = metrics.data ? metrics.data.buckets : [];
  const totals = series.map(([key, label]) => `${label} ${buckets.reduce((sum, b) => sum + (b[key] || 0), 0)}`);
  return html`<figure class="chart" id=${id}>
    <div class="chart-controls">
      <label for=${`${id}-hours`}>Window</label>
      <select id=${`${id}-hours`} value=${hours} onChange=${(e) => setHours(Number(e.currentTarget.value))}>
        <option value="6">6 hours</option>
        <option value="24">24 hours</option>
        <option value="72">3 days</option>
        <option value="168">7 days</option>
      </select>
      <button type="button" onClick=${() => metrics.reload()}>Refresh chart</button>
    </div>
    ${logging === false &&
    html`<p class="hint">LoggingEnabled is off: new activity is not recorded (the operation log keeps 7 days).</p>`}
    <${ErrorBox} error=${metrics.error} />
    ${metrics.data && html`<${Plot} title=${title} buckets=${buckets} series=${series} />`}
    <figcaption>
      ${title}, last ${hours} hours: <span class="totals">${totals.join(", ")}</span>
      ${metrics.data && metrics.data.Truncated === "True" && html` (partial: the read limit was reached)`}
    </figcaption>
  </figure>`;
}

const utcMinute = (seconds) => new Date(seconds * 1000).toISOString().slice(11, 16);
const GROUPS = [
  ["count", "Counted in each minute"],
  ["gauge", "Read in each minute (the last reading)"],
];

/** One series of the last hour, a bar (a count) or a step (a gauge) per minute. */
function MinutePlot({ title, buckets, field, gauge, color }) {
  const box = useRef(null);
  useEffect(() => {
    if (!box.current || !globalThis.uPlot || !buckets.length) return undefined;
    const times = buckets.map((b) => b.Time);
    const values = buckets.map((b) => b[field] || 0);
    const end = times[times.length - 1] + 60;
    const paths = gauge
      ? globalThis.uPlot.paths.stepped({ align: 1 })
      : globalThis.uPlot.paths.bars({ size: [0.8, 16], align: 1 });
    const options = {
      scales: { x: { time: true, range: () => [times[0], end] }, y: { range: (u, min, max) => [0, Math.max(1, max)] } },
      axes: [{ space: 60, values: (u, splits) => splits.map(utcMinute) }, { size: 40 }],
      legend: { show: false },
      cursor: { show: false },
      series: [{}, { label: title, stroke: color, fill: `${color}55`, width: gauge ? 2 : 1, paths, points: { show: false } }],
    };
    return mount(box.current, title, options, [[...times, end], [...values, values[values.length - 1]]], 200, 120);
  }, [buckets, field, gauge, color, title]);
  return html`<div class="plot" ref=${box}></div>`;
}

/**
 * A queue's last hour by minute, `load()`'s buckets: a small chart per series of `series` ([[field, label,
 * "count" | "gauge"], ...]), refreshed every minute. Each figure carries its minutes' values (`data-values`).
 */
export function MinuteCharts({ id, name, load, series }) {
  const minutes = useLoad(load, [load]);
  useInterval(() => minutes.reload(true), MINUTE_REFRESH_MS);
  const [loadedAt, setLoadedAt] = useState(0);
  useEffect(() => setLoadedAt(Date.now()), [minutes.data]);
  const buckets = minutes.data ? minutes.data.buckets : [];
  return html`<section class="minutes" id=${id} aria-label=${`Queue ${name}, last hour by minute`}>
    <div class="chart-controls">
      <button type="button" onClick=${() => minutes.reload()}>Refresh minutes</button>
      ${minutes.data && html`<small class="muted">updated ${formatTime(loadedAt)}; refreshed every minute</small>`}
    </div>
    <${ErrorBox} error=${minutes.error} />
    ${minutes.data &&
    GROUPS.map(
      ([group, heading]) => html`<h3>${heading}</h3>
        <div class="minute-charts" data-group=${group}>
          ${series
            .map((entry, i) => [...entry, COLORS[i % COLORS.length]])
            .filter(([, , kind]) => kind === group)
            .map(([key, label, kind, color]) => {
              const values = buckets.map((b) => b[key] || 0);
              const last = values.length ? values[values.length - 1] : 0;
              const summary =
                kind === "gauge"
                  ? `${last} now, at most ${Math.max(0, ...values)} in the hour`
                  : `${last} this minute, ${values.reduce((sum, v) => sum + v, 0)} in the hour`;
              return html`<figure class="chart mini" key=${key} data-series=${key} data-values=${values.join(",")}>
                <${MinutePlot} title=${`${label} per minute, last hour`} buckets=${buckets} field=${key}
                  gauge=${kind === "gauge"} color=${color} />
                <figcaption><strong>${label}</strong>: <span class="summary">${summary}</span></figcaption>
              </figure>`;
            })}
        </div>`,
    )}
  </section>`;
}
