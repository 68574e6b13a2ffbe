"""Question-set loaders, each format detected by content, returning plain shapes.

Three question sets are understood:

* **Comprehensive** (``.xlsx``): columns Qno, Company, Category, Question, Answer,
  Evidence; rows with an empty Qno separate companies.
* **FinanceBench** (``.jsonl``, the open-source file's own schema): one question a
  line with ``financebench_id``, ``doc_name``, ``question``, ``answer`` and
  ``evidence`` (a list of ``{evidence_text, doc_name | evidence_doc_name,
  evidence_page_num, evidence_text_full_page}``).
* **Multimodal** (``.json``): ``{"test_queries": [{id, category, paper | papers, query}]}``.

A question is a dict (the BEIR shape plus what each set carries)::

    {"qid": "AMD-1", "text": "For AMD, ...", "doc": "AMD", "docs": ["AMD"], ...}

``doc`` is the name of the document the question is about *as the question set
writes it* (``AMD_2022_10K``, ``Pepsico_2022``); :func:`resolve_doc_name` turns it
into an indexed document name. This module does not decide gold sections (see
:mod:`ppkit.bench.data.gold`) and does not retrieve.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

from ...core.errors import InvalidInput, MissingDependency, MissingFile
from ...documents.metadata import metadata_from_name
from ...documents.tree import build_tree, read_lines

__all__ = ["norm_name", "detect_format", "load_questions", "load_comprehensive", "load_financebench",
           "load_multimodal_queries", "resolve_doc_name", "MarkdownDocs", "DOC_ALIASES", "QuestionSetError"]

# Names the reference question sets use for the reference 10-Ks, beside the indexed
# names themselves (matched case-insensitively after dropping years and "10K").
DOC_ALIASES: dict[str, tuple[str, ...]] = {
    "AMEX": ("american express", "americanexpress"),
    "AMD": ("advanced micro devices",),
    "PepsiCo": ("pepsi",),
}


class QuestionSetError(InvalidInput):
    """A question file that cannot be read as any supported set."""


def detect_format(path: str | Path) -> str:
    """``"comprehensive"``, ``"financebench"`` or ``"multimodal"``, decided by the file's content.

    Raises:
        QuestionSetError: what the file looks like and which formats are accepted.
    """
    path = Path(path)
    if not path.is_file():
        raise MissingFile(f"no question file {path}")
    head = path.read_bytes()[:4096]
    if head.startswith(b"PK") and zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            if any(n.startswith("xl/") for n in z.namelist()):
                return "comprehensive"
        raise QuestionSetError(f"{path} is a zip archive but not an Excel workbook")
    text = path.read_text(encoding="utf-8-sig", errors="replace").strip()
    if not text:
        raise QuestionSetError(f"{path} is empty")
    first = text.split("\n", 1)[0].strip()
    try:
        obj = json.loads(first)
        if isinstance(obj, dict) and "question" in obj and ("evidence" in obj or "financebench_id" in obj):
            return "financebench"
    except json.JSONDecodeError:
        pass
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        obj = None
    if isinstance(obj, dict) and isinstance(obj.get("test_queries"), list):
        return "multimodal"
    raise QuestionSetError(
        f"{path} is not a supported question set: expected the Comprehensive .xlsx (Qno, Company, Question, ...), "
        "FinanceBench .jsonl (one JSON object per line with question/evidence) or the multimodal .json "
        "({\"test_queries\": [...]})")


def _cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v).strip()


def _company_key(raw: str) -> str:
    """``"Pepsico_2022"`` -> ``"Pepsico"``; ``"AMD_2022_10K"`` -> ``"AMD"``."""
    parts = [p for p in re.split(r"[_\s]+", raw) if p and not re.fullmatch(r"(?:19|20)\d\d|10-?k|fy\d*", p, re.I)]
    return " ".join(parts) or raw


def load_comprehensive(path: str | Path) -> list[dict]:
    """The Comprehensive questions, in file order.

    Returns dicts with ``qid`` (``"AMD-1"``: company key and Qno), ``qno`` (int),
    ``text``, ``doc`` (the company key, e.g. ``"Pepsico"``), ``docs``, ``company``
    (the cell as written), ``category``, ``answer``, ``evidence``.

    >>> len(load_comprehensive(benchmark_path("comprehensive_questions.xlsx")))  # doctest: +SKIP
    40
    """
    try:
        import openpyxl
    except ImportError:
        raise MissingDependency("reading .xlsx needs openpyxl: pip install 'ppkit[bench]'") from None
    wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    ws = wb.worksheets[0]
    rows = list(ws.iter_rows(values_only=True))
    wb.close()
    if not rows:
        raise QuestionSetError(f"{path}: the first sheet is empty")
    header = [_cell(h).casefold() for h in rows[0]]
    need = ["qno", "company", "question"]
    missing = [n for n in need if n not in header]
    if missing:
        raise QuestionSetError(f"{path}: missing column(s) {missing}; the header is {rows[0]}")
    col = {name: header.index(name) for name in header if name}
    out: list[dict] = []
    seen: set[str] = set()
    for r in rows[1:]:
        get = lambda name: _cell(r[col[name]]) if name in col and col[name] < len(r) else ""  # noqa: E731
        if not get("qno") or not get("question"):
            continue  # blank separator rows between companies
        company = get("company")
        key = _company_key(company)
        try:
            qno = int(float(get("qno")))
        except ValueError:
            raise QuestionSetError(f"{path}: Qno {get('qno')!r} is not a number") from None
        qid = f"{key}-{qno}"
        if qid in seen:
            raise QuestionSetError(f"{path}: question {qid} appears twice")
        seen.add(qid)
        out.append({"qid": qid, "qno": qno, "text": get("question"), "doc": key, "docs": [key], "company": company,
                    "category": get("category"), "answer": get("answer"), "evidence": get("evidence")})
    return out


def jsonl_records(path: str | Path):
    """(line number, object) of each non-blank line of a JSONL question file; each needs a ``question``."""
    with open(path, encoding="utf-8-sig") as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
            except json.JSONDecodeError as e:
                raise QuestionSetError(f"{path}:{n}: not JSON ({e.msg})") from None
            if not isinstance(d, dict) or "question" not in d:
                raise QuestionSetError(f"{path}:{n}: no 'question' field")
            yield n, d


def load_financebench(path: str | Path) -> list[dict]:
    """FinanceBench questions (the open-source JSONL schema), in file order.

    Returns dicts with ``qid`` (the ``financebench_id``), ``text``, ``doc`` (the
    ``doc_name``), ``docs``, ``company``, ``answer``, ``question_type``,
    ``domain_question_num`` and ``evidence``: a list of
    ``{"text", "doc", "page", "full_page"}``; and, from a sealed set (``ppkit/bench/data/sealed/``), its
    ``key_facts`` (phrases a right answer states), ``corpus`` (``10k`` or ``shelf``) and ``sealed`` (True).
    """
    out = []
    for n, d in jsonl_records(path):
        doc = d.get("doc_name") or ""
        ev = []
        raw_ev = d.get("evidence") or []
        if isinstance(raw_ev, (str, dict)):  # one piece of evidence written without its list
            raw_ev = [raw_ev]
        if not isinstance(raw_ev, list):
            raise QuestionSetError(f"{path}:{n}: 'evidence' must be a list of objects with evidence_text, "
                                   f"got {type(raw_ev).__name__}")
        for item in raw_ev:
            if isinstance(item, str):  # the evidence text alone
                item = {"evidence_text": item}
            if not isinstance(item, dict):
                raise QuestionSetError(f"{path}:{n}: an 'evidence' item must be an object with evidence_text "
                                       f"(or a string), got {item!r:.80}")
            ev.append({"text": item.get("evidence_text") or "",
                       "doc": item.get("evidence_doc_name") or item.get("doc_name") or doc,
                       "page": item.get("evidence_page_num"),
                       "full_page": item.get("evidence_text_full_page") or ""})
        qid = d.get("financebench_id") or f"fb-{n}"
        out.append({"qid": qid, "text": d["question"], "doc": doc, "docs": [doc] if doc else [],
                    "company": d.get("company", ""), "answer": d.get("answer", ""),
                    "question_type": d.get("question_type", ""),
                    "domain_question_num": d.get("domain_question_num"), "evidence": ev,
                    "key_facts": [str(f) for f in d.get("key_facts") or []], "corpus": d.get("corpus") or "",
                    "sealed": bool(d.get("sealed"))})
    return out


def load_multimodal_queries(path: str | Path) -> list[dict]:
    """The multimodal queries: ``qid`` (``"mm-1"``), ``qno``, ``text``, ``doc`` (first paper), ``docs``, ``category``."""
    data = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    if not isinstance(data, dict) or not isinstance(data.get("test_queries"), list):
        raise QuestionSetError(f"{path} is not a multimodal query set: it needs a \"test_queries\" list")
    out = []
    for i, q in enumerate(data["test_queries"], start=1):
        if not isinstance(q, dict) or not str(q.get("id", "")).strip().isdigit() or not q.get("query"):
            raise QuestionSetError(f"{path}: query {i} needs an integer \"id\" and a \"query\" text, got {q!r:.120}")
        papers = q.get("papers") or ([q["paper"]] if q.get("paper") else [])
        out.append({"qid": f"mm-{q['id']}", "qno": int(q["id"]), "text": q["query"],
                    "doc": papers[0] if papers else "", "docs": list(papers), "category": q.get("category", "")})
    return out


def load_questions(path: str | Path) -> tuple[str, list[dict]]:
    """(format, questions) for any supported question file."""
    fmt = detect_format(path)
    loader = {"comprehensive": load_comprehensive, "financebench": load_financebench,
              "multimodal": load_multimodal_queries}[fmt]
    return fmt, loader(path)


def norm_name(s: str) -> str:
    """A name reduced to lower-case letters and digits, for matching: ``"Boeing Co."`` -> ``"boeingco"``."""
    return re.sub(r"[^a-z0-9]", "", s.casefold())


def resolve_doc_name(name: str, docs, aliases: dict[str, tuple[str, ...]] | None = None,
                     metadata: dict[str, dict] | None = None) -> str | None:
    """The indexed document a question set's name refers to, or None.

    ``"Pepsico_2022"``, ``"PEPSICO_2022_10K"`` and ``"pepsico"`` all resolve to
    ``"PepsiCo"``; ``"AMERICANEXPRESS_2022_10K"`` to ``"AMEX"`` (via ``aliases``,
    default :data:`DOC_ALIASES`, and any ``aliases``/``company``/``ticker`` in the
    documents' ``metadata``).

    A document's own name (or an alias in ``aliases``) wins outright. Otherwise the name is
    matched whole or by its company part against the names in the metadata (company, ticker,
    aliases: shared by a company's filings), and the year, quarter and form it writes (``ADOBE_2015_10K``: 2015, 10-K)
    must not contradict a candidate's ``metadata``: with filings of several years indexed,
    ``ADOBE_2015_10K`` never resolves to Adobe's 2022 10-K. When more than one filing is
    left, the name is ambiguous and nothing is returned.

    >>> meta = {"ADOBE_2022_10K": {"company": "Adobe Inc.", "aliases": ["Adobe"], "fiscal_year": 2022}}
    >>> resolve_doc_name("ADOBE_2015_10K", ["ADOBE_2022_10K"], metadata=meta) is None
    True
    """
    aliases = DOC_ALIASES if aliases is None else aliases
    full, key = norm_name(name), norm_name(_company_key(name))
    if not key:
        return None
    found = []
    for d in docs:
        own = {norm_name(n) for n in (d, *aliases.get(d, ()))}
        if full in own:
            return d
        meta = (metadata or {}).get(d) or {}
        shared = {norm_name(n) for n in [*meta.get("aliases", []), meta.get("company"), meta.get("ticker")] if n}
        if (full in shared or key in own | shared) and not _contradicts(metadata_from_name(name), meta):
            found.append(d)
    return found[0] if len(found) == 1 else None


def _contradicts(written: dict, meta: dict) -> bool:
    """Whether the year, quarter or form a name writes differs from what a document's metadata says."""
    return any(written.get(k) is not None and meta.get(k) is not None and written[k] != meta[k]
               for k in ("fiscal_year", "quarter", "form_type"))


class MarkdownDocs:
    """Trees and lines of Markdown files, without embedding: the document side that gold
    mapping needs (an :class:`ppkit.Index` offers the same ``trees`` and ``lines(doc)``).

    Args:
        paths: Markdown files; document names are the file stems unless ``names`` is given.
    """

    def __init__(self, paths, names: list[str] | None = None):
        paths = [Path(p) for p in paths]
        names = list(names) if names is not None else [p.stem for p in paths]
        self.trees = {n: build_tree(p, n) for n, p in zip(names, paths)}
        self._lines = {n: read_lines(p) for n, p in zip(names, paths)}

    @property
    def docs(self) -> list[str]:
        return list(self.trees)

    def lines(self, doc: str) -> list[str]:
        return self._lines[doc]

    def __repr__(self) -> str:
        return f"MarkdownDocs({', '.join(self.trees)})"
