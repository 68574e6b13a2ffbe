// A section's source lines drawn for the ppkit serve page (loaded before app.js, which calls sectionNodes and
// figures; these call app.js's el when they run): Markdown read line by line (headings, bullets, bold), Markdown pipe tables and HTML tables rebuilt as
// tables from their cells' text (a small tokenizer: the HTML is never parsed by the browser), PDF pages marked.
// The cited lines are lit: a line, or a table row whose source lines meet them; in a cited row the cell whose
// figure the answer states (first), and the header cells above it (its period).
"use strict";

const MD_SEP = /^\|?(\s*:?-{3,}:?\s*\|)+\s*(:?-{3,}:?\s*)?$/;
const HTML_TABLE = /^<(table|thead|tbody|tr)\b/i;

function segments(lines) {  // [{kind: "html" | "md" | "line", lines}]: the tables apart from the other lines
  const out = [];
  for (let i = 0; i < lines.length;) {
    const t = lines[i].text.trim();
    let j = i + 1;
    if (HTML_TABLE.test(t)) {  // to </table>; without one, to the first line that is not markup
      const close = lines.findIndex((l, k) => k >= i && /<\/table>/i.test(l.text));
      const opened = lines.findIndex((l, k) => k > i && /^<table\b/i.test(l.text.trim()));
      if (close >= 0 && (opened < 0 || opened > close)) j = close + 1;
      else while (j < lines.length && lines[j].text.trim().startsWith("<")) j++;
      out.push({ kind: "html", lines: lines.slice(i, j) });
    } else if (t.startsWith("|") && i + 1 < lines.length && MD_SEP.test(lines[i + 1].text.trim())) {
      while (j < lines.length && lines[j].text.trim().startsWith("|")) j++;
      out.push({ kind: "md", lines: lines.slice(i, j) });
    } else out.push({ kind: "line", lines: [lines[i]] });
    i = j;
  }
  return out;
}

const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'", nbsp: " " };

function cellText(html) {  // a cell's text: tags out, entities decoded, Markdown emphasis out
  return html.replace(/<br\s*\/?>/gi, " ").replace(/<[^>]*>/g, "")
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e) => e[0] === "#"
      ? String.fromCodePoint(e[1].toLowerCase() === "x" ? parseInt(e.slice(2), 16) : +e.slice(1))
      : (ENTITIES[e.toLowerCase()] ?? m))
    .replace(/\*\*|__/g, "").replace(/\s+/g, " ").trim();
}

function htmlRows(lines) {  // rows {start, end, head, cells: [{text, colspan, th}]} with their source lines
  const starts = [];
  let src = "";
  for (const l of lines) { starts.push(src.length); src += l.text + "\n"; }
  const lineAt = (pos) => { let k = 0; while (k + 1 < starts.length && starts[k + 1] <= pos) k++; return lines[k].line; };
  const rows = [];
  let row = null, cell = null, inHead = false;
  for (const m of src.matchAll(/<(\/?)(thead|tbody|tr|td|th)\b([^>]*)>/gi)) {
    const close = m[1] === "/", name = m[2].toLowerCase(), at = lineAt(m.index);
    if (name === "thead") inHead = !close;
    else if (name === "tbody") inHead = false;
    else if (name === "tr" && !close) rows.push(row = { start: at, end: at, head: inHead, cells: [] });
    else if (name === "tr" && row) { row.end = at; row = null; }
    else if (!close) {
      if (!row) rows.push(row = { start: at, end: at, head: inHead, cells: [] });
      const span = /colspan\s*=\s*["']?(\d+)/i.exec(m[3]);
      row.cells.push(cell = { text: "", colspan: span ? Math.max(1, +span[1]) : 1, th: name === "th",
                              from: m.index + m[0].length });
    } else if (cell) { cell.text = cellText(src.slice(cell.from, m.index)); row.end = Math.max(row.end, at); cell = null; }
  }
  for (const r of rows) if (!r.head && r.cells.length && r.cells.every((c) => c.th)) r.head = true;
  if (rows.length && !rows.some((r) => r.head)) rows[0].head = true;  // no header marked: the first row
  return rows;
}

function mdRows(lines) {  // a pipe table's rows; its second line (--- | ---) is the header's rule
  const split = (t) => t.trim().replace(/^\|/, "").replace(/(?<!\\)\|$/, "").split(/(?<!\\)\|/)
    .map((c) => cellText(c.replace(/\\\|/g, "|")));
  return lines.filter((_, k) => k !== 1).map((l, k) => ({ start: l.line, end: l.line, head: k === 0,
    cells: split(l.text).map((text) => ({ text, colspan: 1, th: k === 0 })) }));
}

function figures(text) {  // number -> where it first appears in text ("$1,250" and "(1,250)" both "1250")
  const out = new Map();
  for (const m of (text || "").matchAll(/(?<![\w.])\d[\d,]*(?:\.\d+)?/g)) {
    const n = m[0].replace(/,/g, "");
    if (!out.has(n)) out.set(n, m.index);
  }
  return out;
}

function tableView(rows, lit, stated) {  // a <table> of the rows; lit(first, last): whether a line range is cited
  let col = 0;
  for (const r of rows) { col = 0; for (const c of r.cells) { c.col = col; col += c.colspan; } r.width = col; }
  const width = Math.max(1, ...rows.map((r) => r.width));
  const table = el("table", { class: "src-table" }), head = el("thead"), body = el("tbody");
  for (const r of rows) {
    r.node = el("tr", { "data-line": String(r.start), "data-end": String(r.end) },
      el(r.head ? "th" : "td", { class: "no", text: String(r.start) }));
    for (const c of r.cells) {
      c.node = el(r.head || c.th ? "th" : "td", { text: c.text });
      if (c.colspan > 1) c.node.colSpan = c.colspan;
      r.node.append(c.node);
    }
    (r.head && !body.children.length ? head : body).append(r.node);
  }
  for (const r of rows) {
    if (!lit(r.start, r.end)) continue;
    r.node.classList.add("hl");
    if (r.head) continue;
    // the cited cell: the one whose figure the answer states first; then the headers above it (its period)
    let best = null, pos = Infinity;
    for (const c of r.cells) {
      const n = (c.text.match(/\d[\d,]*(?:\.\d+)?/) || [""])[0].replace(/,/g, "");
      if (n && (c.col > 0 || r.cells.length === 1) && stated.has(n) && stated.get(n) < pos) { best = c; pos = stated.get(n); }
    }
    if (!best) continue;
    best.node.classList.add("hl-cell");
    for (const h of rows) {
      if (!h.head) continue;
      for (const c of h.cells) {
        if (c.text && c.colspan < width && c.col <= best.col && best.col < c.col + c.colspan) c.node.classList.add("hl-head");
      }
    }
  }
  table.append(head, body);
  return el("div", { class: "scroll-x" }, table);
}

function inline(target, text) {  // **bold**, images and links of a Markdown line, as text
  for (const part of text.split(/(\*\*[^*]+\*\*|!\[[^\]]*\]\([^)]*\)|\[[^\]]+\]\([^)]*\))/)) {
    if (/^\*\*[^*]+\*\*$/.test(part)) target.append(el("strong", { text: part.slice(2, -2) }));
    else if (part.startsWith("![")) target.append(el("em", { text: "[image: " + (part.slice(2, part.indexOf("]")) || "figure") + "]" }));
    else if (/^\[[^\]]+\]\(/.test(part)) target.append(part.slice(1, part.indexOf("]")));
    else target.append(part);
  }
}

function lineView(l, hl) {  // one source line, Markdown read: a heading, a bullet, a paragraph
  const tx = el("span", { class: "tx" });
  let t = l.text;
  const h = /^(#{1,6})\s+(.*)$/.exec(t), li = /^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$/.exec(t);
  if (h) { tx.classList.add("h"); t = h[2]; }
  else if (li) { tx.append(li[1] + "• "); t = li[2]; }
  inline(tx, t);
  return el("div", { class: hl ? "ln hl" : "ln", "data-line": String(l.line) }, el("span", { class: "no", text: String(l.line) }), tx);
}

function sectionNodes(s, marks, stated) {  // the nodes of a section (GET /v1/sections): marks [[first, last], ...]
  const lit = (a, b) => marks.some(([x, y]) => a <= y && b >= x);
  const pageOf = (line) => (s.pages.find((p) => p.line_start <= line && line <= p.line_end) || {}).page;
  const out = [];
  let page = null;
  for (const seg of segments(s.lines)) {
    const first = pageOf(seg.lines[0].line), last = pageOf(seg.lines[seg.lines.length - 1].line);
    if (first != null && first !== page) {
      out.push(el("div", { class: "page-mark", text: last != null && last !== first ? "Pages " + first + "-" + last : "Page " + first }));
    }
    page = last ?? first ?? page;
    if (seg.kind === "line") out.push(lineView(seg.lines[0], lit(seg.lines[0].line, seg.lines[0].line)));
    else out.push(tableView(seg.kind === "html" ? htmlRows(seg.lines) : mdRows(seg.lines), lit, stated));
  }
  if (s.truncated) out.push(el("p", { class: "hint", text: "The first " + s.lines.length + " lines are shown." }));
  return out;
}
