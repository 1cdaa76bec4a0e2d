// The run browser: headline metrics and plots, a filterable, paginated table of items; opening an
// item hands it to the proof view (re-localized through the API: runs store no per-item verdict detail).
import { dataUrl, el, get, post } from "./api.js";

const OUTCOMES = ["exact", "early", "late", "missed", "correct"];
const PAGE = 100;
const HEADLINE = [
  ["n", "items"], ["binary_accuracy", "binary accuracy"], ["exact_accuracy", "exact first-error"],
  ["error_accuracy", "error accuracy"], ["correct_accuracy", "correct accuracy"], ["f1", "F1"],
  ["flag_precision", "flag precision"], ["early_flags", "early flags"], ["late_flags", "late flags"],
  ["missed_errors", "missed errors"],
];

const $ = (id) => document.getElementById(id);
const COUNTS = new Set(["n", "flags", "exact_flags", "early_flags", "late_flags", "missed_errors"]);
// a count as a whole number; every other headline is a rate in [0, 1], shown as a percent (1 is 100.0 %)
const fmt = (key, v) => (v === null || v === undefined || typeof v !== "number" ? "–"
  : COUNTS.has(key) ? v.toLocaleString("en") : `${(100 * v).toFixed(1)} %`);
const labelText = (v) => (v === "correct" || v === null || v === undefined ? "correct" : `step ${v}`);

export class RunBrowser {
  constructor({ onOpenItem, onError }) {
    this.onOpenItem = onOpenItem;
    this.onError = onError;
    this.run = null;
    this.filter = { outcome: "", subset: "", q: "", offset: 0 };
    this.seq = 0;
    $("run-open").addEventListener("submit", (ev) => { ev.preventDefault(); this.openPath($("run-path").value.trim()); });
    $("run-prev").addEventListener("click", () => this.page(-1));
    $("run-next").addEventListener("click", () => this.page(1));
    $("run-subset").addEventListener("change", () => this.setFilter({ subset: $("run-subset").value }));
    let timer = null;
    $("run-q").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => this.setFilter({ q: $("run-q").value }), 200); });
  }

  async refreshList() {
    try {
      const doc = await get("/web/runs");
      $("run-list").replaceChildren(...doc.runs.map((r) => el("li", {}, el("button", { type: "button", class: "link",
        onclick: () => this.open(r.id) }, r.name))));
    } catch (err) { this.onError(err); }
  }

  async openPath(path) {
    try { this.show(await post("/web/runs/open", { path })); this.refreshList(); } catch (err) { this.onError(err); }
  }

  async open(id) {
    try { this.show(await get(`/web/runs/${encodeURIComponent(id)}`)); } catch (err) { this.onError(err); }
  }

  show(summary) {
    this.run = summary;
    history.replaceState(null, "", `#run=${summary.id}`);
    $("run-view").hidden = false;
    $("run-name").textContent = `Run ${summary.name}`;
    const m = summary.metrics || {};
    $("run-metrics").replaceChildren(...HEADLINE.filter(([k]) => k in m).map(([k, name]) =>
      el("div", { class: "metric", "data-key": k }, el("span", { class: "value", text: fmt(k, m[k]) }), el("span", { class: "name", text: name }))));
    $("run-plots").replaceChildren(...summary.plots.map((p) => {
      // fetched with the API key (an <img src> could not send it), shown as a data: URL
      const img = el("img", { alt: `plot ${p} of run ${summary.name}` });
      dataUrl(`/web/runs/${summary.id}/plots/${p}`).then((url) => { img.src = url; }, this.onError);
      return el("figure", {}, img,
        el("figcaption", { text: p === "offsets.png" ? "Where flags land relative to the label" : "Accuracy per subset" }));
    }));
    const sub = $("run-subset");
    sub.replaceChildren(el("option", { value: "" }, "all"), ...summary.subsets.map((s) => el("option", { value: s }, s)));
    this.filter = { outcome: "", subset: "", q: "", offset: 0 };
    $("run-q").value = "";
    this.renderOutcomes();
    this.load();
  }

  renderOutcomes() {
    const counts = this.run.outcomes;
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    const button = (value, name, n) => el("button", { type: "button", "data-outcome": value || "all",
      "aria-pressed": String(this.filter.outcome === value), onclick: () => this.setFilter({ outcome: value }) },
    `${name} `, el("span", { class: "count", text: n.toLocaleString("en") }));
    $("run-outcomes").replaceChildren(button("", "all", total), ...OUTCOMES.map((o) => button(o, o, counts[o] || 0)));
  }

  setFilter(change) {
    Object.assign(this.filter, change, { offset: 0 });
    this.renderOutcomes();
    this.load();
  }

  page(dir) {
    const next = this.filter.offset + dir * PAGE;
    if (next < 0 || (this.total !== undefined && next >= this.total)) return;
    this.filter.offset = next;
    this.load();
  }

  async load() {
    const seq = ++this.seq;
    const f = this.filter;
    const qs = new URLSearchParams({ outcome: f.outcome, subset: f.subset, q: f.q, offset: f.offset, limit: PAGE });
    const t0 = performance.now();
    let doc;
    try { doc = await get(`/web/runs/${this.run.id}/items?${qs}`); } catch (err) { this.onError(err); return; }
    if (seq !== this.seq) return;  // a newer filter answered first
    this.total = doc.total;
    const body = $("run-table").tBodies[0];
    body.replaceChildren(...doc.rows.map((r) => {
      const tr = el("tr", { tabindex: "0", class: `row-${r.outcome}`, "data-id": r.id,
        onclick: () => this.openItem(r.id), onkeydown: (ev) => this.rowKey(ev, r.id) },
      el("td", {}, el("code", { text: r.id })), el("td", { text: r.subset ?? "" }), el("td", { text: labelText(r.label) }),
      el("td", { text: labelText(r.predicted) }), el("td", {}, el("span", { class: `outcome outcome-${r.outcome}`, text: r.outcome })),
      el("td", { class: "num", text: r.time_ms === null || r.time_ms === undefined ? "" : Number(r.time_ms).toFixed(1) }));
      if (r.error) tr.title = r.error;
      return tr;
    }));
    const end = Math.min(doc.offset + doc.rows.length, doc.total);
    $("run-caption").textContent = doc.total ? `Items ${doc.offset + 1}–${end} of ${doc.total.toLocaleString("en")}` : "No item matches";
    $("run-page").textContent = `page ${Math.floor(doc.offset / PAGE) + 1} of ${Math.max(1, Math.ceil(doc.total / PAGE))}`;
    $("run-prev").disabled = doc.offset === 0;
    $("run-next").disabled = end >= doc.total;
    $("run-table").dataset.renderMs = (performance.now() - t0).toFixed(1);
  }

  rowKey(ev, id) {
    const tr = ev.currentTarget;
    if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); this.openItem(id); }
    else if (ev.key === "ArrowDown" && tr.nextElementSibling) { ev.preventDefault(); tr.nextElementSibling.focus(); }
    else if (ev.key === "ArrowUp" && tr.previousElementSibling) { ev.preventDefault(); tr.previousElementSibling.focus(); }
  }

  async openItem(id) {
    let doc;
    try { doc = await get(`/web/runs/${this.run.id}/item?${new URLSearchParams({ id })}`); } catch (err) { this.onError(err); return; }
    this.onOpenItem(this.run, doc);
  }
}

export { labelText };
