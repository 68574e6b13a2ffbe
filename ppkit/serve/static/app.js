// The ppkit serve page: plain JavaScript over the server's routes (docs/serve.md). Text from the server is
// always set with textContent, never parsed as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { docs: [], token: sessionStorage.getItem("ppkit-token") || "", cited: [] };

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

function renderDocs() {
  const body = $("documents").querySelector("tbody");
  body.replaceChildren();
  for (const d of shownDocs()) {
    const remove = el("button", { type: "button", class: "remove", "aria-label": "Remove " + d.name,
                                  text: "Remove", onclick: () => removeDoc(d.name) });
    body.append(el("tr", { "data-doc": d.name }, el("td", { text: d.name }), el("td", { text: d.company || "" }),
      el("td", { text: d.period || "" }), el("td", { text: d.form || "" }),
      el("td", { text: d.pages == null ? "" : String(d.pages) }), el("td", {}, editButton(d)), el("td", {}, remove)));
  }
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
  await loadDocs();
}

// ---- upload with a progress bar driven by the job ------------------------------------------------------------
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
  while (job.state !== "done" && job.state !== "failed") {
    bar.value = job.progress;
    const pages = job.pages_total ? ", pages " + job.pages_done + " of " + job.pages_total : "";
    const eta = job.eta_seconds != null ? ", about " + Math.ceil(job.eta_seconds) + " s left" : "";
    status.textContent = job.name + ": " + job.stage + pages + eta;
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

// ---- asking: the stream ------------------------------------------------------------------------------------
const CITE = /([A-Za-z0-9][\w.&-]*)#(\d{4})(?: lines? (\d+)(?:\s*-\s*(\d+))?)?/g;

function citeButton(doc, node, lines, label) {
  return el("button", { type: "button", class: "cite", "data-doc": doc, "data-node": node, text: label,
                        onclick: () => openSection(doc, node, lines) });
}

function renderText(text) {  // the answer's text with its "doc#node line N" references clickable
  const out = $("answer-text");
  out.replaceChildren();
  let at = 0;
  for (const m of text.matchAll(CITE)) {
    out.append(text.slice(at, m.index));
    const lines = m[3] ? [[+m[3], +(m[4] || m[3])]] : null;
    out.append(citeButton(m[1], m[2], lines, m[0]));
    at = m.index + m[0].length;
  }
  out.append(text.slice(at));
}

function linesIn(text, doc) {  // [start, end] ranges the text names for doc: "doc#0010 line 40", "(doc, lines 34-41)"
  const out = [];
  for (const m of text.matchAll(CITE)) if (m[1] === doc && m[3]) out.push([+m[3], +(m[4] || m[3])]);
  for (const m of text.matchAll(/line (\d+):/g)) out.push([+m[1], +m[1]]);  // quoted lines
  return out;
}

function addCitation(doc, node, label, lines) {
  const key = doc + "#" + node;
  if (state.cited.includes(key)) return;
  state.cited.push(key);
  $("citations").append(el("li", {}, citeButton(doc, node, lines, label)));
}

function renderBlock(block) {
  const box = $("answer-block");
  box.hidden = false;
  box.replaceChildren(el("div", { class: "kind", text: block.kind }), el("div", { text: block.text }));
  for (const c of block.citations || []) {
    const lines = c.line_start ? [[c.line_start, c.line_end]] : null;
    const where = !c.line_start ? "" : c.line_start === c.line_end ? " line " + c.line_start
      : " lines " + c.line_start + "-" + c.line_end;
    box.append(" ", citeButton(c.doc, c.node, lines, c.doc + "#" + c.node + where));
  }
}

function renderSections(sections) {
  const list = $("breadcrumbs");
  list.replaceChildren();
  for (const s of sections) {
    const pages = s.pages && s.pages.length ? ", p. " + s.pages.join(", ") : "";
    list.append(el("li", {}, citeButton(s.doc, s.node_id, null, s.breadcrumb),
      el("span", { class: "where", text: " (lines " + s.line_start + "-" + s.line_end + pages + ")" }),
      el("span", { class: "score", text: " score " + s.score })));
  }
}

async function ask(event) {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question) return;
  const status = $("ask-status");
  let text = "";
  state.cited = [];
  $("answer-block").hidden = true;
  $("answer-text").replaceChildren();
  $("citations").replaceChildren();
  $("breadcrumbs").replaceChildren();
  status.classList.remove("error");
  status.textContent = "Asking ...";
  $("ask-button").disabled = true;
  const body = { question, k: +$("k").value };
  const shown = shownDocs();
  if (shown.length && shown.length < state.docs.length) body.docs = shown.map((d) => d.name);
  try {
    const response = await api("/v1/ask/stream", { method: "POST", headers: { "Content-Type": "application/json" },
                                                   body: JSON.stringify(body) });
    if (!response.ok) throw new Error(await errorText(response));
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
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
        const payload = JSON.parse(data);
        if (type === "analysis") {
          const docs = (payload.filters && payload.filters.docs) || body.docs || [];
          status.textContent = "Searching " + (docs.join(", ") || "all documents") + " ...";
        }
        else if (type === "sections") renderSections(payload.sections);
        else if (type === "answer") renderBlock(payload);
        else if (type === "delta") { text += payload.text; renderText(text); }
        else if (type === "citation") addCitation(payload.doc, payload.node_id, payload.breadcrumb, null);
        else if (type === "verification") status.textContent = payload.report && payload.report.ok ? "Verified." : "Verification found problems.";
        else if (type === "done") status.textContent += " Done in " + (payload.seconds.total || 0).toFixed(2) + " s.";
        else if (type === "error") throw new Error(payload.message);
      }
    }
  } catch (e) {
    status.textContent = "Error: " + e.message;
    status.classList.add("error");
  } finally {
    $("ask-button").disabled = false;
  }
}

// ---- a section, its cited lines highlighted --------------------------------------------------------------
async function openSection(doc, node, lines) {
  const response = await api("/v1/sections/" + encodeURIComponent(doc) + "/" + node);
  const view = $("section-view");
  view.hidden = false;
  if (!response.ok) { $("section-title").textContent = await errorText(response); return; }
  const s = await response.json();
  const marks = lines || linesIn($("answer-text").textContent, doc).filter(([a, b]) => b >= s.line_start && a <= s.line_end);
  $("section-title").textContent = s.breadcrumb + " (lines " + s.line_start + "-" + s.line_end + ")";
  $("section-pages").textContent = s.pages.length
    ? "PDF pages " + s.pages.map((p) => p.page).join(", ") : "No PDF pages (a Markdown document).";
  const box = $("section-lines");
  box.replaceChildren();
  let first = null;
  for (const l of s.lines) {
    const hl = marks.some(([a, b]) => l.line >= a && l.line <= b);
    const row = el("div", { class: hl ? "ln hl" : "ln", "data-line": String(l.line) },
      el("span", { class: "no", text: String(l.line) }), el("span", { text: l.text }));
    if (hl && !first) first = row;
    box.append(row);
  }
  (first || box).scrollIntoView({ block: "nearest" });
  box.focus();
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
