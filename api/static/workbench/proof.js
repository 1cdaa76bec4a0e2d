// The proof view: the proof with its checked spans coloured, the proof-state tree (SVG), and the
// detail of the selected EdgeUnit. Selecting a span selects its EdgeUnit in the tree and back.
import { el } from "./api.js";

const RANK = { refuted: 3, unknown: 2, verified: 1, unreached: 0 };
const MARK = { refuted: "✗", unknown: "?", verified: "✓", unreached: "·" };
const MAX_DRAWN = 2500;  // EdgeUnits drawn in the tree (a hostile proof can have thousands; the SVG would crawl)

// An evidence record's status for colouring: an obligation the time budget never reached is "unreached".
function evStatus(ev) {
  if (ev.status === "unknown" && /budget/i.test(ev.reason || "")) return "unreached";
  return ev.status;
}

// Roll-up like the verdict's StepReport: refuted if any refuted, verified if any verified, unknown if any
// decided-not, else unreached (no obligation, or none reached).
function rollUp(statuses) {
  if (statuses.includes("refuted")) return "refuted";
  if (statuses.includes("verified")) return "verified";
  if (statuses.includes("unknown")) return "unknown";
  return "unreached";
}

export function buildModel(verdict, tree) {
  const edges = new Map();
  const order = [];
  for (const rep of verdict.steps) for (const e of rep.edges) { edges.set(e.id, { ...e, evidence: [] }); order.push(e.id); }
  const matched = tree && tree.edges.length === order.length && tree.edges.every((id, i) => id === order[i]);
  const loose = [];
  for (const rep of verdict.steps) {
    for (const ev of rep.evidence) {
      let id = matched ? tree.obligations[ev.obligation] : undefined;
      if (!edges.has(id)) {  // no id map: the EdgeUnit of the same step whose span holds the claim
        const holder = rep.edges.find((e) => e.span[0] <= ev.span[0] && ev.span[1] <= e.span[1]);
        id = holder ? holder.id : undefined;
      }
      if (id !== undefined) edges.get(id).evidence.push(ev); else loose.push(ev);
    }
  }
  for (const e of edges.values()) e.status = rollUp(e.evidence.map(evStatus));
  const steps = tree ? tree.steps : verdict.steps.map((r) => ({ index: r.step, text: null }));
  return { verdict, tree: matched ? tree : null, edges, order, loose, steps };
}

// Elementary segments of one step's text, each with the most severe status covering it and its EdgeUnit.
function segments(text, items) {
  const cuts = new Set([0, text.length]);
  for (const it of items) { cuts.add(Math.max(0, Math.min(text.length, it.start))); cuts.add(Math.max(0, Math.min(text.length, it.end))); }
  const points = [...cuts].sort((a, b) => a - b);
  const out = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const [a, b] = [points[i], points[i + 1]];
    const cover = items.filter((it) => it.start <= a && b <= it.end);
    cover.sort((x, y) => RANK[y.status] - RANK[x.status] || (x.end - x.start) - (y.end - y.start));
    out.push({ a, b, top: cover[0] || null });
  }
  return out;
}

export class ProofView {
  constructor({ proof, tree, detail, headline, coverage }) {
    Object.assign(this, { proofEl: proof, treeEl: tree, detailEl: detail, headEl: headline, covEl: coverage });
    this.model = null;
    this.selected = null;
    for (const node of [proof, tree]) node.addEventListener("keydown", (ev) => this.onKey(ev));
  }

  render(verdict, tree) {
    this.model = buildModel(verdict, tree);
    this.selected = null;
    this.renderHeadline();
    this.renderProof();
    this.renderTree();
    const first = this.model.order.find((id) => this.model.edges.get(id).status === "refuted");
    const looseRefuted = this.model.loose.findIndex((ev) => ev.status === "refuted");
    if (first) this.select(first, { scroll: false });
    else if (looseRefuted >= 0) this.selectLoose(looseRefuted, { scroll: false });
    else if (this.model.order.length) this.select(this.model.order[0], { scroll: false });
    else this.detailEl.replaceChildren(el("p", { text: "This proof has no EdgeUnits." }));
  }

  renderHeadline() {
    const v = this.model.verdict;
    const c = v.coverage;
    const head = v.verdict === "error"
      ? el("p", { class: "verdict verdict-error" }, `✗ Error at step ${v.first_error_step}`, el("span", { class: "reason", text: v.reason || "" }))
      : el("p", { class: "verdict verdict-correct" }, "✓ No refuted obligation: correct as far as the checks reach");
    this.headEl.replaceChildren(head);
    this.covEl.textContent = `Coverage: ${c.steps_decided} of ${c.steps} steps decided · ${c.edges_decided} of ${c.edges} EdgeUnits · `
      + `${c.obligations_decided} of ${c.obligations} obligations decided · mode ${v.mode} · ${v.timings.total_ms.toFixed(1)} ms`;
  }

  renderProof() {
    const { verdict, steps, edges } = this.model;
    const reports = new Map(verdict.steps.map((r) => [r.step, r]));
    const list = el("ol", { class: "steps" });
    for (const step of steps) {
      const rep = reports.get(step.index) || { status: "unchecked", edges: [], evidence: [] };
      const isFirst = verdict.first_error_step === step.index;
      const li = el("li", { class: `step step-${rep.status}${isFirst ? " step-first-error" : ""}`, "data-step": step.index });
      li.append(el("div", { class: "step-head" }, el("span", { class: "step-no", text: `Step ${step.index}` }),
        el("span", { class: `badge badge-${rep.status}`, text: rep.status }),
        isFirst ? el("span", { id: "first-error", class: "first-error", text: "✗ first error" }) : null));
      const items = [];
      for (const e of rep.edges) {
        const full = edges.get(e.id);
        if (full.evidence.length === 0) items.push({ start: e.span[0], end: e.span[1], status: "unreached", edge: e.id });
        for (const ev of full.evidence) items.push({ start: ev.span[0], end: ev.span[1], status: evStatus(ev), edge: e.id });
      }
      // checks held by no EdgeUnit (a claim read from the step's words): their spans and a button show them
      const looseHere = this.model.loose.map((ev, i) => ({ ev, i })).filter(({ ev }) => ev.step === step.index);
      for (const { ev, i } of looseHere) items.push({ start: ev.span[0], end: ev.span[1], status: evStatus(ev), loose: i });
      if (looseHere.length) {
        const worst = looseHere.reduce((a, b) => (RANK[evStatus(b.ev)] > RANK[evStatus(a.ev)] ? b : a));
        li.querySelector(".step-head").append(el("button", { type: "button", class: `loose-checks badge badge-${evStatus(worst.ev)}`,
          "data-loose": worst.i, onclick: () => this.selectLoose(worst.i, { from: "proof" }) },
          `${MARK[evStatus(worst.ev)] || ""} ${looseHere.length} check${looseHere.length > 1 ? "s" : ""} read from the words`));
      }
      const body = el("p", { class: "step-text" });
      if (step.text === null) body.textContent = "(step text not available)";
      else {
        for (const seg of segments(step.text, items)) {
          const piece = step.text.slice(seg.a, seg.b);
          if (!seg.top) { body.append(piece); continue; }
          const top = seg.top;
          body.append(top.loose !== undefined
            ? el("span", { class: `span span-${top.status}`, "data-loose": top.loose, title: `read from the words: ${top.status}`,
              onclick: () => this.selectLoose(top.loose, { from: "proof" }) }, piece)
            : el("span", { class: `span span-${top.status}`, "data-edge": top.edge, title: `${top.edge}: ${top.status}`,
              onclick: () => this.select(top.edge, { from: "proof" }) }, piece));
        }
      }
      li.append(body);
      list.append(li);
    }
    this.proofEl.replaceChildren(list);
  }

  renderTree() {
    const { tree, edges, order } = this.model;
    if (!tree) { this.treeEl.replaceChildren(el("p", { class: "note", text: "The state tree could not be matched to this verdict's EdgeUnits." })); return; }
    const drawn = order.slice(0, MAX_DRAWN);
    const kids = new Map();
    for (const id of drawn) {
      const e = edges.get(id);
      if (!kids.has(e.parent)) kids.set(e.parent, []);
      kids.get(e.parent).push({ edge: e, child: e.child, others: e.children.filter((c) => c !== e.child) });
    }
    const pos = new Map();
    const DX = 176, DY = 66, PAD = 90;
    const below = (node) => (kids.get(node) || []).flatMap((k) => [k.child, ...k.others]);
    // tidy layout, iteratively (a long proof is a chain thousands of states deep): leaves left to
    // right, each parent centred over its children; states the root does not reach start new columns
    let leaf = 0;
    const seen = new Set();
    const starts = drawn.length < order.length ? [tree.root] : [tree.root, ...Object.keys(tree.states)];
    for (const start of starts) {
      const stack = [[start, 0, false]];
      while (stack.length) {
        const [node, depth, done] = stack.pop();
        if (done) {
          const xs = below(node).filter((c) => pos.has(c)).map((c) => pos.get(c).x);
          pos.set(node, { x: xs.length ? (Math.min(...xs) + Math.max(...xs)) / 2 : PAD + DX * leaf++, y: 28 + DY * depth });
          continue;
        }
        if (seen.has(node)) continue;
        seen.add(node);
        stack.push([node, depth, true]);
        const out = below(node);
        for (let i = out.length - 1; i >= 0; i--) if (!seen.has(out[i])) stack.push([out[i], depth + 1, false]);
      }
    }
    const width = Math.max(...[...pos.values()].map((p) => p.x)) + PAD + 40;
    const height = Math.max(...[...pos.values()].map((p) => p.y)) + 40;
    const svg = el("svg:svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "group", "aria-label": "Proof states joined by EdgeUnits" });
    const lines = el("svg:g", { class: "links" });
    const labels = el("svg:g", { class: "edges" });
    for (const id of drawn) {
      const e = edges.get(id);
      const p = pos.get(e.parent);
      const targets = [e.child, ...e.children.filter((c) => c !== e.child)].map((c) => pos.get(c)).filter(Boolean);
      if (!p || !targets.length) continue;
      const my = (p.y + targets[0].y) / 2;  // elbow links: down, across, down; the label sits over the child
      for (const q of targets) lines.append(el("svg:path", { d: `M${p.x},${p.y} V${my} H${q.x} V${q.y}`, class: `link link-${e.status}` }));
      const mx = targets[0].x;
      const g = el("svg:g", { class: `edge edge-${e.status}`, "data-edge": id, tabindex: "-1", role: "button",
        "aria-label": `EdgeUnit ${id}, ${e.type}, step ${e.step}, ${e.status}`, transform: `translate(${mx - 70},${my - 12})`,
        onclick: () => this.select(id, { from: "tree" }) });
      g.append(el("svg:rect", { width: 140, height: 24, rx: 5 }),
        el("svg:text", { x: 8, y: 16 }, `${MARK[e.status]} ${id} · ${e.type}`.slice(0, 24)));
      labels.append(g);
    }
    const nodes = el("svg:g", { class: "states" });
    for (const [id, p] of pos) {
      const st = tree.states[id] || {};
      nodes.append(el("svg:g", { class: `state${st.branch ? " state-branch" : ""}`, transform: `translate(${p.x},${p.y})` },
        el("svg:circle", { r: 8 }), el("svg:text", { x: 12, y: 4, class: "state-id" }, id),
        el("svg:title", {}, st.branch ? `${id} — case: ${st.branch}` : id)));
    }
    svg.append(lines, nodes, labels);
    const note = drawn.length < order.length ? el("p", { class: "note", id: "tree-cut",
      text: `Drawn: the first ${drawn.length.toLocaleString("en")} of ${order.length.toLocaleString("en")} EdgeUnits (the proof view has them all).` }) : null;
    this.treeEl.replaceChildren(...[note, svg].filter(Boolean));
  }

  select(id, { scroll = true } = {}) {
    if (!this.model || !this.model.edges.has(id)) return;
    this.selected = id;
    for (const n of document.querySelectorAll(".selected")) n.classList.remove("selected");
    for (const n of this.proofEl.querySelectorAll(`[data-edge="${id}"]`)) n.classList.add("selected");
    const g = this.treeEl.querySelector(`g.edge[data-edge="${id}"]`);
    if (g) g.classList.add("selected");
    if (scroll) {
      const span = this.proofEl.querySelector(`[data-edge="${id}"]`);
      if (span) span.scrollIntoView({ block: "nearest" });
      if (g) g.scrollIntoView({ block: "nearest", inline: "nearest" });
    }
    this.renderDetail(this.model.edges.get(id));
  }

  // A check no EdgeUnit holds (a claim read from the step's words, "the remainder ... is 2"): its card, and
  // every check of its step that no EdgeUnit holds.
  selectLoose(i, { scroll = true } = {}) {
    const ev = this.model && this.model.loose[i];
    if (!ev) return;
    this.selected = null;
    for (const n of document.querySelectorAll(".selected")) n.classList.remove("selected");
    for (const n of this.proofEl.querySelectorAll(`[data-loose="${i}"]`)) n.classList.add("selected");
    const span = this.proofEl.querySelector(`span[data-loose="${i}"]`);
    if (scroll && span) span.scrollIntoView({ block: "nearest" });
    const same = this.model.loose.filter((x) => x.step === ev.step);
    this.detailEl.replaceChildren(
      el("h3", {}, `Step ${ev.step}: read from the words `, el("span", { class: `badge badge-${evStatus(ev)}`, text: ev.status })),
      el("p", { class: "note", text: "These checks come from the step's words, not from one EdgeUnit of the tree." }),
      ...same.map(evidenceCard));
  }

  onKey(ev) {
    if (!this.model || !this.model.order.length) return;
    const i = this.model.order.indexOf(this.selected);
    const moves = { ArrowDown: 1, ArrowRight: 1, j: 1, ArrowUp: -1, ArrowLeft: -1, k: -1, Home: -Infinity, End: Infinity };
    if (!(ev.key in moves)) return;
    ev.preventDefault();
    const n = this.model.order.length;
    const d = moves[ev.key];
    const next = d === -Infinity ? 0 : d === Infinity ? n - 1 : Math.max(0, Math.min(n - 1, i + d));
    this.select(this.model.order[next]);
  }

  renderDetail(e) {
    const st = this.model.tree ? this.model.tree.states[e.parent] : null;
    const box = [el("h3", {}, `EdgeUnit ${e.id} `, el("span", { class: `badge badge-${e.status}`, text: e.status === "unreached" ? "not reached" : e.status }))];
    box.push(el("dl", { class: "kv" },
      el("dt", { text: "transition" }), el("dd", { text: e.type }),
      el("dt", { text: "step, span" }), el("dd", { text: `step ${e.step}, characters [${e.span[0]}, ${e.span[1]})` }),
      el("dt", { text: "text" }), el("dd", {}, el("q", { class: "quote", text: e.text })),
      e.children.length > 1 ? el("dt", { text: "branches to" }) : null, e.children.length > 1 ? el("dd", { text: e.children.join(", ") }) : null));
    const state = el("section", { class: "state-box", "aria-label": "Parent state" }, el("h4", { text: `Parent state ${e.parent}` }));
    if (!st) state.append(el("p", { class: "note", text: "State not available." }));
    else {
      if (st.branch) state.append(el("p", {}, el("strong", { text: "case: " }), st.branch));
      const more = st.facts_total > st.hypotheses.length ? `the latest ${st.hypotheses.length} of ${st.facts_total}` : "";
      state.append(el("p", {}, el("strong", { text: "facts: " }), st.hypotheses.length ? more : "none recorded"));
      if (st.hypotheses.length) state.append(el("ul", { class: "facts" }, ...st.hypotheses.map((h) => el("li", {}, el("code", { text: h })))));
      state.append(el("p", {}, el("strong", { text: "goal: " }), st.goal || "none stated",
        st.goal_from && st.goal_from !== e.parent ? el("small", { text: ` (as stated at ${st.goal_from})` }) : null));
    }
    box.push(state);
    box.push(el("h4", { text: "Obligations as checked" }));
    if (!e.evidence.length) box.push(el("p", { class: "note", text: "No obligation was extracted from this EdgeUnit: no check reached it." }));
    for (const ev of e.evidence) box.push(evidenceCard(ev));
    this.detailEl.replaceChildren(...box);
  }
}

function evidenceCard(ev) {
  const st = evStatus(ev);
  const card = el("article", { class: `obligation ob-${st}`, "data-obligation": ev.obligation },
    el("p", {}, el("span", { class: `badge badge-${st}`, text: st === "unreached" ? "not reached" : ev.status }), " ",
      el("strong", { text: ev.kind }), ` · ${ev.obligation} · ${ev.method} · ${Number(ev.time_ms).toFixed(2)} ms`),
    el("pre", { class: "claim" }, el("code", { text: ev.claim.includes("⊢") ? ev.claim : `⊢ ${ev.claim}` })),
    ev.reason ? el("p", { class: "why", text: ev.reason }) : null);
  if (ev.counterexample && Object.keys(ev.counterexample).length) {
    card.append(el("p", { class: "cx-title", text: "Counterexample" }));
    const table = el("table", { class: "counterexample" });
    for (const [k, v] of Object.entries(ev.counterexample)) table.append(el("tr", {}, el("th", { scope: "row", text: k }), el("td", {}, el("code", { text: String(v) }))));
    card.append(table);
  }
  return card;
}
