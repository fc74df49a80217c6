// The report page: renders the data engine/report/html/gather.py gathered. Modes: "static" (one
// file, data inline), "serve" (data from api/report, items from api/items), "live" (serve,
// refreshed from api/live while a sweep runs). Text goes in through textContent only.
"use strict";

const R = { data: null, mode: window.REPORT_MODE || "static" };

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const k of kids) if (k != null) e.append(k);
  return e;
}
const fmt = (x, d = 2) => (x == null || Number.isNaN(x)) ? "—" : Number(x).toFixed(d);
// "≈" before a score an estimate from part of a dataset's items went into (engine/report/table.py)
const est = (flag, x) => (flag && x != null ? "≈" : "") + fmt(x);
const pct = x => x == null ? "—" : (x >= 0.9995 ? "100%" : (100 * x).toFixed(1) + "%");
const int = x => x == null ? "—" : Number(x).toLocaleString("en-US");
const usd = x => x == null ? "—" : "$" + Number(x).toFixed(x < 1 ? 4 : 2);

// A table whose cells carry a sort value; clicking a header sorts by it (nulls last).
function fillTable(table, columns, rows) {
  table.replaceChildren();
  const head = el("tr");
  columns.forEach((c, i) => head.append(el("th", { class: c.text ? "text" : "", text: c.label, title: c.title || "",
                                                  "data-col": i })));
  const body = el("tbody");
  for (const r of rows) {
    const tr = el("tr", { class: r._class || "" });
    for (const c of columns) {
      const v = c.value(r);
      const td = el("td", { class: c.text ? "text" : "" });
      const shown = c.show ? c.show(r) : (typeof v === "number" && !Number.isInteger(v) ? fmt(v) : v);
      if (shown instanceof Node) td.append(shown); else td.textContent = shown == null ? "—" : shown;
      td.dataset.sort = v == null ? "" : v;
      tr.append(td);
    }
    body.append(tr);
  }
  table.append(el("thead", {}, head), body);
  if (table.classList.contains("sortable")) head.querySelectorAll("th").forEach(th =>
    th.addEventListener("click", () => sortBy(table, th, columns[+th.dataset.col])));
}

function sortBy(table, th, col) {
  const asc = th.getAttribute("aria-sort") !== "ascending";
  table.querySelectorAll("th").forEach(h => h.removeAttribute("aria-sort"));
  th.setAttribute("aria-sort", asc ? "ascending" : "descending");
  const i = +th.dataset.col, body = table.tBodies[0];
  const key = tr => tr.children[i].dataset.sort;
  const rows = Array.from(body.rows);
  rows.sort((a, b) => {
    const x = key(a), y = key(b);
    if (x === "" || y === "") return (x === "") - (y === "");
    const c = col.text ? x.localeCompare(y) : (+x) - (+y);
    return asc ? c : -c;
  });
  body.append(...rows);
}

function renderLeaderboard(d) {
  const ci = d.interval_columns || [];
  const cols = [
    { label: "Rank", value: r => r.rank, show: r => r.rank == null ? "*" : r.rank },
    { label: "Model", text: true, value: r => r.model },
    { label: "Overall", value: r => r.vetoed ? 0 : r.rank == null ? r.raw_total : r.total,
      show: r => r.raw_total == null && r.rank == null ? (r.vetoed ? "0" : "—")
        : r.vetoed ? el("span", {}, "0 ", el("span", { class: "ci", text: `(would-be ${fmt(r.raw_total)})` }))
        : r.rank == null ? el("span", {}, est(r.estimated, r.raw_total), el("span", { class: "ci", text: " (would-be)" }))
        : est(r.estimated, r.total) },
  ];
  if (ci.includes("ci_low")) cols.push({ label: "95% CI", title: "bootstrap interval of the total",
    value: r => r.ci_low, show: r => r.ci_low == null ? "—" : `${fmt(r.ci_low)}–${fmt(r.ci_high)}` });
  if (ci.includes("rank_low")) cols.push({ label: "Rank range", title: "95% range of the rank over replicates",
    value: r => r.rank_low, show: r => r.rank_low == null ? "—" : `${r.rank_low}–${r.rank_high}` });
  for (const a of d.abilities) cols.push({ label: a.name + (a.id === d.suite.gate ? " (gate)" : ""),
    title: a.grp || "", value: r => r.abilities[a.id],
    show: r => est((((d.scores.ability || {})[r.model] || {})[a.id] || [])[4], r.abilities[a.id]) });
  if (ci.includes("p_veto")) cols.push({ label: "P(veto)", title: "share of replicates in which the veto fires",
    value: r => r.p_veto, show: r => fmt(r.p_veto) });
  cols.push({ label: "Coverage", value: r => r.coverage, show: r => pct(r.coverage) });
  const rows = d.leaderboard.map(r => Object.assign({ _class: r.vetoed ? "vetoed" : r.rank == null ? "unranked" : "" }, r));
  fillTable(document.getElementById("board"), cols, rows);
  const notes = document.getElementById("board-notes");
  notes.replaceChildren();
  const gate = d.abilities.find(a => a.id === d.suite.gate);
  for (const r of d.leaderboard) {
    if (r.vetoed) notes.append(el("li", { text: `* ${r.model}: vetoed, ${gate ? gate.name : d.suite.gate} ` +
      `${fmt(r.gate_score)} < ${d.suite.tau} (total 0; would-be score ${fmt(r.raw_total)})` }));
    else if (r.rank == null) notes.append(el("li", { text: `* ${r.model}: not ranked, ` +
      (r.vetoed == null ? "no data for the gate ability" : "no data for any ability in the total") }));
  }
  if (!ci.length) notes.append(el("li", { text: "Intervals are not in this database yet (no ci_low/ci_high columns)." }));
  for (const n of d.notes || []) notes.append(el("li", { text: n }));
}

function renderFigures(d) {
  const box = document.getElementById("figure-list");
  for (const f of d.figures) {
    let div = document.getElementById("fig-" + f.id);
    if (!div) {
      div = el("div", { class: "figure", id: "fig-" + f.id });
      box.append(div);
    }
    if (f.note) {
      if (div.dataset.plotted) Plotly.purge(div.querySelector(".plot"));
      div.replaceChildren(el("h3", { text: f.title }), el("div", { class: "note", text: "Not shown: " + f.note }));
      delete div.dataset.plotted;
      continue;
    }
    if (!div.dataset.plotted) {
      div.replaceChildren(el("h3", { text: f.title }), el("div", { class: "plot" }), el("p", { class: "muted caption" }));
      div.dataset.plotted = "1";
    }
    div.querySelector(".caption").textContent = f.caption || "";
    const config = { displaylogo: false, responsive: true };
    Plotly.react(div.querySelector(".plot"), f.figure.data, f.figure.layout, config);
  }
}

function renderSelect(sel, values, labels, keep) {
  const before = sel.value;
  sel.replaceChildren(...values.map((v, i) => el("option", { value: v, text: labels ? labels[i] : v })));
  if (keep && values.includes(before)) sel.value = before;
}

function renderDrilldown(d) {
  const sel = document.getElementById("dd-model");
  const models = d.leaderboard.map(r => r.model);
  if (!sel.options.length || sel.options.length !== models.length) {
    renderSelect(sel, models, null, true);
    sel.onchange = () => renderTree(R.data, sel.value);
  }
  renderTree(d, sel.value);
}

function node(label, cell, detail) {
  return { label, score: cell ? cell[0] : null, cov: cell ? cell[1] : null,
           lo: cell ? cell[2] : null, hi: cell ? cell[3] : null, est: !!(cell && cell[4]), detail, kids: [] };
}

function renderTree(d, model) {
  const head = document.getElementById("dd-head"), out = document.getElementById("dd-tree");
  out.replaceChildren();
  const b = d.leaderboard.find(r => r.model === model);
  if (!b) { head.textContent = "no model has data yet"; return; }
  head.textContent = b.vetoed ? `${model}: vetoed (gate ${fmt(b.gate_score)} < ${d.suite.tau}), would-be ${fmt(b.raw_total)}`
    : b.rank == null ? `${model}: not ranked, would-be ${fmt(b.raw_total)}` : `${model}: rank ${b.rank}, total ${fmt(b.total)}`;
  head.textContent += `, coverage ${pct(b.coverage)}` + (b.estimated ? ", ≈ estimated" : "");
  const E = (d.estimates || {})[model] || {};
  const S = lvl => (d.scores[lvl] || {})[model] || {};
  const sa = S("ability"), ss = S("sub_ability"), st = S("task"), sd = S("dataset");
  const idx = new Map(), roots = [];
  for (const h of d.hierarchy) {
    const ka = h.ability, ks = ka + "/" + h.sub_ability, kt = ks + "/" + h.task;
    if (!idx.has(ka)) { idx.set(ka, node(h.a_name, sa[h.ability], h.ability === d.suite.gate ? "gate" : `weight ${h.a_w}`)); roots.push(idx.get(ka)); }
    if (!idx.has(ks)) { idx.set(ks, node(h.s_name, ss[h.sub_ability], `weight ${h.s_w}`)); idx.get(ka).kids.push(idx.get(ks)); }
    if (!idx.has(kt)) { idx.set(kt, node(`${h.t_name} (${h.level})`, st[h.task], `weight ${h.t_w}`)); idx.get(ks).kids.push(idx.get(kt)); }
    const chance = (d.chance || {})[h.dataset];
    const e = (sd[h.dataset] || [])[4] && E[h.dataset];
    const leaf = node(h.d_name, sd[h.dataset], [chance != null ? `chance ${fmt(chance)}` : "",
                                                e ? `estimated from ${e.n}/${e.n_total} items (${e.method})` : "",
                                                h.d_w !== 1 ? `weight ${h.d_w}` : ""].filter(Boolean).join(", "));
    leaf.dataset = h.dataset;
    idx.get(kt).kids.push(leaf);
  }
  const weakestFirst = n => { n.kids.sort((a, b) => (a.score == null) - (b.score == null) || (a.score - b.score)); n.kids.forEach(weakestFirst); };
  const top = { kids: roots };
  weakestFirst(top);
  const line = n => {
    const s = el("span", {});
    s.append(el("span", { class: "score" + (n.score == null ? " nodata" : "") + (n.est ? " estimated" : ""),
                          text: n.score == null ? "no data" : est(n.est, n.score) }),
             el("span", { class: "bar", style: `width:${Math.max(0, Math.min(100, n.score || 0))}px` }),
             el("span", { text: n.label }),
             el("span", { class: "muted", text: `  cov ${pct(n.cov)}${n.lo != null ? `  CI ${fmt(n.lo)}–${fmt(n.hi)}` : ""}${n.detail ? "  " + n.detail : ""}` }));
    if (n.dataset) s.append(el("a", { href: "#items", class: "items-link", text: "items",
                                      onclick: () => openItems(n.dataset, model) }));
    return s;
  };
  const add = (parent, n, depth) => {
    if (!n.kids.length) { parent.append(el("div", { class: "leaf" }, line(n))); return; }
    const det = el("details", depth < 1 ? { open: "" } : {}, el("summary", {}, line(n)));
    n.kids.forEach(k => add(det, k, depth + 1));
    parent.append(det);
  };
  const tree = el("div", { class: "tree" });
  roots.forEach(n => add(tree, n, 0));
  out.append(tree);
}

function renderCoverage(d) {
  const sel = document.getElementById("cov-model");
  const models = [...new Set(d.coverage.map(r => r.model))];
  renderSelect(sel, ["", ...models], ["all models (totals)", ...models], true);
  sel.onchange = () => renderCoverage(R.data);
  const cols = [{ label: sel.value ? "Dataset" : "Model", text: true, value: r => r.key },
    { label: "Items", value: r => r.n_items }, { label: "Answered", value: r => r.n_ok },
    { label: "Errors", value: r => r.n_error }, { label: "Unparsed", value: r => r.n_unparsed },
    { label: "Coverage", value: r => r.coverage, show: r => pct(r.coverage) }];
  let rows;
  if (sel.value) rows = d.coverage.filter(r => r.model === sel.value).map(r => Object.assign({ key: r.dataset }, r));
  else {
    const m = new Map();
    for (const r of d.coverage) {
      const t = m.get(r.model) || { key: r.model, n_items: 0, n_ok: 0, n_error: 0, n_unparsed: 0 };
      for (const k of ["n_items", "n_ok", "n_error", "n_unparsed"]) t[k] += r[k] || 0;
      m.set(r.model, t);
    }
    rows = [...m.values()].map(t => Object.assign(t, { coverage: t.n_items ? t.n_ok / t.n_items : null }));
  }
  fillTable(document.getElementById("cov-table"), cols, rows);
}

function renderCosts(d) {
  fillTable(document.getElementById("cost-table"), [
    { label: "Model", text: true, value: r => r.model }, { label: "Items", value: r => r.n_items, show: r => int(r.n_items) },
    { label: "Input tokens", value: r => r.input_tokens, show: r => int(r.input_tokens) },
    { label: "Output tokens", value: r => r.output_tokens, show: r => int(r.output_tokens) },
    { label: "Cost (USD)", value: r => r.cost_usd, show: r => r.cost_usd == null ? "no price" : usd(r.cost_usd) },
    { label: "Per item", value: r => r.cost_per_item_usd, show: r => usd(r.cost_per_item_usd) }], d.costs);
}

function kv(pairs) {
  const t = el("table", { class: "data" });
  for (const [k, v] of pairs) t.append(el("tr", {}, el("th", { class: "text", text: k }), el("td", { class: "text", text: v == null ? "—" : String(v) })));
  return t;
}

function renderManifest(d) {
  const m = d.manifest, box = document.getElementById("manifest-body");
  box.replaceChildren();
  box.append(kv([["report generated", d.generated_at], ["report engine version", m.report_engine_version],
    ["suite", `${m.suite.name} ${m.suite.version}`], ["suite file", m.suite.source], ["suite loaded", m.suite.loaded_at],
    ["data checksums", "not recorded in the database; the data manifest (benchmark/sources.toml, docs/data.md) pins them"]]));
  box.append(el("h3", { text: "Runs" }));
  const runs = el("table", { class: "data" });
  fillTable(runs, ["run_id", "started_at", "finished_at", "engine_version", "suite_version", "outcome"].map(
    k => ({ label: k, text: true, value: r => r[k] })), m.runs);
  box.append(runs, el("h3", { text: "Models (identities; keys are never stored)" }));
  const models = el("table", { class: "data" });
  fillTable(models, [{ label: "name", text: true, value: r => r.name }, { label: "provider", text: true, value: r => r.provider },
    { label: "model id", text: true, value: r => r.model_id }, { label: "endpoint", text: true, value: r => r.base_url },
    { label: "versions reported", text: true, value: r => (r.model_versions || []).join(", ") },
    { label: "metadata", text: true, value: r => JSON.stringify(r.metadata || {}) }], m.models);
  box.append(models, el("h3", { text: "Stamps per dataset" }));
  const stamps = el("table", { class: "data" });
  fillTable(stamps, [{ label: "dataset", text: true, value: r => r.dataset },
    { label: "prompt hashes", text: true, value: r => (r.prompt_hashes || []).join(", ") },
    { label: "scorer versions", text: true, value: r => (r.scorer_versions || []).join(", ") },
    { label: "first", text: true, value: r => r.first }, { label: "last", text: true, value: r => r.last }], m.stamps);
  box.append(stamps);
}

function renderLive(live) {
  document.getElementById("live").hidden = false;
  document.getElementById("nav-live").hidden = false;
  document.getElementById("live-status").textContent = `(${live.state}, updated ${new Date().toLocaleTimeString()})`;
  const bar = r => { const p = el("span", { class: "progress" }); p.append(el("span", { style: `width:${r.total ? 100 * r.done / r.total : 0}%` })); return p; };
  fillTable(document.getElementById("live-table"), [
    { label: "Model", text: true, value: r => r.model }, { label: "Progress", text: true, value: r => r.done, show: bar },
    { label: "Done", value: r => r.done, show: r => `${int(r.done)} / ${int(r.total)}` },
    { label: "Items/s", value: r => r.rate, show: r => fmt(r.rate, 1) }, { label: "Errors", value: r => r.errors },
    { label: "429s", value: r => r.throttled }, { label: "Cost so far", value: r => r.cost_usd, show: r => usd(r.cost_usd) },
    // An interactive suite: this run's episodes (finished of started) and the turns stored.
    ...(live.models.some(r => r.episodes != null) ? [
      { label: "Episodes", value: r => r.episodes, show: r => `${int(r.episodes_done)} / ${int(r.episodes)}`,
        title: "episodes with their result stored / played this run (read from the file: may trail Done)" },
      { label: "Turns", value: r => r.turns, title: "turns (companion and seeker messages) stored this run" }] : [])],
    live.models);
  if (live.units) renderUnits(live.units);
}

// A cluster sweep's units, one row per attempt: the node it ran on (Ray's id, shortened), and how it ended.
function renderUnits(units) {
  document.getElementById("live-units").hidden = false;
  const running = {};
  for (const u of units) running[u.node.slice(0, 8)] = (running[u.node.slice(0, 8)] || 0) + (u.status === "running");
  document.getElementById("live-nodes").textContent = "(" + Object.entries(running).map(
    ([n, k]) => `node ${n}: ${k} running`).join("; ") + ")";
  fillTable(document.getElementById("live-units-table"), [
    { label: "Node", text: true, value: r => r.node.slice(0, 8) }, { label: "Model", text: true, value: r => r.model },
    { label: "Dataset", text: true, value: r => r.dataset }, { label: "Attempt", value: r => r.attempt },
    { label: "Status", text: true, value: r => r.status }], units);
}

function renderAll(d) {
  R.data = d;
  document.getElementById("subtitle").textContent =
    `${d.suite.title || d.suite.suite} — ${d.suite.suite} ${d.suite.version}; ${d.leaderboard.length} models; generated ${d.generated_at}`;
  renderLeaderboard(d); renderFigures(d); renderDrilldown(d); renderCoverage(d); renderCosts(d); renderManifest(d);
  initItems(d);
}

async function poll() {
  try {
    const res = await fetch("api/live", { cache: "no-store" });
    if (res.ok) {
      const live = await res.json();
      renderLive(live);
      if (live.report) renderAll(live.report);
      if (live.state === "finished") return;
    }
  } catch (e) { document.getElementById("live-status").textContent = "(not reachable: the sweep has ended?)"; return; }
  setTimeout(poll, 2000);
}

async function start() {
  if (R.mode === "static") renderAll(JSON.parse(document.getElementById("report-data").textContent));
  else if (R.mode === "live") poll();  // api/live carries the report too
  else {
    const res = await fetch("api/report", { cache: "no-store" });
    renderAll(await res.json());
  }
}
document.addEventListener("DOMContentLoaded", start);
