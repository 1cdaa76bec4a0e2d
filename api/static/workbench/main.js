// The page: tabs, the check form (examples, modes), and the wiring of the proof view and the run browser.
import { ApiError, el, get, post, setApiKey } from "./api.js";
import { ProofView } from "./proof.js";
import { RunBrowser, labelText } from "./runs.js";

const $ = (id) => document.getElementById(id);
let loaded = null;  // {text, steps}: steps of an example or run item, sent as a list while the text is unedited
let context = null;  // the run item being shown, if any

function showError(err) {
  const box = $("alert");
  box.textContent = err instanceof ApiError ? `Request failed (${err.status} ${err.code}): ${err.message}` : `Error: ${err.message || err}`;
  if (err instanceof ApiError && err.status === 401) {
    // the key goes in the API-key box at the top right: open it and put the cursor there
    const keyBox = $("apikey-box");
    keyBox.hidden = false;
    keyBox.open = true;
    box.append(" ", el("button", { type: "button", class: "link", id: "alert-apikey", onclick: () => $("apikey").focus() },
      "Enter the API key in the API key box (top right)."));
    $("apikey").focus();
  }
  box.hidden = false;
  $("status").textContent = "";
}
function clearError() { $("alert").hidden = true; $("alert").textContent = ""; }

// -- tabs ---------------------------------------------------------------------------------------
const tabs = [$("tab-check"), $("tab-runs")];
function selectTab(tab, focus = false) {
  for (const t of tabs) {
    const on = t === tab;
    t.setAttribute("aria-selected", String(on));
    t.tabIndex = on ? 0 : -1;
    $(t.getAttribute("aria-controls")).hidden = !on;
  }
  if (focus) tab.focus();
}
for (const t of tabs) {
  t.addEventListener("click", () => selectTab(t));
  t.addEventListener("keydown", (ev) => {
    const i = tabs.indexOf(t);
    if (ev.key === "ArrowRight" || ev.key === "ArrowLeft") {
      ev.preventDefault();
      selectTab(tabs[(i + (ev.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length], true);
    }
  });
}

// -- check a proof ------------------------------------------------------------------------------
const view = new ProofView({ proof: $("proof-view"), tree: $("tree"), detail: $("detail"), headline: $("headline"), coverage: $("coverage") });

function stepsText(steps) { return steps.map((s, i) => `Step ${i + 1}: ${s}`).join("\n"); }

function load(problem, steps, proofText) {
  $("problem").value = problem || "";
  if (steps) { const text = stepsText(steps); loaded = { text, steps }; $("proof").value = text; }
  else { loaded = null; $("proof").value = proofText || ""; }
}

function requestBody() {
  const proof = $("proof").value;
  const body = { problem: $("problem").value };
  if (loaded && proof === loaded.text) body.steps = loaded.steps; else body.proof = proof;
  return body;
}

async function check() {
  clearError();
  const body = requestBody();
  $("status").textContent = "Checking…";
  $("run").disabled = true;
  try {
    const [verdict, tree] = await Promise.all([post("/localize", body), post("/web/tree", body)]);
    $("result").hidden = false;
    renderContext(verdict);
    view.render(verdict, tree);
    $("status").textContent = `Checked: ${verdict.verdict === "error" ? `error at step ${verdict.first_error_step}` : "no refutation"}.`;
  } catch (err) {
    // the result on screen was the previous proof's: take it away with the failed request
    $("result").hidden = true;
    $("headline").replaceChildren();
    $("coverage").textContent = "";
    $("proof-view").replaceChildren();
    $("tree").replaceChildren();
    $("detail").replaceChildren();
    $("context").hidden = true;
    showError(err);
  } finally {
    $("run").disabled = false;
  }
}

function renderContext(verdict) {
  const box = $("context");
  if (!context) { box.hidden = true; box.replaceChildren(); return; }
  const { run, pred } = context;
  const now = verdict.verdict === "error" ? `step ${verdict.first_error_step}` : "correct";
  box.replaceChildren(
    el("p", {}, el("strong", { text: `Run ${run.name}, item ` }), el("code", { text: pred.id }),
      el("button", { type: "button", class: "link", onclick: () => selectTab($("tab-runs"), true) }, " ← back to the run")),
    el("p", { class: "versus" },
      el("span", { class: "pill label-pill" }, `label: ${labelText(pred.label)}`),
      el("span", { class: "pill pred-pill" }, `run's prediction: ${labelText(pred.predicted)}`),
      el("span", { class: `outcome outcome-${pred.outcome}`, text: pred.outcome }),
      el("span", { class: "pill" }, `this verdict: ${now}`)),
    el("p", { class: "note", text: "The run stores no per-item verdict detail; this item was re-localized just now through "
      + "POST /localize (offline mode), so the view may differ from the run's prediction if the run used another mode or version." }));
  box.hidden = false;
}

$("check-form").addEventListener("submit", (ev) => { ev.preventDefault(); context = null; check(); });
$("check-form").addEventListener("keydown", (ev) => {
  if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); context = null; check(); }
});

$("example").addEventListener("change", async () => {
  const name = $("example").value;
  if (!name) return;
  clearError();
  try {
    const ex = await get(`/web/examples/${encodeURIComponent(name)}`);
    load(ex.problem, ex.steps || null, ex.proof || "");
  } catch (err) { showError(err); }
});

$("apikey").addEventListener("input", () => setApiKey($("apikey").value));
// a key typed after the page loaded: the run list (refused without it) is asked for again
$("apikey").addEventListener("change", () => runs.refreshList());
$("tab-runs").addEventListener("click", () => runs.refreshList());

async function init() {
  try {
    const cfg = await get("/web/config");
    $("apikey-box").hidden = !cfg.api_key_required;
    const modes = $("modes");
    for (const m of cfg.modes) {
      const id = `mode-${m.mode}`;
      modes.append(el("div", { class: `mode${m.available ? "" : " mode-off"}` },
        el("input", { type: "radio", name: "mode", id, value: m.mode, checked: m.mode === "offline", disabled: !m.available,
          "aria-describedby": m.reason ? `${id}-why` : null }),
        el("label", { for: id, text: m.mode }),
        m.reason ? el("small", { id: `${id}-why`, class: "why", text: m.reason }) : null));
    }
    const ex = await get("/web/examples");
    $("example").append(...ex.examples.map((e) => el("option", { value: e.name },
      `${e.title}${e.expected ? ` (${e.expected.verdict === "error" ? `error at ${e.expected.first_error_step}` : "correct"})` : ""}`)));
  } catch (err) { showError(err); }
  runs.refreshList();
  const m = /#run=([0-9a-f]{1,64})/.exec(location.hash);
  if (m) { selectTab($("tab-runs")); runs.open(m[1]); }
}

const runs = new RunBrowser({
  onError: showError,
  onOpenItem: (run, doc) => {
    clearError();
    if (!doc.item) {
      showError(new Error(`item ${doc.prediction.id} cannot be shown: ${doc.item_missing}`));
      return;
    }
    load(doc.item.problem, doc.item.steps, null);
    context = { run, pred: doc.prediction };
    selectTab($("tab-check"));
    check();
  },
});

init();
