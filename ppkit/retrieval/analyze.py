"""Query analysis: filters taken from the question before search.

Offline and rule-based (:func:`analyze_query`):

* **companies** - a document is selected when the question names it, by its indexed
  name or by the manifest metadata (``company``, ``aliases``; ``ticker`` matched in
  capitals only, so "BA" selects Boeing but "ba" does not), case-insensitively on word
  boundaries. Names that became filters are left out of the search text: inside the
  document every chunk says "AMD", so the name carries no information there.
* **years** - ``FY2022``, ``fiscal 2021``, ``2022``, ``FY22``: documents whose
  ``fiscal_year`` is one of them. A 10-K also reports the two years before its own, so
  when no document has such a fiscal year the year filter is dropped (with a note)
  rather than emptying the search. Years stay in the search text.
* **Items** - ``Item 7``, ``Item 1A`` and the distinctive Item names ("risk factors",
  "MD&A", "legal proceedings"...): only sections in those Items (see
  :mod:`ppkit.documents.metadata`). A document without any section in the Items is searched
  whole, with a note (PepsiCo's financial statements sit inside its Item 7 pages).

A question that names no company searches everything. Filters are applied *before*
search: :meth:`QueryFilters.scope` gives ``{doc: None | [Items]}``, which FAISS turns
into allowed chunk ids and Qdrant into a payload filter.

Online (:func:`analyze_query_online`): Gemini reads the question and the list of
indexed documents and fills a JSON schema with the same fields; its choices are checked
against the index (unknown documents are dropped, with a note).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, replace

from ..documents.metadata import ITEM_TITLES, normalise_item
from ..indexing.index import SearchIndex
from ..llm.client import GeminiClient, online_or_offline
from ..llm.fence import DATA_RULE, block

__all__ = ["QueryFilters", "analyze_query", "analyze_query_online", "analyze", "ANALYZE_SCHEMA"]


@dataclass(frozen=True)
class QueryFilters:
    """Filters for one question."""

    docs: list[str] | None = None  # None: no document restriction
    matched: dict = field(default_factory=dict)  # doc -> the words that selected it
    search_text: str = ""  # the question without the names that became filters
    analyzer: str = "offline-names"
    companies: list[str] = field(default_factory=list)  # documents named, in order of mention
    years: list[int] = field(default_factory=list)  # fiscal years mentioned
    items: list[str] = field(default_factory=list)  # 10-K Items mentioned ("7", "1A")
    notes: list[str] = field(default_factory=list)  # filters dropped and why

    @property
    def comparison(self) -> bool:
        """The question names more than one company."""
        return len(self.companies) > 1

    def scope(self, index: SearchIndex) -> dict | None:
        """``{doc: None | [Items]}`` to search, or ``None`` for everything.

        An Item filter is kept for a document only when it has sections in those Items.
        """
        if self.docs is None and not self.items:
            return None
        docs = self.docs if self.docs is not None else index.docs
        out = {}
        for d in docs:
            items = None
            if self.items:
                have = set(index.section_items(d).values())
                items = [i for i in self.items if i in have] or None
            out[d] = items
        return out

    def to_dict(self) -> dict:
        return asdict(self)


# Item names distinctive enough to mean the Item when a question uses them
_ITEM_PHRASES = {
    r"risk factors": "1A", r"md&a|md and a": "7", r"management['’]s discussion(?: and analysis)?": "7",
    r"legal proceedings": "3", r"unresolved staff comments": "1B", r"mine safety": "4",
    r"quantitative and qualitative disclosures? about market risk": "7A", r"controls and procedures": "9A",
    r"executive compensation": "11", r"principal accountant fees": "14",
    r"financial statements and supplementary data": "8",
}
_ITEM_REF = re.compile(r"\bitems?\s+(\d{1,2}[a-c]?)\b", re.I)
_YEAR = re.compile(r"\b(?:fy\s?|fiscal\s+(?:year\s+)?)?((?:19|20)\d{2})\b|\bfy\s?'?(\d{2})\b", re.I)
_JOINER = r"(?:\s*(?:,|;|/|&|\band\b|\bor\b|\bvs\.?|\bversus\b|\bwith\b|\bcompared (?:to|with)\b)\s*)+"


def _names(index: SearchIndex, doc: str) -> list[tuple[str, bool]]:
    """(name, case-sensitive) pairs that select ``doc``."""
    meta = index.record(doc).metadata or {}
    names = [(doc, False)] + [(a, False) for a in meta.get("aliases", [])]
    if meta.get("company"):
        names.append((meta["company"], False))
    if meta.get("ticker"):
        names.append((meta["ticker"], True))
    seen, out = set(), []
    for n, cs in names:
        if n and len(n) >= 2 and (n, cs) not in seen:
            seen.add((n, cs))
            out.append((n, cs))
    # longest first, so "American Express Company" is matched (and removed) before "American Express"
    return sorted(out, key=lambda x: -len(x[0]))


def _years(question: str) -> list[int]:
    out = []
    for m in _YEAR.finditer(question):
        y = int(m.group(1)) if m.group(1) else 2000 + int(m.group(2))
        out.append(y)
    return sorted(set(out))


def _items(question: str) -> list[str]:
    found = [normalise_item(m.group(1)) for m in _ITEM_REF.finditer(question)]
    for rx, item in _ITEM_PHRASES.items():
        if re.search(rf"\b(?:{rx})(?!\w)", question, re.I):
            found.append(item)
    return [i for i in dict.fromkeys(found) if i in ITEM_TITLES]


def _clean(search: str) -> str:
    """Tidy the text left when names were cut out (``\\x00`` marks where a name was)."""
    search = re.sub(rf"\x00{_JOINER}\x00", "\x00", search)
    search = re.sub(rf"\x00{_JOINER}\x00", "\x00", search)  # three or more names
    # "the current ratios of <names> at the end" -> "the current ratios at the end"
    search = re.sub(r"\b(?:of|for|between|at|by|from|in|about|and)\s+\x00", "", search, flags=re.I)
    search = search.replace("\x00", " ")
    search = re.sub(r"\(\s*[,;]?\s*\)", "", search)  # "( )" left by a name in brackets
    search = re.sub(r"\s+", " ", search)
    search = re.sub(r"^\W+|\s+(?=[,.?])", "", search)
    search = re.sub(r",\s*([,?.])", r"\1", search)
    return search.strip()


def _docs_for_years(index: SearchIndex, pool: list[str], years: list[int], notes: list[str]) -> list[str] | None:
    """The documents of ``pool`` whose fiscal year is in ``years`` (None: no restriction)."""
    fys = {d: (index.record(d).metadata or {}).get("fiscal_year") for d in pool}
    if not years or not any(fys.values()):
        return None
    kept = [d for d in pool if fys[d] in years]
    if not kept:
        notes.append(f"no document has fiscal year {', '.join(map(str, years))}: not filtered by year "
                     "(a 10-K also reports earlier years)")
        return None
    return kept if len(kept) < len(pool) else None


def analyze_query(index: SearchIndex, question: str) -> QueryFilters:
    """The companies, fiscal years and 10-K Items a question names, as filters.

    >>> analyze_query(index, "For AMD, what is the current ratio?").docs  # doctest: +SKIP
    ['AMD']
    >>> analyze_query(index, "Compare the current ratios of AMD and Boeing").search_text  # doctest: +SKIP
    'Compare the current ratios'
    """
    matched: dict[str, str] = {}
    where: dict[str, int] = {}  # doc -> position of its first mention
    search = question
    for doc in index.docs:
        for name, case_sensitive in _names(index, doc):
            rx = re.compile(rf"(?<![\w&]){re.escape(name)}(?:['’]s)?(?![\w&])", flags=0 if case_sensitive else re.I)
            m = rx.search(question)
            if m:
                matched[doc] = name
                where[doc] = m.start()
                search = rx.sub("\x00", search)
                break
    companies = sorted(matched, key=lambda d: where[d])
    notes: list[str] = []
    years = _years(question)
    pool = companies or index.docs
    by_year = _docs_for_years(index, pool, years, notes)
    docs = by_year if by_year is not None else (companies or None)
    items = _items(question)
    search = _clean(search)
    return QueryFilters(docs=docs, matched={d: matched[d] for d in companies}, search_text=search or question,
                        analyzer="offline-rules", companies=companies, years=years, items=items, notes=notes)


ANALYZE_SCHEMA = {
    "type": "object",
    "properties": {
        "companies": {"type": "array", "items": {"type": "string"},
                      "description": "document names (exactly as listed) of the companies the question is about"},
        "years": {"type": "array", "items": {"type": "integer"}, "description": "fiscal years the question names"},
        "items": {"type": "array", "items": {"type": "string"},
                  "description": "10-K Items the question points at, like '7' or '1A'; empty if none"},
        "search_text": {"type": "string",
                        "description": "the question rewritten for searching inside one filing: no company names"},
    },
    "required": ["companies", "years", "items", "search_text"],
}

_SYSTEM = ("You turn a question about SEC filings into search filters. Use only the document names listed. "
           "Name a company only if the question is about it. Reply with JSON only. " + DATA_RULE)


def analyze_query_online(index: SearchIndex, question: str, *, client=None) -> QueryFilters:
    """Gemini's reading of the question (JSON schema), checked against the index.

    Args:
        client: an object with ``generate(prompt, system=, schema=) -> LLMResult``
            (default :class:`ppkit.llm.client.GeminiClient` with the index's config).

    Raises:
        ppkit.llm.LLMError: the call failed (no key, network, unusable reply).
    """
    if client is None:
        client = GeminiClient(config=index.config)
    rows = []
    for d in index.docs:
        meta = index.record(d).metadata or {}
        rows.append(f"- {d}: company={meta.get('company')!r}, ticker={meta.get('ticker')!r}, "
                    f"fiscal_year={meta.get('fiscal_year')!r}, aliases={meta.get('aliases', [])!r}")
    prompt = ("Documents in the index:\n" + block("documents", "\n".join(" ".join(r.split()) for r in rows))
              + "\n\n10-K Items: " + "; ".join(f"{k} {v}" for k, v in ITEM_TITLES.items()) + "\n\n"
              + block("question", question))
    res = client.generate(prompt, system=_SYSTEM, schema=ANALYZE_SCHEMA)
    data = res.data if isinstance(res.data, dict) else {}
    notes: list[str] = []
    companies = []
    for name in data.get("companies", []) or []:
        try:
            companies.append(index.resolve_doc(str(name)))
        except KeyError:
            notes.append(f"Gemini named {name!r}, which is not an indexed document: ignored")
    companies = list(dict.fromkeys(companies))
    years = sorted({int(y) for y in data.get("years", []) or [] if str(y).isdigit()})
    items = []
    for it in data.get("items", []) or []:
        try:
            items.append(normalise_item(it))
        except ValueError:
            notes.append(f"Gemini gave {it!r} as an Item: ignored")
    items = [i for i in dict.fromkeys(items) if i in ITEM_TITLES]
    by_year = _docs_for_years(index, companies or index.docs, years, notes)
    docs = by_year if by_year is not None else (companies or None)
    search = str(data.get("search_text") or "").strip() or question
    return QueryFilters(docs=docs, matched={d: "gemini" for d in companies}, search_text=search,
                        analyzer="gemini", companies=companies, years=years, items=items, notes=notes)


def analyze(index: SearchIndex, question: str, *, online: bool | None = None, client=None) -> QueryFilters:
    """Online analysis when the index's config is online (``online=None``), else offline.

    An online failure falls back to the offline analyzer and says so in ``notes``.
    """
    cfg = index.config
    if online is None:
        online = bool(cfg.use_gemini and cfg.analyze_online)
    if not online:
        return analyze_query(index, question)
    res, note = online_or_offline(lambda: analyze_query_online(index, question, client=client),
                                  lambda: analyze_query(index, question), "analyzer")
    return res if note is None else replace(res, notes=res.notes + [note])
