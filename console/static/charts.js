// Hourly activity charts (uPlot, loaded by index.html as the global `uPlot`), from the metrics
// extension of GetQueueAttributes / GetSubscriptionAttributes (`?metrics=hourly`).
import { ErrorBox, html, useEffect, useLoad, useRef, useState } from "./ui.js";

const COLORS = ["#1f6feb", "#2da44e", "#cf222e", "#bf8700", "#8250df"];

function Plot({ title, buckets, series }) {
  const box = useRef(null);
  useEffect(() => {
    if (!box.current || !globalThis.uPlot) return undefined;
    // Each hour's count holds from its start to the next hour's (a step after each point); a last point at the
    // end of the current hour gives that hour its width too.
    const end = buckets.length ? buckets[buckets.length - 1].Time + 3600 : 0;
    const column = (key) => [...buckets.map((b) => b[key] || 0), buckets.length ? buckets[buckets.length - 1][key] || 0 : 0];
    const data = [[...buckets.map((b) => b.Time), end], ...series.map(([key]) => column(key))];
    const width = () => Math.max(320, box.current.clientWidth);
    const options = {
      width: width(),
      height: 240,
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
    const plot = new globalThis.uPlot(options, data, box.current);
    const canvas = box.current.querySelector("canvas");
    if (canvas) {
      canvas.setAttribute("role", "img");
      canvas.setAttribute("aria-label", title);
    }
    const resize = () => plot.setSize({ width: width(), height: 240 });
    window.addEventListener("resize", resize);
    return () => {
      window.removeEventListener("resize", resize);
      plot.destroy();
    };
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
