"""Follow-up questions: rewrite a turn of a conversation into a standalone question.

History is a list of earlier turns, oldest first; a turn is a question string, a dict
with ``"question"`` (and optionally ``"answer"``), a chat message ``{"role": "user",
"content": ...}`` (assistant messages are skipped), or an :class:`ppkit.answer.synth.Answer`.

Offline (:func:`rewrite_offline`), with the query analyzer's filters:

* a follow-up that names no company ("What about their margins?") carries the companies,
  fiscal years and Items of the latest earlier turn that had any forward: it becomes
  ``"For AMD, FY2022: What about their margins?"``;
* a follow-up that names a company but says nothing else ("And Boeing?", "What about
  PepsiCo?", "And PepsiCo in 2021?") asks the previous question's topic, its measure kept, about the new
  company: it becomes ``"For Boeing: what is the current ratio?"`` (a period it names replaces the earlier one);
* a follow-up that names only a period ("And in 2021?") asks the previous topic about the same company in that
  period: ``"For Boeing, FY2021: what was revenue?"``;
* anything else stands alone and is left as it is.

Online (:func:`rewrite_online`): Gemini rewrites the follow-up from the history with a
JSON schema. Either way the result says which rewriter ran and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..core.text import STOPWORDS, tokens, without_possessive
from ..indexing.index import SearchIndex
from ..llm.client import GeminiClient, online_or_offline
from ..llm.fence import DATA_RULE, block
from .analyze import analyze_query

__all__ = ["Rewrite", "rewrite_question", "rewrite_offline", "rewrite_online", "history_questions"]

# words that make a turn a bare pointer back ("what about Boeing?") rather than a question of its own
_FILLER = {"what", "about", "how", "and", "also", "then", "same", "for", "the", "their", "its", "it", "they",
           "them", "those", "that", "this", "compare", "compared", "vs", "versus", "ok", "now", "please", "too"}


@dataclass(frozen=True)
class Rewrite:
    """A follow-up rewritten into a standalone question."""

    question: str  # what retrieval is asked
    original: str
    rewriter: str  # "none" | "offline-carry-forward" | "offline-new-company" | "offline-new-period" | "gemini"
    carried: dict = field(default_factory=dict)  # what came from the history (companies, years, items, topic)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"question": self.question, "original": self.original, "rewriter": self.rewriter,
                "carried": self.carried, "notes": self.notes}


def history_questions(history) -> list[str]:
    """The user questions of ``history``, oldest first."""
    out = []
    for turn in history or []:
        if isinstance(turn, str):
            out.append(turn)
        elif isinstance(turn, dict):
            if "question" in turn:
                out.append(str(turn["question"]))
            elif turn.get("role") == "user" and "content" in turn:
                out.append(str(turn["content"]))
        elif hasattr(turn, "question"):
            out.append(str(turn.question))
        else:
            raise TypeError(f"a history turn must be a str, a dict with 'question' or 'role'/'content', or an "
                            f"Answer; got {type(turn).__name__}")
    return out


_PERIOD = re.compile(r"^(?:fy)?(?:19|20)?\d\d$|^q[1-4]$|^h[12]$|^(?:fiscal|year|years|quarter|half|calendar|full)$")


def _bare(question: str, names) -> bool:
    """Nothing left but filler once the company names and the periods are gone: the turn points back at the topic
    of an earlier one ("And Beta?", "And in 2021?", "What about Beta for FY2021?")."""
    drop = {t for n in names for t in tokens(n)} | STOPWORDS | _FILLER
    return not [t for t in map(without_possessive, tokens(question)) if t not in drop and not _PERIOD.match(t)]


def _prefix(companies: list[str], years: list[int], items: list[str]) -> str:
    parts = [" and ".join(companies)] + [f"FY{y}" for y in years] + [f"Item {i}" for i in items]
    return "For " + ", ".join(parts)


def _topic(index: SearchIndex, past: list[str], years_now: list[int]) -> tuple[str, str] | None:
    """(the topic of the latest earlier turn that has one, as searched, and that turn's search text): its question
    without its names and the "FY2022, Item 7:" prefix an earlier rewrite may have put there; the years it names
    left out when the new turn names its own ("in 2022" is not the 2021 asked now). None when no turn has one."""
    for q in reversed(past):
        f = analyze_query(index, q)
        topic = re.sub(r"^(?:(?:FY\d{4}|Item \w+)(?:,\s*)?)+:\s*", "", f.search_text).rstrip(" ?")
        if years_now:
            topic = re.sub(r"\s*\b(?:(?:in|for|of|during)\s+)?(?:(?:fiscal|calendar)(?:\s+year)?\s+|fy\s?)?"
                           r"(?:19|20)\d\d\b", "", topic, flags=re.I).strip(" ,")
        if topic and not _bare(topic, f.matched.values()):
            if not topic[:2].isupper():  # "What is" -> "what is", but "EPS" stays
                topic = topic[0].lower() + topic[1:]
            return topic + "?", f.search_text
    return None


def rewrite_offline(index: SearchIndex, question: str, history) -> Rewrite:
    """Carry the previous turn's filters and entities forward (see the module docstring)."""
    past = history_questions(history)
    now = analyze_query(index, question)
    if not past:
        return Rewrite(question, question, "none", notes=["no history"])
    # the latest earlier turn that names a company (or years/Items) is the one to carry from
    prev = None
    for q in reversed(past):
        f = analyze_query(index, q)
        if f.companies or f.years or f.items:
            prev = f
            break
    if prev is None:
        return Rewrite(question, question, "none", notes=["no earlier turn names a company, year or Item"])
    bare = _bare(question, now.matched.values())
    topic = _topic(index, past, now.years) if bare else None
    if now.companies:
        if topic is not None:  # the previous topic (its measure kept), about the new company
            q = f"{_prefix(now.companies, now.years or prev.years, now.items or prev.items)}: {topic[0]}"
            return Rewrite(q, question, "offline-new-company",
                           {"topic": topic[1], "years": prev.years if not now.years else [],
                            "items": prev.items if not now.items else []})
        return Rewrite(question, question, "none", notes=["the question names its own company"])
    years = now.years or prev.years
    items = now.items or prev.items
    if topic is not None and now.years and prev.companies:  # "And in 2021?": the same topic, another period
        q = f"{_prefix(prev.companies, years, items)}: {topic[0]}"
        return Rewrite(q, question, "offline-new-period", {"companies": prev.companies, "topic": topic[1],
                                                           "items": items if not now.items else []})
    if prev.companies:
        q = f"{_prefix(prev.companies, years, items)}: {question}"
    else:
        context = [", ".join(f"FY{y}" for y in years)] if years else []
        context += [", ".join(f"Item {i}" for i in items)] if items else []
        q = f"{question} ({'; '.join(context)})"
    return Rewrite(q, question, "offline-carry-forward",
                   {"companies": prev.companies, "years": years if not now.years else [],
                    "items": items if not now.items else []})


_SCHEMA = {"type": "object", "properties": {"standalone_question": {"type": "string"}},
           "required": ["standalone_question"]}
_SYSTEM = ("Rewrite the user's last question so it can be understood without the conversation: name the "
           "companies, years and topics it refers to. Do not answer it. Reply with JSON only. " + DATA_RULE)


def rewrite_online(index: SearchIndex, question: str, history, *, client=None) -> Rewrite:
    """Gemini's standalone version of ``question`` given ``history``.

    Raises:
        ppkit.llm.client.LLMError: the call failed.
    """
    if client is None:
        client = GeminiClient(config=index.config)
    past = history_questions(history)
    convo = "\n".join(f"User: {' '.join(q.split())}" for q in past[-6:])
    prompt = (f"Conversation so far:\n{block('conversation', convo)}\n\nLast question (to rewrite):\n"
              + block("question", question))
    res = client.generate(prompt, system=_SYSTEM, schema=_SCHEMA)
    data = res.data if isinstance(res.data, dict) else {}
    q = str(data.get("standalone_question") or "").strip()
    if not q:
        return Rewrite(question, question, "gemini", notes=["Gemini returned no rewrite; the question is used as is"])
    return Rewrite(q, question, "gemini")


def rewrite_question(index: SearchIndex, question: str, history, *, online: bool | None = None, client=None) -> Rewrite:
    """Online when the index's config is online (``online=None``), else offline.

    An online failure falls back to the offline rewrite and says so.
    """
    cfg = index.config
    if online is None:
        online = bool(cfg.online and cfg.rewrite_online)
    if not history_questions(history):
        return Rewrite(question, question, "none", notes=["no history"])
    if not online:
        return rewrite_offline(index, question, history)
    res, note = online_or_offline(lambda: rewrite_online(index, question, history, client=client),
                                  lambda: rewrite_offline(index, question, history), "rewrite")
    return res if note is None else Rewrite(res.question, question, res.rewriter, res.carried, res.notes + [note])
