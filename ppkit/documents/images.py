"""Figures and tables in a document: labelled when the tree is built, read back safely.

Proxy-Pointer RAG retrieves whole sections, so the images a section links come with
their context: no multimodal embedding is needed to know what an image is about.
This module

* **labels** each image link (called by :mod:`ppkit.documents.tree`): ``kind`` (figure /
  table / formula, from the folder, the caption or the equation number next to it) and
  ``label`` (the nearest caption ``Figure 3: …`` / ``TABLE I: …``, else the text around it);
* **associates** images with captions and with the text that discusses them, over the whole
  document (:func:`associate_images`, also called by the tree): an image without a numbered
  caption nearby takes the nearest unclaimed caption of its kind in either direction (papers put
  a table's caption 120 lines after its image); images sharing a caption form one figure
  (``figure``: ``"figure 5"``); the nodes whose text names it (``as shown in Figure 5``) are
  linked (``discussed_in``) and their sentences kept (``discussion``);
* **reports** links that were not loaded (URL, absolute path, a link climbing out
  of the document's folder, a missing file): :func:`image_report`;
* **reads** an image's bytes through :func:`read_image_bytes`, which re-checks that the
  file lies inside its document's folder.

Choosing the images for an answer is :mod:`ppkit.answer.images`; the ``[SHOW: …]`` marker
protocol with Gemini is :mod:`ppkit.answer.markers`; showing them in a notebook is
:mod:`ppkit.ui.answer_view`. What this module deliberately does not do: embed images, or
read any file outside a document's folder.
"""

from __future__ import annotations

import re
import struct
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from ..core.errors import InvalidInput, MissingFile
from ..core.text import clip
from .anchors import equation_number, find_captions, norm_number

__all__ = ["label_image", "associate_images", "image_size", "image_report", "ImageReport", "ImageProblem", "caption_key", "read_image_bytes",
           "IMAGE_LINK", "HEADING_LINE"]

# -- labelling ------------------------------------------------------------------------------
IMAGE_LINK = re.compile(r"!\[[^\[\]]*\]\(")  # no "[" in the alt text: linear, as tree._IMAGE
HEADING_LINE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+(.*))?$")
_REALHEADING_LINE = re.compile(r"^(?:\d+(?:\.\d+)*\.?\s|[IVXL]+\.\s|[A-Z](?:\.\d+)*\.\s|(?i:abstract|introduction|"
                           r"references|acknowledge?ments?|conclusions?|appendix|related work)\b)")
_MATH = set("=∥⊤∈∑Σ≤≥√∇×⊥ρηλαβγϵεθφψ∂∫≈≪≫→←·^{}|+−∞ˆ˜")
_FOLDERS = {"tables": "table", "table": "table", "tabs": "table", "figures": "figure", "figure": "figure",
            "figs": "figure", "fig": "figure", "images": "figure", "img": "figure", "formulas": "formula",
            "formula": "formula", "equations": "formula", "math": "formula"}
_LONG = 150  # characters: a line this long without a caption is prose (or a figure's own text)


def _folder_kind(target: str) -> str | None:
    for part in PurePosixPath(target.replace("\\", "/")).parts[:-1]:
        if part.casefold() in _FOLDERS:
            return _FOLDERS[part.casefold()]
    return None


def _scan(lines: list[str], line: int, step: int, kinds: set[str], *, max_lines: int, max_long: int,
          stop_at_image: bool) -> str | None:
    """The first caption of ``kinds`` met walking from ``line`` by ``step``, or None.

    The walk passes blank lines, short lines (sub-captions, a figure's own words) and
    stray headings that extraction made out of figure text (``### Original``); it
    stops at a real (numbered) heading, after ``max_long`` long lines of prose, or
    after ``max_lines`` lines.
    """
    i, longs = line + step, 0
    while 1 <= i <= len(lines) and abs(i - line) <= max_lines:
        s = lines[i - 1].strip()
        i += step
        h = HEADING_LINE.match(s)
        if h:
            if _REALHEADING_LINE.match((h.group(1) or "").replace("**", "").strip()):
                return None
            continue
        if not s:
            continue
        if IMAGE_LINK.search(s):
            if stop_at_image:
                return None
            continue
        caps = [c for c in find_captions(s) if c[0] in kinds]
        if caps:
            if step > 0 and stop_at_image and _opens_next_image(lines, i - 1):
                return None  # a caption placed above the next image is that image's caption
            return clip((caps[0] if step > 0 else caps[-1])[2], 200)
        if len(s) >= _LONG:
            longs += 1
            if longs >= max_long:
                return None
    return None


def _opens_next_image(lines: list[str], line: int) -> bool:
    """Whether an image link follows ``line`` within three non-blank lines."""
    seen = 0
    for s in lines[line:]:
        if s.strip():
            if IMAGE_LINK.search(s):
                return True
            seen += 1
            if seen == 3:
                return False
    return False


def _following(lines: list[str], line: int, n: int) -> list[str]:
    """Up to ``n`` non-blank lines after ``line`` that are not image links, stopping at a heading."""
    out = []
    for s in lines[line:]:
        s = s.strip()
        if HEADING_LINE.match(s):
            break
        if s and not IMAGE_LINK.search(s):
            out.append(s)
            if len(out) == n:
                break
    return out


def _mathy(s: str) -> bool:
    return len(s) <= 3 or (len(s) <= 40 and any(ch in _MATH for ch in s))


def _formula_label(lines: list[str], line: int) -> str | None:
    """``Equation (N): …`` when an equation number follows the image closely, else None."""
    near = _following(lines, line, 4)
    for j, s in enumerate(near):
        if find_captions(s):
            return None
        num = equation_number(s)
        if num is not None:
            body = re.sub(r"\(\s*S?\d+[a-z]?\s*\)\s*[,.]?\s*$", "", s).strip()
            if not body and j > 0:
                body = near[j - 1]
            return f"Equation ({num.upper() if num.startswith('s') else num}): {clip(body, 100)}".rstrip(": ")
    return None


def label_image(lines: list[str], line: int, target: str, *, alt: str = "") -> tuple[str, str]:
    """Kind and label of the image linked on ``line`` (1-based) of a document's ``lines``.

    Kind comes from the folder (``tables/`` -> table, ``figures/`` -> figure), else
    from the caption; a figure followed closely by an equation number (``(15)``) or by
    nothing but math fragments is a formula. The label is the nearest caption of the
    matching kind - after a figure, before a table (where papers put them) - else the
    alt text, else the text right after (or before) the link.

    >>> label_image(["![](figures/a.png)", "", "Fig. 3: System flow."], 1, "figures/a.png")
    ('figure', 'Fig. 3: System flow.')
    """
    folder = _folder_kind(target)
    if folder == "table":
        label = (_scan(lines, line, -1, {"table", "algorithm"}, max_lines=12, max_long=2, stop_at_image=True)
                 or _scan(lines, line, +1, {"table", "algorithm"}, max_lines=150, max_long=2, stop_at_image=True))
        return "table", label or _nearby(lines, line, alt)
    if folder in (None, "figure"):
        eq = _formula_label(lines, line)
        if eq:
            return "formula", eq
        kinds = {"figure", "algorithm"} if folder == "figure" else {"figure", "algorithm", "table"}
        label = (_scan(lines, line, +1, kinds, max_lines=150, max_long=2, stop_at_image=False)
                 or _scan(lines, line, -1, kinds, max_lines=4, max_long=1, stop_at_image=True))
        if label:
            kind = "table" if folder is None and find_captions(label)[0][0] == "table" else "figure"
            return kind, label
        near = _following(lines, line, 3)
        if len(near) == 3 and all(_mathy(s) for s in near):
            return "formula", "Formula: " + clip(" ".join(near), 80)
        return "figure", _nearby(lines, line, alt)
    return "formula", _formula_label(lines, line) or _nearby(lines, line, alt)


def _nearby(lines: list[str], line: int, alt: str) -> str:
    """Alt text, else the first informative line after the link, else the one before."""
    if alt.strip():
        return clip(alt, 120)
    # another image's caption is not this image's surrounding text
    for s in _following(lines, line, 3):
        if len(s) >= 3 and not find_captions(s):
            return clip(s, 120)
    for s in reversed(lines[max(0, line - 4): line - 1]):
        s = s.strip()
        if len(s) >= 3 and not IMAGE_LINK.search(s) and not HEADING_LINE.match(s) and not find_captions(s):
            return clip(s, 120)
    return ""


# -- association over the whole document ------------------------------------------------------
_MAX_CAPTION_DISTANCE = 200  # lines: how far an unlabelled image looks for an unclaimed caption
_MENTION = re.compile(r"\b(Fig(?:ure)?s?\.?|FIG(?:URE)?S?\.?|Tables?|TABLES?|Tab\.)\s*(?:~\s*)?(S?\d+|S?[IVXL]+)\b(?!\s*[:.]\s*[A-Z])")
_MENTION_KIND = {"fig": "figure", "table": "table", "tab": "table"}


def _mention_kind(tag: str) -> str:
    t = tag.casefold().rstrip(".s")
    return "figure" if t.startswith("fig") else "table"


def _captions(lines: list[str]) -> list[tuple[int, str, str, str]]:
    """Every caption of the document: (line, kind, number, text)."""
    out = []
    for i, s in enumerate(lines, start=1):
        if IMAGE_LINK.search(s) or HEADING_LINE.match(s.strip()):
            continue
        for kind, num, text in find_captions(s):
            out.append((i, kind, num, clip(text, 200)))
    return out


def _compatible(image_kind: str, folder: str | None, caption_kind: str) -> bool:
    if image_kind == "formula":
        return False
    want = folder or image_kind
    return caption_kind == want or (caption_kind == "algorithm" and want == "figure")


def _sentences_naming(line: str, kind: str, num: str) -> list[str]:
    out = []
    for sent in re.split(r"(?<=[.!?])\s+(?=[A-Z(])", line):
        for m in _MENTION.finditer(sent):
            if _mention_kind(m.group(1)) == kind and norm_number(m.group(2)) == num:
                out.append(sent.strip())
                break
    return out


def associate_images(lines: list[str], nodes: list) -> dict[str, tuple]:
    """Images of a whole document associated with captions and with the text that discusses them.

    ``nodes``: objects with ``node_id``, ``line_start``, ``text_end`` and ``images`` (a tree's
    nodes). Returns ``{node_id: images}`` with each image's ``label`` (an image with no numbered
    caption of its own takes the nearest caption of its kind that no other image claimed,
    looking up to 200 lines either way), ``figure`` (``"table 1"``; images sharing it are one
    figure), ``discussed_in`` (node ids whose text names the figure, its own caption excluded)
    and ``discussion`` (those sentences, clipped). Formulas keep their equation label.

    Example (``tests/fixtures/mm_far``): a table image on line 11 whose caption ``TABLE 1: …`` is on
    line 60, in the next section, and that section 4 names ("Table 1 reports …") gets that caption,
    ``figure="table 1"`` and ``discussed_in=("0005",)``.
    """
    caps = _captions(lines)
    owner_of_line = []  # (line_start, text_end, node_id)
    for n in nodes:
        owner_of_line.append((n.line_start, n.text_end, n.node_id))
    claimed = set()
    keyed: dict[tuple[str, str], tuple] = {}  # (node_id, image index) -> (kind, number, caption text)
    pending = []
    for n in nodes:
        for j, im in enumerate(n.images):
            key = caption_key(im.label)
            if key and key[0] != "equation":
                keyed[(n.node_id, j)] = (key[0], key[1], im.label)
                claimed.add(key)
            elif im.kind != "formula":
                pending.append((n, j, im))
    for n, j, im in pending:
        folder = _folder_kind(im.path)
        best = None
        for ln, kind, num, text in caps:
            if (kind, num) in claimed or not _compatible(im.kind, folder, kind):
                continue
            d = abs(ln - im.line)
            if d <= _MAX_CAPTION_DISTANCE and (best is None or d < best[0]):
                best = (d, kind, num, text)
        if best is not None:
            keyed[(n.node_id, j)] = (best[1], best[2], best[3])
            claimed.add((best[1], best[2]))
    # the text that names each figure: (kind, number) -> [(line, sentence)]
    wanted = {(k, num) for k, num, _ in keyed.values()}
    named: dict[tuple[str, str], list[tuple[int, str]]] = {}
    caption_lines = {ln for ln, *_ in caps}
    for i, s in enumerate(lines, start=1):
        if i in caption_lines or IMAGE_LINK.search(s) or not _MENTION.search(s):
            continue
        for kind, num in wanted:
            for sent in _sentences_naming(s, kind, num):
                named.setdefault((kind, num), []).append((i, sent))
    out = {}
    for n in nodes:
        new = []
        for j, im in enumerate(n.images):
            if (n.node_id, j) not in keyed:
                new.append(im)
                continue
            kind, num, text = keyed[(n.node_id, j)]
            mentions = named.get((kind, num), [])
            where = []
            for ln, _ in mentions:
                nid = next((x for a, b, x in owner_of_line if a <= ln <= b), None)
                if nid is not None and nid not in where:
                    where.append(nid)
            discussion = clip(" ".join(sent for _, sent in mentions), 600)
            label = im.label if caption_key(im.label) else text
            kind_out = im.kind if im.kind != "figure" or kind != "table" else "table"
            new.append(replace(im, label=label, kind=kind_out, figure=f"{kind} {num}", discussed_in=tuple(where),
                               discussion=discussion))
        out[n.node_id] = tuple(new)
    return out


def image_size(path: str | Path | None) -> tuple[int, int]:
    """(width, height) in pixels from a PNG, GIF or JPEG header; (0, 0) when unknown."""
    if not path:
        return 0, 0
    try:
        with open(path, "rb") as f:
            head = f.read(64 * 1024)
    except OSError:
        return 0, 0
    if head[:8] == b"\x89PNG\r\n\x1a\n" and len(head) >= 24:
        return struct.unpack(">II", head[16:24])
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        return struct.unpack("<HH", head[6:10])
    if head[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(head):
            if head[i] != 0xFF:
                i += 1
                continue
            marker, size = head[i + 1], struct.unpack(">H", head[i + 2:i + 4])[0]
            if marker in (0xC0, 0xC1, 0xC2):
                h, w = struct.unpack(">HH", head[i + 5:i + 9])
                return w, h
            i += 2 + size
    return 0, 0


# -- problems -------------------------------------------------------------------------------
_PROBLEM_KINDS = [("URL", "url"), ("absolute", "absolute"), ("climbs out", "traversal"),
                  ("does not exist", "missing"), ("no folder", "unresolved")]
_PROBLEM_ADVICE = {
    "url": "remote images are never fetched; download it into the document's folder and link it relatively",
    "absolute": "absolute paths are not followed; put the file in the document's folder and link it relatively",
    "traversal": "links may not leave the document's folder; move the file inside it",
    "missing": "the file is not there; restore it or remove the link",
    "unresolved": "build the tree from the file (build_tree) so links can be resolved",
}


@dataclass(frozen=True)
class ImageProblem:
    """An image link that was not loaded, and why."""

    doc: str
    node_id: str
    line: int
    path: str
    category: str  # url | absolute | traversal | missing | unresolved | other
    message: str

    def __str__(self) -> str:
        return (f"{self.doc}#{self.node_id} line {self.line}: {self.path!r} - {self.category}: {self.message} "
                f"({_PROBLEM_ADVICE.get(self.category, 'check the link')})")


@dataclass(frozen=True)
class ImageReport:
    """All image links of one or more trees: counts by kind and the links that were not loaded."""

    total: int
    loadable: int
    by_kind: dict
    problems: list[ImageProblem] = field(default_factory=list)

    def __str__(self) -> str:
        kinds = ", ".join(f"{n} {k}{'s' if n != 1 else ''}" for k, n in sorted(self.by_kind.items()))
        head = f"{self.total} image links ({kinds}): {self.loadable} loadable, {len(self.problems)} not loaded"
        return "\n".join([head] + [f"  - {p}" for p in self.problems])

    def to_dict(self) -> dict:
        return {"total": self.total, "loadable": self.loadable, "by_kind": dict(self.by_kind),
                "problems": [p.__dict__ for p in self.problems]}


def image_report(trees) -> ImageReport:
    """Report the image links of a Tree (or a list / dict of trees, or an Index).

    Nothing is read: the tree recorded each link's status when it was built.

    >>> print(image_report(build_tree("tests/fixtures/mm_doc/mm_doc.md")))  # doctest: +SKIP
    6 image links (...): 2 loadable, 4 not loaded
      - mm_doc#0002 line 9: '../../secret.png' - traversal: the link climbs out ...
    """
    if hasattr(trees, "trees") and isinstance(trees.trees, dict):  # an Index
        trees = list(trees.trees.values())
    elif isinstance(trees, dict):
        trees = list(trees.values())
    elif not isinstance(trees, (list, tuple)):
        trees = [trees]
    total, loadable, kinds, problems = 0, 0, Counter(), []
    for tree in trees:
        for node in tree:
            for im in node.images:
                total += 1
                kinds[im.kind] += 1
                if im.problem is None:
                    loadable += 1
                    continue
                cat = next((c for key, c in _PROBLEM_KINDS if key in im.problem), "other")
                problems.append(ImageProblem(tree.doc, node.node_id, im.line, im.path, cat, im.problem))
    return ImageReport(total, loadable, dict(kinds), problems)


def caption_key(label: str) -> tuple[str, str] | None:
    """``(kind, number)`` of a caption label (``("figure", "5")``), or None."""
    caps = find_captions(label)
    if caps:
        return caps[0][0], caps[0][1]
    m = re.match(r"Equation \((S?\d+[a-z]?)\)", label)
    return ("equation", m.group(1).casefold()) if m else None



# -- reading image bytes, safely ------------------------------------------------------------
_MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
         ".webp": "image/webp"}


def read_image_bytes(record: dict, *, max_bytes: int = 8_000_000) -> tuple[bytes, str]:
    """The bytes and MIME type of a chosen image (a record from ``synth.image_record``).

    The record's ``resolved`` file must be exactly its relative ``path`` below some
    folder, with no ``..`` in that path, so a record can only point inside the folder
    its document lives in; anything else is refused before a byte is read.

    Raises:
        ValueError: the record does not point inside a document folder, or is not an image.
        FileNotFoundError: the file is gone.
    """
    rel, resolved = record.get("path", ""), record.get("resolved")
    parts = PurePosixPath(rel.replace("\\", "/")).parts
    if not resolved or not parts or ".." in parts or rel.startswith(("/", "\\")) or re.match(r"^[a-zA-Z]+:", rel):
        raise InvalidInput(f"image {rel!r} has no confined file to read (resolved={resolved!r})")
    res = Path(resolved)
    base = res.parents[len(parts) - 1] if len(parts) <= len(res.parents) else None
    if base is None or (base / Path(*parts)).resolve() != res.resolve() or res.is_symlink():
        raise InvalidInput(f"image {rel!r}: {resolved!r} is not that path inside a document folder; not read")
    mime = _MIME.get(res.suffix.casefold())
    if mime is None:
        raise InvalidInput(f"image {rel!r}: {res.suffix or 'no'} extension is not a displayable image")
    if not res.is_file():
        raise MissingFile(f"image {rel!r}: {resolved} does not exist")
    if res.stat().st_size > max_bytes:
        raise InvalidInput(f"image {rel!r} is larger than {max_bytes} bytes; not read")
    return res.read_bytes(), mime
