"""The marker protocol with Gemini: which images exist, which the model asked for, and a visual check.

Online, the synthesizer's prompt lists the images of the selected sections
(:func:`marker_instructions`); the model asks for one by writing
``[SHOW: <file> | <label>]``. :func:`parse_markers` keeps a marker only when its file
is a showable image of those sections (anything else is dropped with a note), and
takes the label from the tree, not from the model. :func:`visual_filter` then shows the
chosen images themselves to the model (inline image parts through ``ppkit.llm.client``) and
keeps those it says help; :class:`ppkit.answer.synth_gemini.GeminiSynthesizer` does this by
default (``visual_check``). The images listed are the image channel's candidates of the
sections (``Section.image_links``), else the images of the text sent.

This module builds prompt text and checks replies; it makes no call itself except
through ``ask`` / :class:`ppkit.llm.client.GeminiClient` in :func:`visual_filter`.
Re-exported by :mod:`ppkit.documents.images`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..documents.images import read_image_bytes
from ..llm.client import GeminiClient
from .synth import image_record

__all__ = ["image_catalogue", "marker_instructions", "MarkerResult", "parse_markers", "strip_markers", "visual_filter",
           "VISUAL_PROMPT"]

_MARKER = re.compile(r"\[SHOW:\s*([^\]|]*?)\s*(?:\|\s*([^\]]*?)\s*)?\]")


def _candidates(section) -> list:
    """A section's images as the image channel offers them (trimmed-away, discussed, named, recalled),
    else the images of its text as sent."""
    return [link.image for link in section.image_links] if section.image_links else list(section.images)


def image_catalogue(sections) -> list[dict]:
    """The images the model may show: ``{"file": "Doc/figures/x.png", "label", "kind", "section"}``, loadable only."""
    out = []
    for s in sections:
        for im in _candidates(s):
            if im.problem is None and im.resolved:
                out.append({"file": f"{s.doc}/{im.path}", "label": im.label or im.alt, "kind": im.kind,
                            "section": s.breadcrumb})
    return out


def marker_instructions(sections, *, max_images: int = 3) -> str:
    """Prompt text telling Gemini which images exist and how to ask for one to be shown."""
    cat = image_catalogue(sections)
    if not cat:
        return "The retrieved sections contain no images; do not write any [SHOW: ...] marker."
    lines = [
        "Images: the retrieved sections contain the figures, tables and formulas listed below.",
        f"If some of them help answer the question, show at most {max_images}, each by writing on its own line",
        "    [SHOW: <file> | <label>]",
        "with <file> copied exactly from the list. Show only images listed here; show none if none helps.",
        "",
    ]
    for section in dict.fromkeys(c["section"] for c in cat):
        lines.append(f"In {section}:")
        lines += [f"  - {c['file']} | {c['kind']}: {c['label']}" for c in cat if c["section"] == section]
    return "\n".join(lines)


@dataclass(frozen=True)
class MarkerResult:
    """What :func:`parse_markers` found: the text without markers, the valid images, and notes on the rest."""

    text: str
    images: list[dict]
    notes: list[str]


def parse_markers(text: str, sections, *, max_images: int = 3) -> MarkerResult:
    """Validate the model's ``[SHOW: file | label]`` markers against the sections' images.

    A marker counts only if its file is an image of one of ``sections`` (as
    ``Doc/path`` or, when unambiguous, ``path``) that can be shown; anything else is
    dropped with a note. Labels come from the tree, not from the model.

    >>> r = parse_markers("See below.\\n[SHOW: Galore/tables/fileoutpart157.png | Table 7]", answer.sections)  # doctest: +SKIP
    """
    by_full, by_path = {}, {}  # "Doc/path" -> (section, image); "path" -> [(section, image)]
    for s in sections:
        for im in _candidates(s):
            by_full.setdefault(f"{s.doc}/{im.path}", (s, im))
            by_path.setdefault(im.path, []).append((s, im))
    images, notes, seen = [], [], set()
    for m in _MARKER.finditer(text):
        raw = m.group(1).strip().strip("`'\"")
        key = raw[2:] if raw.startswith("./") else raw
        hit = by_full.get(key)
        if hit is None and key in by_path:
            if len({(s.doc, s.node_id) for s, _ in by_path[key]}) == 1 or len({s.doc for s, _ in by_path[key]}) == 1:
                hit = by_path[key][0]
            else:
                notes.append(f"dropped {m.group(0)!r}: {key!r} is in several documents; name it as Doc/path")
                continue
        if not key:
            notes.append(f"dropped {m.group(0)!r}: no file named")
            continue
        if hit is None:
            notes.append(f"dropped {m.group(0)!r}: not an image of the selected sections")
            continue
        s, im = hit
        if im.problem is not None or not im.resolved:
            notes.append(f"dropped {m.group(0)!r}: {im.problem or 'not resolved'}")
            continue
        if (s.doc, im.path) in seen:
            continue
        if len(images) >= max_images:
            notes.append(f"dropped {m.group(0)!r}: more than {max_images} images asked for")
            continue
        seen.add((s.doc, im.path))
        images.append(image_record(s, im))
    return MarkerResult(strip_markers(text), images, notes)


def strip_markers(text: str) -> str:
    """``text`` without its ``[SHOW: ...]`` markers (and the blank runs they leave), stripped.

    >>> strip_markers("Revenue rose.\n[SHOW: f.png | Figure 1]\n")
    'Revenue rose.'
    """
    clean = _MARKER.sub("", text)
    clean = re.sub(r"[ \t]+\n", "\n", clean)
    return re.sub(r"\n{3,}", "\n\n", clean).strip()


VISUAL_PROMPT = ("Question: {question}\nThis image is {label!r} from the section {section!r}. "
                 "Does this image help answer the question? Reply with YES or NO first, then one short reason.")


def _gemini_ask(client=None):
    """An ``ask(prompt, data, mime) -> str`` over :class:`ppkit.llm.client.GeminiClient`: the image
    goes as an inline image part before the prompt (``generate(prompt, images=[(bytes, mime)])``),
    so the model sees its pixels, not only its caption.
    """
    if client is None:
        client = GeminiClient()  # says which extra to install when google-genai is missing

    def ask(prompt: str, data: bytes, mime: str) -> str:
        res = client.generate(prompt, images=[(data, mime)])
        return getattr(res, "text", res)

    return ask


def visual_filter(question: str, images: list[dict], *, ask=None, client=None) -> tuple[list[dict], list[str]]:
    """Keep the chosen images that the model, looking at them, says help answer ``question``.

    Args:
        images: records from ``synth.image_record`` (already limited to the selected sections).
        ask: ``ask(prompt, image_bytes, mime) -> str``; default: Gemini through ``ppkit.llm.client``.

    Returns:
        (kept images, notes on each image dropped or not checked). An image that cannot
        be read is dropped; an unclear reply keeps the image (the text already chose it).
    """
    ask = ask or _gemini_ask(client)
    kept, notes = [], []
    for rec in images:
        try:
            data, mime = read_image_bytes(rec)
        except (ValueError, OSError) as e:
            notes.append(f"dropped {rec.get('path')!r}: {e}")
            continue
        reply = str(ask(VISUAL_PROMPT.format(question=question, label=rec.get("label", ""),
                                             section=rec.get("breadcrumb", "")), data, mime)).strip()
        verdict = reply.split(None, 1)[0].strip(".,:;!").upper() if reply else ""
        if verdict == "NO":
            notes.append(f"dropped {rec.get('path')!r}: the model saw it and said it does not help ({reply[:120]})")
        else:
            if verdict != "YES":
                notes.append(f"kept {rec.get('path')!r}: unclear visual check reply {reply[:60]!r}")
            kept.append(rec)
    return kept, notes
