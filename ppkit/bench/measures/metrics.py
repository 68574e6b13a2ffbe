"""Retrieval metrics against gold heading lines (how retrieval quality is measured without an LLM).

What a retriever *sent* is a list of items, each with a ``doc`` and
``contains_line(line)`` (a :class:`ppkit.Section` qualifies: its ``sent_ranges``
are the source lines in the text actually sent, after any trimming), and a size in
characters (``len(item.text)``, or ``item.chars``). A gold section is
``(section_id, doc, heading line, end of its own text)``.

* **hit@k**: 1 when at least one gold heading line lies inside the text sent for one
  of the first k items, else 0.
* **recall@k**: the share of the question's gold sections whose heading line lies
  inside the text sent for the first k items.
* **all_gold@k**: 1 when *every* gold section's heading line lies inside the text sent for
  the first k items (recall@k = 1), else 0: an answer that needs a secondary section too.
* **context chars**: characters sent for the first k items. Always reported beside
  hit and recall: sending a whole filing would "hit" everything.
* **evidence_recall@k**: the share of the gold evidence's *features* that appear in the
  text actually sent (the first k items' text, of the question's own documents). The
  features (:func:`evidence_features`), each counted once:

  - **numbers**: every number written in the evidence, normalised (thousands
    separators and ``$``/parentheses dropped, trailing decimal zeros dropped:
    ``$2,384.50`` -> ``2384.5``), kept when it has at least three digits or a decimal
    part and is not a year (1900-2099 written without separators) nor a citation id
    (``ID: 0062``); a percentage keeps its sign (``44%`` -> ``44%``, kept at any size).
    A number given in billions or millions with a decimal part (``$23.6 billion``) is
    also found where the sent text holds a figure one unit down that rounds to it
    (``23,601`` in a table in millions; half up: ``23,650`` is 23.7);
  - **key phrases** (prose evidence only, see :func:`ppkit.bench.data.evidence.evidence_kind`):
    the evidence's words cut into consecutive, non-overlapping runs of eight normalised
    tokens (the same tokens as the evidence mapping's); a phrase is found when its
    eight tokens occur in that order in the sent text. PDF table cells come out in
    another order than the Markdown's, so table evidence is matched by numbers only.

  Only the features that the gold sections' own text holds count (:func:`findable`: a
  computed ratio or a boilerplate line of the PDF page is not there to be sent, and 1.0
  is reachable by sending the gold sections whole); a question with none has no
  evidence_recall (None). FinanceBench's
  evidence is its ``evidence_text``; the Comprehensive set's is the figures (numbers
  only) of the reference answer from the reference k=5 log.
* **overlap variants** (``hit_overlap``/``recall_overlap``): lenient versions in which
  a gold section counts when *any* of its own lines (heading to next heading) was
  sent. They matter for chunk baselines, whose chunks may hold a section's body
  without its heading line; they are reported beside the strict numbers so that the
  comparison does not hinge on the definition.

A chunk baseline's item is a :class:`Sent` built from the chunk's source line range.

Pages (questions whose evidence names a PDF page, e.g. FinanceBench's zero-based ``evidence_page_num``,
counted only for documents whose index entry has a page map):

* **page_hit@k**: 1 when a gold evidence page is among the PDF pages of the lines actually sent for
  the first k items (``Section.pages``: the pages of the sent lines, not of whole sections, so a long
  section earns nothing for pages it did not send);
* **page_recall@k**: the share of the question's gold pages among them.

Images (the multimodal set), per question and k, against the reference run's images:

* **image_hit**: 1 when at least one image the synthesizer chose is a gold image (None when
  the question has no gold image);
* **image_precision**: the share of chosen images that are gold (None when none was chosen);
* **image_reachable**: at least one gold image is among the images the selection can choose
  from for the k sections - the image channel's candidates (``Section.image_links``: linked from
  the section, trimmed or not, discussed in it, named by number, recalled by caption), else the
  images of the text sent - the ceiling of image_hit for any choice over that retrieval;
* the **by caption** pair: the same against every image whose caption the reference's label
  names (its labels and paths sometimes disagree, and one figure can be several files).

Images are named ``Doc/folder/file.png`` (:func:`image_key`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import PurePosixPath

from ...answer.synth import ExtractiveSynthesizer, Synthesizer
from ..data.evidence import evidence_kind, evidence_tokens, normalise

__all__ = ["Sent", "covered", "hit_at_k", "recall_at_k", "all_gold_at_k", "context_chars", "score_question", "mean",
           "evidence_features", "text_features", "evidence_recall", "findable", "EvidenceFeatures", "image_key",
           "image_hit", "image_precision", "image_metrics", "gold_pages", "page_scores", "source_shares"]


@dataclass(frozen=True)
class Sent:
    """One retrieved item as sent: source line ranges of one document, and its size."""

    doc: str
    ranges: tuple[tuple[int, int], ...]
    chars: int
    label: str = ""  # e.g. the chunk's id or breadcrumb, for display

    def contains_line(self, line: int) -> bool:
        return any(a <= line <= b for a, b in self.ranges)

    def overlaps(self, first: int, last: int) -> bool:
        return any(a <= last and first <= b for a, b in self.ranges)


def _chars(item) -> int:
    c = getattr(item, "chars", None)
    return int(c) if c is not None else len(item.text)


def _overlaps(item, first: int, last: int) -> bool:
    f = getattr(item, "overlaps", None)
    if f is not None:
        return f(first, last)
    return any(a <= last and first <= b for a, b in item.sent_ranges)


def covered(items, gold, *, overlap: bool = False) -> list[str]:
    """Section ids of the gold sections covered by ``items``.

    Args:
        items: sent items (Sections or :class:`Sent`).
        gold: ``[(section_id, doc, heading line, own-text end)]``.
        overlap: count any sent line of the gold section's own text, not only its heading line.
    """
    out = []
    for sid, doc, line, end in gold:
        for it in items:
            if it.doc != doc:
                continue
            if it.contains_line(line) or (overlap and _overlaps(it, line, end)):
                out.append(sid)
                break
    return out


def hit_at_k(items, gold, k: int, *, overlap: bool = False) -> float:
    """1.0 when a gold heading line is inside the text sent for one of the first ``k`` items.

    >>> s = Sent("AMD", ((10, 20),), 500)
    >>> hit_at_k([s], [("AMD#0003", "AMD", 12, 15)], k=1)
    1.0
    """
    return 1.0 if covered(list(items)[:k], gold, overlap=overlap) else 0.0


def recall_at_k(items, gold, k: int, *, overlap: bool = False) -> float:
    """Share of gold sections whose heading line is inside the text sent for the first ``k`` items."""
    if not gold:
        return 0.0
    return len(covered(list(items)[:k], gold, overlap=overlap)) / len(gold)


def all_gold_at_k(items, gold, k: int) -> float:
    """1.0 when every gold section's heading line is inside the text sent for the first ``k`` items.

    >>> s = Sent("AMD", ((10, 20),), 500)
    >>> all_gold_at_k([s], [("AMD#0003", "AMD", 12, 15), ("AMD#0009", "AMD", 40, 45)], k=1)
    0.0
    """
    if not gold:
        return 0.0
    return 1.0 if len(covered(list(items)[:k], gold)) == len(gold) else 0.0


def context_chars(items, k: int) -> int:
    """Characters sent for the first ``k`` items."""
    return sum(_chars(it) for it in list(items)[:k])


def score_question(items, gold, ks, *, doc: list[str] | None = None, evidence: EvidenceFeatures | None = None,
                   company: set[str] | None = None, same: set[str] | None = None) -> dict:
    """All metrics of one question at each k.

    Returns ``{str(k): {"hit", "recall", "all_gold", "hit_overlap", "recall_overlap", "context_chars",
    "n_sent", "wrong_doc"}}``; ``wrong_doc`` is the share of the first k items from a
    document other than ``doc`` (``None`` when ``doc`` is not given). With ``company`` (every
    indexed filing of the question's company) each k also has ``wrong_company`` (the share from
    another company's filings) and ``wrong_period`` (from another filing of the same company:
    another period) and ``other_form`` (from a filing of the company that reports the same period as
    ``doc``, given in ``same``: the fiscal year's 10-K beside its full-year release). With ``evidence`` (the
    question's findable evidence features) each k also has ``evidence_recall`` (over the text
    of the items from ``doc``, all items when ``doc`` is not given) and ``evidence_missed``
    (the features not sent, for reading).
    """
    items = list(items)
    out = {}
    for k in ks:
        top = items[:k]
        wrong = None
        if doc:
            wrong = (sum(1 for it in top if it.doc not in doc) / len(top)) if top else 0.0
        out[str(k)] = {"hit": hit_at_k(top, gold, k), "recall": recall_at_k(top, gold, k),
                       "all_gold": all_gold_at_k(top, gold, k),
                       "hit_overlap": hit_at_k(top, gold, k, overlap=True),
                       "recall_overlap": recall_at_k(top, gold, k, overlap=True),
                       "context_chars": context_chars(top, k), "n_sent": len(top), "wrong_doc": wrong}
        if doc and company is not None:
            out[str(k)].update(source_shares(top, doc, company, same))
        if evidence is not None:
            sent = "\n".join(it.text for it in top if (not doc or it.doc in doc) and hasattr(it, "text"))
            rec, missed = evidence_recall(evidence, text_features(sent))
            out[str(k)].update({"evidence_recall": rec, "evidence_missed": missed})
    return out


def source_shares(items, doc: list[str], company: set[str], same: set[str] | None = None) -> dict:
    """``wrong_company``, ``wrong_period`` and ``other_form``: the shares of ``items`` from a filing of
    another company, from a filing of the same ``company`` that reports another period, and from one
    that reports the question's period (``same``: e.g. the full-year release beside the 10-K) but is
    not the question's ``doc``.

    >>> from types import SimpleNamespace as S
    >>> source_shares([S(doc="X_2022"), S(doc="X_2021"), S(doc="Y_2022"), S(doc="X_2022Q4")], ["X_2022"],
    ...               {"X_2021", "X_2022", "X_2022Q4"}, {"X_2022", "X_2022Q4"})
    {'wrong_company': 0.25, 'wrong_period': 0.25, 'other_form': 0.25}
    """
    items, same = list(items), same or set()
    if not items:
        return {"wrong_company": 0.0, "wrong_period": 0.0, "other_form": 0.0}
    other = sum(1 for it in items if it.doc not in company and it.doc not in doc)
    period = sum(1 for it in items if it.doc in company and it.doc not in doc and it.doc not in same)
    form = sum(1 for it in items if it.doc in same and it.doc not in doc)
    return {"wrong_company": other / len(items), "wrong_period": period / len(items), "other_form": form / len(items)}


_NUM = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:\s*(%|percent\b|billion\b|million\b))?",
                  re.I)
_CITED_ID = re.compile(r"\bIDs?\b\s*:?\s*\d{4}(?:\s*(?:,|/|&|and)\s*(?:ID\b\s*:?\s*)?\d{4})*")
_YEARISH = re.compile(r"(?:19|20)\d\d")
PHRASE = 8  # tokens per key phrase


@dataclass(frozen=True)
class EvidenceFeatures:
    """The features of a text (see the module docstring): ``numbers`` (``"2384"``, ``"1.57"``, ``"44%"``),
    ``scaled`` (``("23.6", 1)`` for "23.6 billion": a number of ``numbers`` that may also be found one
    unit down, and its decimals) and ``phrases`` (tuples of eight tokens)."""

    numbers: frozenset = frozenset()
    scaled: frozenset = frozenset()
    phrases: frozenset = frozenset()

    def __len__(self) -> int:
        return len(self.numbers) + len(self.phrases)


@dataclass(frozen=True)
class _Sent:
    """What a sent text offers for matching: every number (no size limit), the numbers as values, its token stream."""

    numbers: frozenset
    values: frozenset
    tokens: str  # " tok tok ... " for phrase lookup


def _number_spans(text: str):
    """``(normalised number, unit)`` of every number written in ``text`` (unit: "%", "billion", "million" or "")."""
    t = _CITED_ID.sub(" ", normalise(text))
    for m in _NUM.finditer(t):
        whole, frac, unit = m.group(1), m.group(2) or "", (m.group(3) or "").lower()
        unit = "%" if unit in ("%", "percent") else unit
        digits = whole.replace(",", "")
        frac = frac.rstrip("0").rstrip(".") if frac else ""
        yield digits, frac, whole, unit


def _num(digits: str, frac: str) -> str:
    return (digits.lstrip("0") or "0") + frac


def evidence_features(text: str, *, phrases: bool = True) -> EvidenceFeatures:
    """The numbers (and, for prose with ``phrases``, the key phrases) of an evidence text.

    >>> f = evidence_features("Revenue was $23.6 billion, up 44% from 2021; costs 1,448 and 3,548.00 (ID: 0068). 12 units.")
    >>> sorted(f.numbers), sorted(f.scaled)
    (['1448', '23.6', '3548', '44%'], [('23.6', 1)])
    """
    nums, scaled = set(), set()
    for digits, frac, whole, unit in _number_spans(text):
        if unit == "%":
            nums.add(_num(digits, frac) + "%")
            continue
        if not frac and "," not in whole and _YEARISH.fullmatch(digits):
            continue  # a year
        if not frac and digits.startswith("0") and len(digits) > 1:
            continue  # an id, not an amount
        if len(digits.lstrip("0")) + len(frac.lstrip(".")) < 3 and not frac:
            continue  # too short to tell anything
        nums.add(_num(digits, frac))
        if frac and unit in ("billion", "million"):
            scaled.add((_num(digits, frac), len(frac) - 1))
    grams = set()
    if phrases and evidence_kind(text) == "prose":
        toks = [t for t in evidence_tokens(text)]
        grams = {tuple(toks[i:i + PHRASE]) for i in range(0, len(toks) - PHRASE + 1, PHRASE)}
    return EvidenceFeatures(frozenset(nums), frozenset(scaled), frozenset(grams))


def text_features(text: str) -> _Sent:
    """What ``text`` offers for matching evidence features (every number it writes, any size)."""
    nums, values = set(), set()
    for digits, frac, _, unit in _number_spans(text):
        n = _num(digits, frac)
        nums.add(n + "%" if unit == "%" else n)
        if not frac and unit != "%":
            values.add(int(digits))
    return _Sent(frozenset(nums), frozenset(values), " " + " ".join(evidence_tokens(text)) + " ")


def _found(n: str, decimals: int | None, sent: _Sent) -> bool:
    """A number is found written as such, or (given in billions/millions with ``decimals``) as a figure
    one unit down that rounds to it."""
    if n in sent.numbers:
        return True
    if decimals is None:
        return False
    want, q = Decimal(n), Decimal(1).scaleb(-decimals)
    return any((Decimal(v) / 1000).quantize(q, rounding=ROUND_HALF_UP) == want for v in sent.values if v >= 1000)


def evidence_recall(features: EvidenceFeatures, sent: _Sent) -> tuple[float | None, list[str]]:
    """Share of ``features`` found in the sent text, and the ones not found (None when there are no features).

    >>> f = evidence_features("Net revenue was $23.6 billion and operating income 1,264 million, a margin of 5.4%.", phrases=False)
    >>> evidence_recall(f, text_features("| Net revenue | $ 23,601 |\\n| Operating income | 1,264 |"))
    (0.6666666666666666, ['5.4%'])
    """
    if not len(features):
        return None, []
    scaled = dict(features.scaled)
    missed = [n for n in sorted(features.numbers) if not _found(n, scaled.get(n), sent)]
    missed += sorted(" ".join(g) for g in features.phrases if " " + " ".join(g) + " " not in sent.tokens)
    return (len(features) - len(missed)) / len(features), missed


def findable(features: EvidenceFeatures, doc_text: _Sent) -> EvidenceFeatures:
    """The features that occur in a text (``doc_text``: :func:`text_features` of it; the bench passes the
    gold sections' own text)."""
    gone = set(evidence_recall(features, doc_text)[1])
    return EvidenceFeatures(frozenset(n for n in features.numbers if n not in gone),
                            frozenset(s for s in features.scaled if s[0] not in gone),
                            frozenset(g for g in features.phrases if " ".join(g) not in gone))


def mean(rows: list[dict], key: str) -> float | None:
    """Mean of ``row[key]`` over rows where it is not None (None when there is none)."""
    vals = [r[key] for r in rows if r.get(key) is not None]
    return sum(vals) / len(vals) if vals else None


def gold_pages(evidence, has_pages) -> set[tuple[str, int]]:
    """``{(doc, 1-based page)}`` of a question's evidence items that name a zero-based ``page``, for
    documents where ``has_pages(doc)`` (the index holds their page map).

    >>> sorted(gold_pages([{"doc": "A", "page": 17}, {"doc": "B", "page": 3}, {"doc": "A"}], lambda d: d == "A"))
    [('A', 18)]
    """
    items = evidence if isinstance(evidence, list) else []  # other sets write their evidence as text
    return {(e["doc"], int(e["page"]) + 1) for e in items
            if isinstance(e, dict) and e.get("page") is not None and e.get("doc") and has_pages(e["doc"])}


def page_scores(items, gold: set[tuple[str, int]]) -> dict:
    """page_hit and page_recall of the pages sent (each item's ``doc`` and ``pages``) against ``gold``
    ``{(doc, page)}``; empty when there is no gold page.

    >>> from types import SimpleNamespace as S
    >>> page_scores([S(doc="A", pages=(17, 18)), S(doc="B", pages=(2,))], {("A", 18), ("A", 40)})
    {'page_hit': 1.0, 'page_recall': 0.5}
    """
    if not gold:
        return {}
    sent = {(it.doc, int(p)) for it in items for p in getattr(it, "pages", ())}
    found = gold & sent
    return {"page_hit": 1.0 if found else 0.0, "page_recall": len(found) / len(gold)}


def image_key(doc: str, path: str) -> str:
    """``"Galore/tables/fileoutpart157.png"``: an image named by its paper and its path below the paper's folder,
    from an absolute path under that folder (any OS) or a path relative to the document.

    >>> image_key("Galore", "C:/data/extracted_papers/Galore/tables/fileoutpart157.png")
    'Galore/tables/fileoutpart157.png'
    >>> image_key("CLIP", "./figures/x.png")
    'CLIP/figures/x.png'
    """
    p = path.replace("\\", "/")
    i = p.lower().rfind(f"/{doc.lower()}/")
    if i >= 0:
        rel = p[i + len(doc) + 2:]
    elif p.startswith("/") or ":" in p.split("/", 1)[0]:
        rel = "/".join(p.split("/")[-2:])  # an absolute path elsewhere: its folder and file
    else:
        rel = "/".join(x for x in PurePosixPath(p).parts if x != ".")
    return f"{doc}/{rel}"


def image_hit(chosen: list[str], gold: list[str]) -> float | None:
    """1.0 if at least one chosen image is gold, else 0.0; None when there are no gold images.

    >>> image_hit(["a", "b"], ["b", "c"]), image_hit([], ["c"]), image_hit(["a"], [])
    (1.0, 0.0, None)
    """
    if not gold:
        return None
    return 1.0 if set(chosen) & set(gold) else 0.0


def image_precision(chosen: list[str], gold: list[str]) -> float | None:
    """Share of chosen images that are gold; None when nothing was chosen.

    >>> image_precision(["a", "b", "c", "d"], ["b", "d", "e"]), image_precision([], ["b"])
    (0.5, None)
    """
    if not chosen:
        return None
    g = set(gold)
    return sum(c in g for c in chosen) / len(chosen)


def _pool(section) -> list:
    """The images a selection can choose from for a section: the image channel's, else those of the text sent."""
    return [link.image for link in section.image_links] if getattr(section, "image_links", ()) else list(section.images)


def image_metrics(question: str, sections, gold_images, *, gold_by_caption=None,
                  synthesizer: Synthesizer | None = None) -> dict:
    """Images the synthesizer chooses for ``question`` from ``sections``, scored against the gold.

    Returns:
        ``{"images", "image_labels", "image_hit", "image_precision", "image_reachable"}`` (plus
        ``image_hit_by_caption`` / ``image_precision_by_caption`` when ``gold_by_caption`` is given);
        a metric is None where it is undefined.
    """
    _, info = (synthesizer or ExtractiveSynthesizer()).synthesize(question, sections)
    chosen = [image_key(im["doc"], im["path"]) for im in info.get("images", [])]
    gold = list(gold_images)
    out = {"images": chosen, "image_labels": [im.get("label", "") for im in info.get("images", [])],
           "image_hit": image_hit(chosen, gold), "image_precision": image_precision(chosen, gold),
           "image_reachable": image_hit([image_key(s.doc, im.path) for s in sections for im in _pool(s)], gold)}
    if gold_by_caption is not None:
        out["image_hit_by_caption"] = image_hit(chosen, list(gold_by_caption))
        out["image_precision_by_caption"] = image_precision(chosen, list(gold_by_caption))
    return out
