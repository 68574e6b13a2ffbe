// The ppkit serve page: plain JavaScript over the server's routes (docs/serve.md). Text from the server is
// always set with textContent, never parsed as HTML (a section's HTML tables are read by a small tokenizer here
// and rebuilt from their cells' text).
"use strict";

const $ = (id) => document.getElementById(id);
const HISTORY_TURNS = 6;  // earlier turns sent with a question (the server takes up to 20)
const KEPT_TURNS = 20;  // turns the conversation keeps and lists
const state = {
  docs: [], token: sessionStorage.getItem("ppkit-token") || "",
  turns: [],        // the conversation: {asked, question (as searched), answer (the block's text), docs}
  answer: null,     // the answer shown: {block, text, sections, cited, refs, docs, mode}
  asking: null,     // the AbortController of the question being answered
  view: 0,          // bumped whenever the answer or the section shown changes: late responses are dropped
};

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "onclick") node.addEventListener("click", v);
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

async function api(path, options = {}) {
  const headers = Object.assign({}, options.headers || {});
  if (state.token) headers["Authorization"] = "Bearer " + state.token;
  const response = await fetch(path, Object.assign({}, options, { headers }));
  if (response.status === 401) {
    $("token-form").hidden = false;
    $("token").focus();
  }
  return response;
}

async function errorText(response) {
  try {
    const body = await response.json();
    return (body.error && body.error.message) || response.statusText;
  } catch (e) {
    return response.status + " " + response.statusText;
  }
}

// ---- documents and filters -------------------------------------------------------------------------------
function fillFilter(id, values) {
  const select = $(id);
  const kept = select.value;
  select.replaceChildren(el("option", { value: "", text: "all" }));
  for (const v of [...new Set(values.filter((x) => x))].sort()) select.append(el("option", { value: v, text: v }));
  select.value = [...select.options].some((o) => o.value === kept) ? kept : "";
}

function shownDocs() {
  const company = $("filter-company").value, period = $("filter-period").value, form = $("filter-form").value;
  return state.docs.filter((d) => (!company || d.company === company) && (!period || d.period === period)
    && (!form || d.form === form));
}

function docActions(d) {  // the last cell of a document's row: its buttons (Edit: what the document is, below)
  return el("td", { class: "actions" }, editButton(d),
            el("button", { type: "button", class: "remove", "aria-label": "Remove " + d.name,
                           text: "Remove", onclick: () => removeDoc(d.name) }));
}

function docRow(d) {  // data-label: a field's name where a narrow screen shows the row as a card
  const field = (label, value) => el("td", { "data-label": label, text: value == null ? "" : String(value) });
  return el("tr", { "data-doc": d.name }, el("td", { text: d.name }), field("Company", d.company),
    field("Period", d.period), field("Form", d.form), field("Pages", d.pages), docActions(d));
}

function renderDocs() {
  $("documents").querySelector("tbody").replaceChildren(...shownDocs().map(docRow));
}

async function loadDocs() {
  const response = await api("/v1/documents");
  if (!response.ok) return;
  state.docs = (await response.json()).documents;
  fillFilter("filter-company", state.docs.map((d) => d.company));
  fillFilter("filter-period", state.docs.map((d) => d.period));
  fillFilter("filter-form", state.docs.map((d) => d.form));
  renderDocs();
}

async function removeDoc(name) {
  if (!window.confirm("Remove " + name + " from the index?")) return;
  const status = $("upload-status");
  status.textContent = "Removing " + name + " ...";
  const response = await api("/v1/documents/" + encodeURIComponent(name), { method: "DELETE" });
  status.textContent = response.ok ? "Removed " + name + "." : "Not removed: " + (await errorText(response));
  status.classList.toggle("error", !response.ok);
  if (response.ok) forgetDoc(name);
  await loadDocs();
}

function forgetDoc(name) {  // a removed document's answer, links and turns go
  const a = state.answer;
  if (a && a.docs.has(name)) {
    clearAnswer();
    $("ask-status").textContent = "The answer shown came from " + name + ", which was removed.";
  }
  state.turns = state.turns.filter((t) => !t.docs.includes(name));
  renderTurns();
}

// ---- upload with a progress bar driven by the job ------------------------------------------------------------
function jobLine(job, clock) {  // "name: stage, pages, time left": the server's estimate counted down on this clock
  const now = performance.now();
  if (job.eta_seconds != null && job.eta_seconds > 0.5) {  // 0.5: the server's floor once its estimate ran out
    const end = now + job.eta_seconds * 1000;  // the server's estimate from its measured rates
    if (clock.end === null || Math.abs(end - clock.end) > 1500) clock.end = end;
  }
  const pages = job.pages_total ? ", pages " + job.pages_done + " of " + job.pages_total : "";
  let left = "";
  if (job.state === "running" && clock.end !== null) {
    const s = (clock.end - now) / 1000;
    left = s >= 1 ? ", about " + Math.ceil(s) + " s left"
      : ", longer than estimated: " + Math.round((now - clock.began) / 1000) + " s so far";
  }
  return job.name + ": " + job.stage + pages + left;
}

async function upload(event) {
  event.preventDefault();
  const file = $("upload-file").files[0];
  if (!file) return;
  const status = $("upload-status"), bar = $("upload-progress");
  const form = new FormData();
  form.append("file", file);
  appendAbout(form);
  bar.value = 0;
  status.classList.remove("error");
  status.textContent = "Uploading " + file.name + " ...";
  const response = await api("/v1/documents", { method: "POST", body: form });
  if (response.status !== 202) {
    status.textContent = "Refused: " + (await errorText(response));
    status.classList.add("error");
    return;
  }
  let job = (await response.json()).job;
  const clock = { began: performance.now(), end: null };
  while (job.state !== "done" && job.state !== "failed") {
    bar.value = job.progress;
    status.textContent = jobLine(job, clock);
    await new Promise((r) => setTimeout(r, 400));
    const poll = await api("/v1/jobs/" + job.id);
    if (!poll.ok) { status.textContent = await errorText(poll); status.classList.add("error"); return; }
    job = (await poll.json()).job;
  }
  bar.value = job.state === "done" ? 1 : 0;
  status.textContent = job.state === "done" ? job.name + ": indexed" : job.name + ": failed: " + job.error.message;
  status.classList.toggle("error", job.state === "failed");
  $("upload-file").value = "";
  for (const k of ABOUT) aboutField(k).value = "";
  await loadDocs();
}

// ---- the conversation ----------------------------------------------------------------------------------------
function renderTurns() {  // the turns before the answer shown
  const earlier = state.turns.filter((t) => !state.answer || t !== state.answer.turn);
  $("conversation").hidden = earlier.length === 0;
  $("conversation-title").textContent = "Conversation (" + earlier.length + " earlier turn"
    + (earlier.length === 1 ? ")" : "s)");
  $("turns").replaceChildren(...earlier.map((t) => el("li", {},
    el("b", { text: "Q: " }), t.asked,
    t.question !== t.asked ? el("span", { class: "read-as", text: " (read as: " + t.question + ")" }) : "",
    el("br"), el("b", { text: "A: " }), t.answer)));
}

function newConversation() {
  if (state.asking) state.asking.abort();
  state.turns = [];
  clearAnswer();
  $("ask-status").textContent = "New conversation.";
  renderTurns();
  $("question").value = "";
  $("question").focus();
}

// ---- citations: from the answer's data (block citations, sections, cited sections) ---------------------------
function where(c) {  // "acme#0010 line 40, p. 2"
  const lines = c.line_start === c.line_end ? " line " + c.line_start : " lines " + c.line_start + "-" + c.line_end;
  const pages = c.pages && c.pages.length ? ", p. " + c.pages.join(", ") : "";
  return c.doc + "#" + c.node + lines + pages;
}

// a link that opens a section with lines lit: marks [[first, last], ...] (null: every line the answer cites in it);
// said: the text whose figures choose the cell lit in a cited table row (null: the answer's block, then its text)
function citeLink(doc, node, marks, label, said) {
  return el("a", { href: "#" + encodeURIComponent(doc) + "/" + node, class: "cite", "data-doc": doc, "data-node": node,
                   text: label, onclick: (e) => { e.preventDefault(); openSection(doc, node, marks, said); } });
}

function marksFor(doc, node) {  // the lines the answer cites in a section: its block's citations and its text's
  const a = state.answer;
  if (!a) return [];
  const marks = [];
  for (const c of (a.block && a.block.citations) || []) {
    if (c.doc === doc && c.node === node) marks.push([c.line_start, c.line_end]);
  }
  for (const r of a.refs) if (r.doc === doc && r.node === node && r.lines) marks.push(r.lines);
  return marks;
}

function knownSections() {  // every (doc, node) the answer's data names, with its lines when known
  const a = state.answer;
  return [...a.sections.map((s) => ({ doc: s.doc, node: s.node_id, start: s.line_start, end: s.line_end })),
    ...((a.block && a.block.citations) || []).map((c) => ({ doc: c.doc, node: c.node, start: c.line_start, end: c.line_end })),
    ...a.cited.filter((c) => c.doc).map((c) => ({ doc: c.doc, node: c.node_id }))];
}

// the document of a node id the text names: the one holding the line (if given), else the one whose name begins
// the breadcrumb written before the id ("- acme > … > Balance Sheets (ID: 0010)"), else the first
function resolveNode(node, line, before) {
  const found = knownSections().filter((s) => s.node === node);
  const holding = line == null ? [] : found.filter((s) => s.start != null && s.start <= line && line <= s.end);
  const named = found.filter((s) => before.trimStart().replace(/^-\s+/, "").startsWith(s.doc + " >"));
  return (holding[0] || named[0] || found[0] || {}).doc || null;
}

// ppkit's own references in an answer's text, made links to the sections the answer's data names:
// "acme#0010 line 40", "line 2190 (ID: 0089)", "(ID: 0089)"; and under "From <section> (lines 34-41):" each
// "- line 40: ..." quoted from that section. A reference no section of the answer matches stays text.
const REF = /([A-Za-z0-9][\w.&-]*)#(\d{4})(?: lines? (\d+)(?:\s*-\s*(\d+))?)?|\blines? (\d+)(?:\s*-\s*(\d+))? \(ID: (\d{4})\)|\(ID: (\d{4})\)/g;
const FROM = /^From (.+) \((?:.*?, )?lines (\d+)-(\d+)\):\s*$/;
const QUOTED = /^(\s*-\s+)(lines? (\d+)(?:-(\d+))?)/;

function fromSection(line) {  // the section a "From ... (lines a-b):" line names
  const m = FROM.exec(line);
  if (!m) return null;
  const root = m[1].split(" > ")[0];
  const same = state.answer.sections.filter((s) => s.line_start === +m[2] && s.line_end === +m[3]);
  const s = same.find((x) => x.breadcrumb.split(" > ")[0] === root) || same[0];
  return s ? { doc: s.doc, node: s.node_id } : null;
}

function renderText() {  // the answer's text with its references as links; state.answer.refs: what they name
  const a = state.answer, out = $("answer-text");
  a.refs = [];
  out.replaceChildren();
  let from = null;
  for (const [i, line] of a.text.split("\n").entries()) {
    if (i) out.append("\n");
    if (FROM.test(line)) from = fromSection(line);
    else if (!/^\s*-\s/.test(line)) from = null;
    const quoted = from && QUOTED.exec(line);
    let at = 0;
    if (quoted) {
      const lines = [+quoted[3], +(quoted[4] || quoted[3])];
      a.refs.push({ doc: from.doc, node: from.node, lines });
      out.append(quoted[1], citeLink(from.doc, from.node, [lines], quoted[2], blockText() + "\n" + line));
      at = quoted[0].length;
    }
    const rest = line.slice(at);
    let k = 0;
    for (const m of rest.matchAll(REF)) {
      let doc, node, lines = null;
      if (m[2]) { doc = m[1]; node = m[2]; lines = m[3] ? [+m[3], +(m[4] || m[3])] : null; }
      else if (m[7]) { node = m[7]; lines = [+m[5], +(m[6] || m[5])]; doc = resolveNode(node, lines[0], line); }
      else { node = m[8]; doc = resolveNode(node, null, line); }
      if (!doc) continue;
      a.refs.push({ doc, node, lines });
      out.append(rest.slice(k, m.index), citeLink(doc, node, lines ? [lines] : null, m[0], blockText() + "\n" + line));
      k = m.index + m[0].length;
    }
    out.append(rest.slice(k));
  }
}

// ---- the answer ----------------------------------------------------------------------------------------------
function clearAnswer() {  // every view of the answer shown, and the section opened from it
  state.view += 1;
  state.answer = null;
  $("answer-block").hidden = true;
  $("answer-block").replaceChildren();
  $("answer-text").replaceChildren();
  $("citations").replaceChildren();
  $("breadcrumbs").replaceChildren();
  closeSection();
  $("ask-status").classList.remove("error");
}

function renderBlock(block) {
  const box = $("answer-block");
  box.hidden = false;
  box.replaceChildren(el("div", { class: "kind" }, el("span", { text: block.kind.replaceAll("_", " ") }),
                         el("span", { id: "answer-mode", class: "mode", hidden: "" })),
                      el("div", { class: "block-text", text: block.text }));
  const cites = block.citations || [];
  const link = (c) => citeLink(c.doc, c.node, [[c.line_start, c.line_end]], where(c), block.text);
  if (cites.length) box.append(el("div", { class: "block-cites" }, ...cites.flatMap((c, i) => [i ? "; " : "", link(c)])));
  $("citations").prepend(...cites.map((c) => el("li", {}, link(c))));
}

function renderVerdict(report) {  // "verified" only when the block's quotes check and it answers the question
  const v = report && report.verdict, status = $("ask-status");
  if (!v) { status.textContent = report ? "Verification: " + (report.ok ? "OK." : "problems found.") : "Not verified."; return; }
  const box = $("answer-block");  // the verdict under the block, its kind and confidence beside it
  if (!box.hidden) box.append(el("div", { id: "answer-verdict", class: "verdict " + v.status,
                                          text: "[" + v.label + "]" + (v.beside ? " (" + v.beside + ")" : "") }));
  status.textContent = v.status === "verified" ? "Verified." : v.label.charAt(0).toUpperCase() + v.label.slice(1) + ".";
}

function renderMode(mode) {  // who wrote the answer: a small label, never a banner in the text
  let label = $("answer-mode");
  if (!label) {
    renderBlock({ kind: "answer", text: "", citations: [] });
    label = $("answer-mode");
  }
  label.hidden = false;
  label.textContent = mode;
  label.title = mode === "gemini" ? "written by Gemini from the cited sections"
    : "offline: extractive, quoted from the sources (no language model)";
}

function addCitation(c) {  // a section the answer's text cites
  state.answer.cited.push(c);
  const label = c.breadcrumb || c.node_id;
  $("citations").append(el("li", {}, c.doc ? citeLink(c.doc, c.node_id, null, label)
    : el("span", { text: label + " (not among the sections retrieved)" })));
}

function renderSections(sections) {
  state.answer.sections = sections;
  for (const s of sections) state.answer.docs.add(s.doc);
  $("breadcrumbs").replaceChildren(...sections.map((s) => {
    const pages = s.pages && s.pages.length ? ", p. " + s.pages.join(", ") : "";
    return el("li", {}, citeLink(s.doc, s.node_id, null, s.breadcrumb),
      el("span", { class: "where", text: " (lines " + s.line_start + "-" + s.line_end + pages + ")" }),
      el("span", { class: "score", text: " score " + s.score }));
  }));
}

async function* sseEvents(response) {  // {type, data} of each Server-Sent Event
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const message = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let type = "message", data = "";
      for (const line of message.split("\n")) {
        if (line.startsWith("event: ")) type = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      yield { type, data: JSON.parse(data) };
    }
  }
}

async function ask(event) {
  event.preventDefault();
  const asked = $("question").value.trim();
  if (!asked) return;
  if (state.asking) state.asking.abort();
  const control = state.asking = new AbortController();
  clearAnswer();
  const a = state.answer = { block: null, text: "", sections: [], cited: [], refs: [], docs: new Set(), mode: null,
                             question: asked, turn: null };
  renderTurns();
  const status = $("ask-status"), began = performance.now();
  status.textContent = "Asking ...";
  const body = { question: asked, k: +$("k").value };
  const history = state.turns.slice(-HISTORY_TURNS)  // a rewritten question may pass the server's 2,000 characters
    .map((t) => ({ question: t.question.slice(0, 2000), answer: t.answer }));
  if (history.length) body.history = history;
  const shown = shownDocs();
  if (shown.length && shown.length < state.docs.length) body.docs = shown.map((d) => d.name);
  try {
    const response = await api("/v1/ask/stream", { method: "POST", headers: { "Content-Type": "application/json" },
                                                   body: JSON.stringify(body), signal: control.signal });
    if (!response.ok) throw new Error(await errorText(response));
    for await (const { type, data } of sseEvents(response)) {
      if (state.answer !== a) return;  // a newer question, or New conversation
      if (type === "analysis") {
        a.question = data.question || asked;
        const docs = (data.filters && data.filters.docs) || body.docs || [];
        status.textContent = "Searching " + (docs.join(", ") || "all documents") + " ...";
      }
      else if (type === "sections") renderSections(data.sections);
      else if (type === "answer") {
        a.block = data;
        for (const c of data.citations || []) a.docs.add(c.doc);
        renderBlock(data);
      }
      else if (type === "delta") { a.text += data.text; renderText(); }
      else if (type === "citation") { if (data.doc) a.docs.add(data.doc); addCitation(data); }
      else if (type === "verification") renderVerdict(data.report);
      else if (type === "done") {
        a.mode = data.mode;
        renderText();  // every reference now resolvable: the cited sections are known
        if (data.mode) renderMode(data.mode);
        a.turn = { asked, question: a.question, answer: a.block ? a.block.text : a.text.split("\n")[0],
                   docs: [...a.docs] };
        state.turns = [...state.turns, a.turn].slice(-KEPT_TURNS);
        renderTurns();
        status.textContent += " Done in " + ((performance.now() - began) / 1000).toFixed(2) + " s.";
      }
      else if (type === "error") throw new Error(data.message);
    }
  } catch (e) {
    if (e.name === "AbortError" || state.answer !== a) return;
    status.textContent = "Error: " + e.message;
    status.classList.add("error");
  } finally {
    if (state.asking === control) state.asking = null;
  }
}

// ---- a section (its source lines drawn by section.js), the cited lines lit ------------------------------------
function closeSection() {
  $("section-view").hidden = true;
  $("section-lines").replaceChildren();
  $("section-title").textContent = "";
  $("section-pages").textContent = "";
}

async function fetchSection(doc, node, subtree) {
  return api("/v1/sections/" + encodeURIComponent(doc) + "/" + node + (subtree ? "?subtree=true" : ""));
}

function blockText() {
  return state.answer && state.answer.block ? state.answer.block.text : "";
}

async function openSection(doc, node, marks, said) {
  const view = ++state.view;  // a later click, a new answer or a removal makes this one stale
  marks = marks || marksFor(doc, node);
  said = said ?? blockText() + "\n" + (state.answer ? state.answer.text : "");
  let response = await fetchSection(doc, node, false);
  if (view !== state.view) return;
  $("section-view").hidden = false;
  if (!response.ok) { $("section-lines").replaceChildren(); $("section-title").textContent = await errorText(response); return; }
  let s = await response.json();
  const inside = (x) => marks.some(([a, b]) => b >= x.line_start && a <= x.line_end);
  if (marks.length && !inside(s)) {  // cited lines below the section's own text: the node with all under it
    response = await fetchSection(doc, node, true);
    if (view !== state.view) return;
    if (response.ok) s = await response.json();
  }
  if (view !== state.view) return;
  renderSection(s, marks, figures(said));
}

function renderSection(s, marks, stated) {  // stated: the figures that choose a cited row's cell (figures())
  $("section-title").textContent = s.breadcrumb + " (lines " + s.line_start + "-" + s.line_end + ")";
  $("section-pages").textContent = s.pages.length
    ? "PDF pages " + [...new Set(s.pages.map((p) => p.page))].join(", ") : "No PDF pages (a Markdown document).";
  const box = $("section-lines");
  box.replaceChildren(...sectionNodes(s, marks, stated));
  box.focus({ preventScroll: true });
  const target = box.querySelector(".hl-cell") || box.querySelector(".hl");
  if (!target) { $("section-view").scrollIntoView({ block: "nearest" }); return; }
  target.scrollIntoView({ block: "center", inline: "nearest" });
  const wide = target.closest(".scroll-x");  // a wide table: its row's label in view too when the cell allows
  if (wide && target.offsetLeft + target.offsetWidth <= wide.clientWidth) wide.scrollLeft = 0;
}

// ---- what a document is: company, period, form (issue 47) ---------------------------------------------------
// The upload's three fields are prefilled from the file's cover page (POST /v1/documents/cover) when a file is
// chosen and sent with it; each row of the documents table has an Edit button (PATCH /v1/documents/{name}).
const ABOUT = ["company", "period", "form"];
const aboutField = (k) => $(k === "form" ? "upload-form-type" : "upload-" + k);

async function prefillAbout() {
  const file = $("upload-file").files[0];
  for (const k of ABOUT) aboutField(k).value = "";
  if (!file) return;
  const form = new FormData();
  form.append("file", file);
  const response = await api("/v1/documents/cover", { method: "POST", body: form });
  if (!response.ok) return;  // the upload itself will say what is wrong with the file
  const cover = (await response.json()).cover;
  for (const k of ABOUT) if (!aboutField(k).value && cover[k]) aboutField(k).value = cover[k];
}

function appendAbout(form) {
  for (const k of ABOUT) {
    const v = aboutField(k).value.trim();
    if (v) form.append(k, v);
  }
}

function editButton(d) {
  return el("button", { type: "button", class: "edit", "aria-label": "Edit " + d.name, text: "Edit",
                        onclick: () => openEdit(d) });
}

function openEdit(d) {
  const box = $("edit-form");
  box.dataset.doc = d.name;
  $("edit-title").textContent = "What " + d.name + " is";
  $("edit-company").value = d.company || "";
  $("edit-period").value = d.period || "";
  $("edit-form-type").value = d.form || "";
  box.hidden = false;
  $("edit-company").focus();
}

async function saveEdit(event) {
  event.preventDefault();
  const name = $("edit-form").dataset.doc, status = $("upload-status");
  const body = { company: $("edit-company").value.trim(), period: $("edit-period").value.trim(),
                 form: $("edit-form-type").value.trim() };
  const response = await api("/v1/documents/" + encodeURIComponent(name), {
    method: "PATCH", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  status.textContent = response.ok ? "Saved what " + name + " is." : "Not saved: " + (await errorText(response));
  status.classList.toggle("error", !response.ok);
  if (response.ok) $("edit-form").hidden = true;
  await loadDocs();
}

function listenAbout() {
  $("upload-file").addEventListener("change", prefillAbout);
  $("edit-form").addEventListener("submit", saveEdit);
  $("edit-cancel").addEventListener("click", () => { $("edit-form").hidden = true; });
}

document.addEventListener("DOMContentLoaded", () => {
  listenAbout();
  $("ask-form").addEventListener("submit", ask);
  $("new-conversation").addEventListener("click", newConversation);
  $("upload-form").addEventListener("submit", upload);
  for (const id of ["filter-company", "filter-period", "filter-form"]) $(id).addEventListener("change", renderDocs);
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    state.token = $("token").value;
    sessionStorage.setItem("ppkit-token", state.token);
    $("token-form").hidden = true;
    loadDocs();
  });
  loadDocs();
});
