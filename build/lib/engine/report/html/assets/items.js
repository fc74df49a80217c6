// The item browser: one dataset, one model (and optionally a second, side by side). Items
// come inline (static report, under its size cap) or from api/items (serve), in the shape
// engine/report/html/items.py writes: {ids, gold, rows: {model: [[i, response, prediction, score, error, blocked]]}};
// an interactive dataset's rows add the episode's outcome, and its block has "turns" (the transcripts).
"use strict";

const IT = { inline: null, cache: new Map(), shown: 0, page: 100, ready: false };

function itemsAvailable() { return R.mode !== "static" || IT.inline !== null; }

async function getItems(dataset, models) {
  if (R.mode === "static") return (await IT.inline)[dataset] || { ids: [], gold: [], rows: {} };
  const key = [dataset, ...models].join("\u0000");
  if (!IT.cache.has(key)) {
    const q = new URLSearchParams({ dataset });
    for (const m of models) q.append("model", m);  // one parameter each: a name may hold a comma
    const res = await fetch("api/items?" + q, { cache: "no-store" });
    if (!res.ok) throw new Error(await res.text());
    IT.cache.set(key, await res.json());
  }
  return IT.cache.get(key);
}

// Inline items are base64 of gzipped JSON (engine/report/html/items.py): inflated once, on first use.
async function inflateInline(raw) {
  const bytes = Uint8Array.from(atob(raw), c => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return await new Response(stream).json();
}

function initItems(d) {
  if (!IT.ready) {
    const raw = document.getElementById("report-items").textContent.trim();
    IT.inline = R.mode === "static" && raw && raw !== "null" ? inflateInline(raw) : null;
  }
  const ds = document.getElementById("it-dataset"), a = document.getElementById("it-model");
  const b = document.getElementById("it-other"), f = document.getElementById("it-filter");
  const names = new Map(d.hierarchy.map(h => [h.dataset, h.d_name]));
  for (const c of d.coverage) if (!names.has(c.dataset)) names.set(c.dataset, c.dataset);
  const datasets = [...names.keys()].filter(x => d.coverage.some(c => c.dataset === x)).sort();
  const models = [...new Set(d.coverage.map(c => c.model))].sort();
  renderSelect(ds, datasets, datasets.map(x => names.get(x) !== x ? `${x} (${names.get(x)})` : x), true);
  renderSelect(a, models, null, true);
  renderSelect(b, ["", ...models], ["—", ...models], true);
  if (!IT.ready) {
    for (const s of [ds, a, b, f]) s.addEventListener("change", () => showItems(true));
    document.getElementById("it-more").addEventListener("click", () => showItems(false));
    IT.ready = true;
    showItems(true);
  }
}

function openItems(dataset, model) {
  document.getElementById("it-dataset").value = dataset;
  document.getElementById("it-model").value = model;
  showItems(true);
}

function itemState(r) {
  if (!r) return "missing";
  if (r.length > 6) return r[6];  // an episode: how it ended (engine/report/episode_outcomes.py), never right or wrong
  if (r[4]) return "error";
  if (r[2] == null) return "unparsed";
  return r[3] != null && r[3] < 1 ? "wrong" : "right";
}

// An episode's outcomes, as the terminal names them; the filter offers them for an interactive dataset.
const OUTCOMES = [["success", "success"], ["failure", "failure"], ["cap", "at cap"], ["end", "ended by the seeker"],
  ["refusal", "refused/blocked"], ["simulator error", "simulator errors"], ["error", "call errors"],
  ["unfinished", "unfinished"]];
const ONE_OUTCOME = { success: "success", failure: "failure", cap: "at the turn cap", end: "ended by the seeker",
  refusal: "refused or blocked", "simulator error": "simulator error", error: "call failed", unfinished: "unfinished" };
const ANSWER_FILTER = [["all", "all"], ["wrong", "wrong (score < 1)"], ["unparsed", "unparsed"], ["error", "errors"],
  ["differ", "the two models differ"]];
const EPISODE_FILTER = [["all", "all"], ...OUTCOMES, ["differ", "the two models differ"]];

// The filter's choices for the dataset shown: answers (right/wrong) or episodes (outcomes); the choice is kept
// when the other list has it too.
function setFilter(f, interactive) {
  const want = interactive ? EPISODE_FILTER : ANSWER_FILTER;
  if (f.dataset.kind === (interactive ? "episodes" : "answers")) return;
  const keep = f.value;
  f.replaceChildren(...want.map(([v, label]) => el("option", { value: v, text: label })));
  f.value = want.some(([v]) => v === keep) ? keep : "all";
  f.dataset.kind = interactive ? "episodes" : "answers";
}

async function showItems(reset) {
  const note = document.getElementById("it-note"), table = document.getElementById("it-table");
  const more = document.getElementById("it-more");
  if (!itemsAvailable()) {
    note.textContent = window.ITEMS_NOTE || "Items are not inlined in this file; use `python -m engine serve DB`.";
    table.replaceChildren(); more.hidden = true; return;
  }
  const dataset = document.getElementById("it-dataset").value, A = document.getElementById("it-model").value;
  const B = document.getElementById("it-other").value;
  if (!dataset || !A) { note.textContent = "no items stored yet"; return; }
  let block;
  try { block = await getItems(dataset, B ? [A, B] : [A]); }
  catch (e) { note.textContent = "could not load items: " + e.message; return; }
  const byIdx = m => new Map((block.rows[m] || []).map(r => [r[0], r]));
  const ra = byIdx(A), rb = B ? byIdx(B) : null;
  const interactive = !!block.turns;
  setFilter(document.getElementById("it-filter"), interactive);
  const filter = document.getElementById("it-filter").value;
  const keep = i => {
    const x = ra.get(i), y = rb ? rb.get(i) : null, s = itemState(x);
    if (filter === "all") return x || y;
    if (filter === "differ") return rb && x && y && (itemState(x) !== itemState(y) || x[3] !== y[3]);
    return s === filter || (filter === "wrong" && s === "unparsed");
  };
  const idx = block.ids.map((_, i) => i).filter(keep);
  if (reset) IT.shown = 0;
  IT.shown = Math.min(idx.length, IT.shown + IT.page);
  const counts = {};
  for (const r of ra.values()) counts[itemState(r)] = (counts[itemState(r)] || 0) + 1;
  const n = k => counts[k] || 0;
  const tally = interactive
    ? `${ra.size} episodes (` + OUTCOMES.filter(([k], j) => j < 4 || n(k)).map(([k, label]) => `${n(k)} ${label}`)
        .join(", ") + ")"
    : `${ra.size} items (${n("right")} right, ${n("wrong")} wrong, ${n("unparsed")} unparsed, ${n("error")} errors)`;
  note.textContent = `${A} on ${dataset}: ${tally}; showing ${IT.shown} of ${idx.length} matching.` +
    (R.mode === "static" && window.ITEMS_NOTE ? " " + window.ITEMS_NOTE + "." : "") +
    " Prompts are not stored (only their template hash).";
  const head = el("tr", {}, el("th", { class: "text", text: "item" }),
    el("th", { class: "text", text: interactive ? "scenario" : "gold" }),
    ...side(A, true, interactive), ...(B ? side(B, true, interactive) : []));
  const body = el("tbody");
  for (const i of idx.slice(0, IT.shown)) {
    body.append(el("tr", {}, el("td", { text: block.ids[i] }), el("td", {}, el("pre", { text: plain(block.gold[i]) })),
      ...side(ra.get(i), false, episode(block, A, i)), ...(B ? side(rb.get(i), false, episode(block, B, i)) : [])));
  }
  table.replaceChildren(el("thead", {}, head), body);
  more.hidden = IT.shown >= idx.length;
}

// JSON text as a reader wants it: a plain string without its quotes, anything else as JSON.
function plain(json) {
  if (json == null) return "";
  try { const v = JSON.parse(json); return typeof v === "string" ? v : json; } catch (e) { return json; }
}

// Header cells for a model, or the cells of one row: response, prediction, score (or the error); for an
// episode: its transcript, its outcome, its score (final emotion / 100).
function side(x, header, turns) {
  if (header) return (turns ? ["transcript", "outcome", "score"] : ["response", "prediction", "score"])
    .map(h => el("th", { class: "text", text: `${x}: ${h}` }));
  if (x && x.length > 6) return episodeSide(x, turns);
  const s = itemState(x), cls = { right: "right", wrong: "wrong", unparsed: "wrong", error: "err" }[s] || "";
  if (!x) return [el("td", { text: "not asked" }), el("td"), el("td")];
  const resp = x[4] ? x[4] : (x[5] ? `[${x[5]}] ` : "") + (x[1] ?? "");
  const said = turns ? transcript(turns) : el("pre", { text: resp });
  return [el("td", { class: cls }, said),
          el("td", { class: cls }, el("pre", { text: x[2] == null ? (x[4] ? "" : "unparsed") : plain(x[2]) })),
          el("td", { class: cls, text: x[4] ? "error" : fmt(x[3]) })];
}

// An episode's cells: the transcript, how it ended (success green, failure red, errors yellow; the rest plain),
// and its score where it has one (a refusal, an error or an unfinished episode has none).
function episodeSide(x, turns) {
  const outcome = x[6], label = ONE_OUTCOME[outcome] || outcome;
  const cls = { success: "right", failure: "wrong", "simulator error": "err", error: "err" }[outcome] || "";
  const why = x[4] ? `: ${x[4]}` : x[5] ? `: ${x[5]}` : "";
  return [el("td", { class: cls }, turns ? transcript(turns) : el("pre", { text: x[4] || "" })),
          el("td", { class: cls + " outcome", text: label + why }),
          el("td", { class: cls, text: x[3] == null ? "-" : fmt(x[3]) })];
}

// An interactive dataset's item is an episode (engine/report/html/transcripts.py): its turns, or null.
function episode(block, model, i) {
  const t = block.turns && block.turns[model];
  return t ? t[block.ids[i]] || null : null;
}

// The episode as a dialogue: its emotion curve, then each turn by session; refusals, content blocks,
// unreadable simulator replies and failed calls marked as what they are, never as words said.
function transcript(turns) {
  const box = el("div", { class: "transcript" });
  const curve = turns.filter(t => t[2] === "seeker" && t[3] === "ok" && t[5] != null).map(t => t[5]);
  if (curve.length) box.append(sparkline(curve));
  let session = -1;
  for (const [s, n, role, status, content, emotion, reason] of turns) {
    if (s !== session) { session = s; box.append(el("div", { class: "session", text: `session ${s + 1}` })); }
    const who = role === "seeker" ? "seeker" : "companion";
    const mark = status === "ok" ? "" : ({ blocked: "[refused or blocked] ", unreadable: "[simulator error] ",
      error: "[call failed] " }[status] || `[${status}] `);
    const feel = role === "seeker" && emotion != null ? ` (emotion ${emotion}${reason ? ": " + reason : ""})` : "";
    box.append(el("div", { class: `turn ${who} ${status}` },
      el("b", { text: `${n === 0 && role === "seeker" ? "opens" : "turn " + n} ${who}${feel}: ` }),
      el("span", { text: mark + (content ?? "") })));
  }
  return box;
}

// The seeker's emotion turn by turn (0-100) as a small SVG line: the episode's curve at a glance.
function sparkline(values) {
  // The SVG namespace from the parser (a fixed tag, no data): the page names no URL of its own (offline test).
  const box = document.createElement("div"); box.innerHTML = "<svg></svg>";
  const svg = box.firstChild, ns = svg.namespaceURI, w = 160, h = 40;
  svg.setAttribute("class", "curve"); svg.setAttribute("width", w); svg.setAttribute("height", h);
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  const x = i => values.length < 2 ? w / 2 : 4 + i * (w - 8) / (values.length - 1), y = v => h - 4 - v * (h - 8) / 100;
  const line = document.createElementNS(ns, "polyline");
  line.setAttribute("points", values.map((v, i) => `${x(i)},${y(v)}`).join(" "));
  line.setAttribute("fill", "none"); line.setAttribute("stroke", "#3a6ea5"); line.setAttribute("stroke-width", "2");
  const title = document.createElementNS(ns, "title");
  title.textContent = "seeker emotion by turn: " + values.join(", ");
  svg.append(title, line);
  return svg;
}
