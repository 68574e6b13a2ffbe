"""``ppkit bench peers``: the recipes a user would pick instead of ppkit, side by side on the same gold.

Every recipe chunks the same Markdown, is embedded by the index's own embedder, searched by dense
similarity with the question's text and document filter, and scored by the retrieval benchmark's
harness (:func:`ppkit.bench.runs.harness.run_retrieval_bench`: the recipes run as its baselines, so
hit@k, recall@k and *equal context* — as many top chunks as fit in the characters ppkit sent at
k=5 — are computed exactly as for ppkit and the built-in baselines). The recipes:

* ``lc-header``: LangChain ``MarkdownHeaderTextSplitter`` (h1-h6, headers stripped from the text,
  its default) -> ``RecursiveCharacterTextSplitter`` (2,000 / 200 characters);
* ``lc-header+path``: the same with the header path prepended to each chunk (``[A > B > C]``); the
  chunk then carries its section's heading, so it covers that heading line;
* ``llamaindex``: LlamaIndex ``MarkdownNodeParser`` -> ``SentenceSplitter`` (512 / 50 tokens, about
  2,000 / 200 characters); embedded and sent as LlamaIndex does by default (``header_path:``
  metadata line + text);
* ``parent-child``: small-to-big: children of 400 / 50 characters cut from the ``lc-header+path``
  parents are embedded and searched; the distinct parents of the best children are sent;
* ``fixed-size``: 2,000 / 200 character windows, headings ignored (the ``blind`` baseline's chunks and
  vector cache);
* ``ragnav``, ``ragnav+structure``, ``ragnav-routed``, ``ragnav-routed+structure``: a maintained library's own
  hybrid retrieval (BM25 + its own MiniLM embeddings, with or without its document routing and structure
  expansion), not a recipe of ours: :mod:`ppkit.bench.runs.ragnav_peer`.

The run scores every peer in three document-filter modes: ``auto`` (ppkit's own filter, passed to every peer),
``none`` (all documents) and ``gold`` (the question's filing), each against ppkit in the same mode and at ppkit's
context in that mode.

A chunk covers the source lines its text was found at (the text is located in the document after
whitespace normalisation; a chunk that cannot be located covers nothing and is counted in
``unlocated``). Time per recipe: ``split_seconds`` (measured in this run), ``embed_seconds`` (measured
when the vectors were computed; later runs read the vectors and that measurement from the cache),
``query`` p50/p95 (search including the query embedding, each question once after the benchmark).

The peer libraries are an optional extra: ``pip install 'ppkit[peers]'``. This module does not
install, download or call anything online.
"""

from __future__ import annotations

import bisect
import json
import time
from pathlib import Path

import numpy as np

from ...core.config import cache_dir
from ...core.errors import MissingDependency
from .baselines import ChunkCorpus, DenseBaseline, blind_chunks, embed_corpus
from .ragnav_peer import RAGNAV, build_ragnav
from ..data.gold import GoldSet
from .harness import BenchPlan, run_retrieval_bench
from ..measures.metrics import Sent

__all__ = ["PEERS", "RECIPES", "build_peers", "locate_chunks", "peer_corpora", "peers_markdown", "plot_peers",
           "run_peers"]

RECIPES = ("lc-header", "lc-header+path", "llamaindex", "parent-child", "fixed-size")  # chunk recipes written here
PEERS = RECIPES + RAGNAV
MODES = ("auto", "none", "gold")  # document-filter modes of the run (see ppkit.bench.runs.harness)
_HEADERS = [("#" * i, f"h{i}") for i in range(1, 7)]


def _langchain():
    try:
        from langchain_text_splitters import (
            MarkdownHeaderTextSplitter,
            RecursiveCharacterTextSplitter,
        )
    except ImportError:
        raise MissingDependency("the LangChain recipes need langchain-text-splitters: pip install 'ppkit[peers]'") from None
    return MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter


def _llamaindex():
    try:
        from llama_index.core import Document
        from llama_index.core.node_parser import MarkdownNodeParser, SentenceSplitter
        from llama_index.core.schema import MetadataMode
    except ImportError:
        raise MissingDependency("the LlamaIndex recipe needs llama-index-core: pip install 'ppkit[peers]'") from None
    return Document, MarkdownNodeParser, SentenceSplitter, MetadataMode


# -- where a chunk's text lies in its document -------------------------------------------------------
class _Locator:
    """A document's text with whitespace runs collapsed, and the source line of every character."""

    def __init__(self, lines: list[str]):
        parts, line_of = [], []
        for n, ln in enumerate(lines, start=1):
            s = " ".join(ln.split())
            if s:
                parts.append(s + " ")
                line_of.extend([n] * (len(s) + 1))
        self.text = "".join(parts)
        self.line_of = line_of
        self.headings = [n for n, ln in enumerate(lines, start=1) if ln.lstrip().startswith("#")]
        self.cursor = 0

    def find(self, text: str) -> tuple[int, int] | None:
        """(first line, last line) of ``text``, searching forward from the previous match first."""
        key = " ".join(text.split())
        if not key:
            return None
        for probe in (key, key[:160]):
            pos = self.text.find(probe, self.cursor)
            if pos < 0:
                pos = self.text.find(probe)
            if pos >= 0:
                end = pos + len(key) - 1 if probe is key else self.text.find(key[-160:], pos) + min(len(key), 160) - 1
                if end < pos:
                    end = pos + len(probe) - 1
                self.cursor = pos
                return self.line_of[pos], self.line_of[min(end, len(self.line_of) - 1)]
        return None

    def heading_above(self, line: int) -> int | None:
        """The nearest heading line at or above ``line``."""
        i = bisect.bisect_right(self.headings, line)
        return self.headings[i - 1] if i else None


def locate_chunks(name: str, docs, pieces: dict[str, list[tuple[str, str, bool]]], settings: dict) -> ChunkCorpus:
    """A :class:`ChunkCorpus` from ``{doc: [(text to embed and send, text to locate, covers its heading)]}``."""
    names, ranges, texts, unlocated = [], [], [], 0
    for doc in docs.trees:
        loc = _Locator(docs.lines(doc))
        for text, body, with_heading in pieces.get(doc, []):
            span = loc.find(body)
            if span is None:
                unlocated += 1
                rng = ()
            else:
                h = loc.heading_above(span[0]) if with_heading else None
                rng = (span,) if h is None or h >= span[0] else ((h, h), span)
            names.append(doc)
            ranges.append(rng)
            texts.append(text)
    return ChunkCorpus(name, tuple(names), tuple(ranges), tuple(texts), {**settings, "unlocated": unlocated})


# -- the recipes ---------------------------------------------------------------------------------------
def _lc_sections(docs) -> dict[str, list]:
    """{doc: LangChain header-split documents} (page_content without the headers, metadata h1..h6)."""
    header_splitter, _ = _langchain()
    sp = header_splitter(_HEADERS)
    return {doc: sp.split_text("\n".join(docs.lines(doc))) for doc in docs.trees}


def _path(meta: dict) -> str:
    return " > ".join(meta[f"h{i}"] for i in range(1, 7) if meta.get(f"h{i}"))


def _lc_chunks(sections: dict[str, list], size: int, overlap: int, with_path: bool) -> dict[str, list]:
    _, recursive = _langchain()
    rs = recursive(chunk_size=size, chunk_overlap=overlap)
    out = {}
    for doc, secs in sections.items():
        out[doc] = []
        for s in secs:
            path = _path(s.metadata)
            for piece in rs.split_text(s.page_content):
                text = f"[{path}]\n{piece}" if with_path and path else piece
                out[doc].append((text, piece, with_path and bool(path)))
    return out


def _llamaindex_chunks(docs, chunk_tokens: int, overlap_tokens: int) -> dict[str, list]:
    document, md_parser, sentence, mode = _llamaindex()
    sp = sentence(chunk_size=chunk_tokens, chunk_overlap=overlap_tokens)
    out = {}
    for doc in docs.trees:
        nodes = md_parser().get_nodes_from_documents([document(text="\n".join(docs.lines(doc)))])
        out[doc] = [(n.get_content(metadata_mode=mode.EMBED), n.text, False) for n in sp.get_nodes_from_documents(nodes)]
    return out


class ParentChildBaseline:
    """Small-to-big: search the children, send their distinct parents in the order of their best child."""

    def __init__(self, name: str, parents: ChunkCorpus, children: ChunkCorpus, parent_of: list[int],
                 vectors: np.ndarray, embedder):
        self.name, self.corpus = name, parents
        self._children = DenseBaseline(name, children, vectors, embedder)
        self._parent_of = parent_of  # child index -> parent index

    def __repr__(self) -> str:
        return f"ParentChildBaseline({self.name!r}, {len(self.corpus)} parents, {len(self._parent_of)} children)"

    def search(self, query: str, n: int, *, docs: list[str] | None = None, query_vec=None) -> list[Sent]:
        kids = self._children.search(query, n * 8, docs=docs, query_vec=query_vec)
        out, seen = [], set()
        for s in kids:
            p = self._parent_of[int(s.label.rsplit(":", 1)[1])]
            if p not in seen:
                seen.add(p)
                out.append(self.corpus.sent(p))
                if len(out) == n:
                    break
        return out


def _children(parents: dict[str, list], size: int, overlap: int) -> tuple[dict[str, list], list[int]]:
    """Children of every parent piece (the parent's body cut to ``size``/``overlap``) and their parent index."""
    _, recursive = _langchain()
    rs = recursive(chunk_size=size, chunk_overlap=overlap)
    out, parent_of, p = {}, [], 0
    for doc, pieces in parents.items():
        out[doc] = []
        for _text, body, _ in pieces:
            for kid in rs.split_text(body):
                out[doc].append((kid, kid, False))
                parent_of.append(p)
            p += 1
    return out, parent_of


def peer_corpora(docs, recipes=RECIPES, *, size: int = 2000, overlap: int = 200, child_size: int = 400,
                 child_overlap: int = 50, chunk_tokens: int = 512, overlap_tokens: int = 50) -> dict:
    """Each recipe's chunks and its split time: ``{name: {"corpus", "split_seconds", ...}}``.

    ``parent-child`` also holds ``children`` (a ChunkCorpus) and ``parent_of`` (child -> parent index).
    """
    out = {}
    for name in recipes:  # each recipe does its whole split (the header split is not shared), so its time is its own
        t = time.perf_counter()
        if name in ("lc-header", "lc-header+path", "parent-child"):
            with_path = name != "lc-header"
            pieces = _lc_chunks(_lc_sections(docs), size, overlap, with_path)
            entry = {"corpus": locate_chunks(name, docs, pieces, {"size": size, "overlap": overlap, "path": with_path})}
            if name == "parent-child":
                kids, parent_of = _children(pieces, child_size, child_overlap)
                entry["children"] = locate_chunks("parent-child:children", docs, kids,
                                                  {"size": child_size, "overlap": child_overlap})
                entry["parent_of"] = parent_of
        elif name == "llamaindex":
            pieces = _llamaindex_chunks(docs, chunk_tokens, overlap_tokens)
            entry = {"corpus": locate_chunks(name, docs, pieces, {"chunk_tokens": chunk_tokens,
                                                                   "overlap_tokens": overlap_tokens})}
        elif name == "fixed-size":
            entry = {"corpus": blind_chunks(docs, size=size, overlap=overlap)}  # the blind baseline's: its vector cache
        else:
            raise ValueError(f"unknown recipe {name!r}: use {', '.join(RECIPES)}")
        entry["split_seconds"] = round(time.perf_counter() - t, 3)
        out[name] = entry
    return out


def _embed_timed(corpus: ChunkCorpus, docs, embedder, cache: Path | None, progress: bool) -> tuple[np.ndarray, dict]:
    """The corpus's vectors (cached as the baselines' are) and the seconds the embedding took when measured."""
    t = time.perf_counter()
    v, info = embed_corpus(corpus, docs, embedder, cache=cache, progress=progress)
    side = Path(info["cache"] + ".seconds.json")
    if info["from_cache"]:
        try:
            info["embed_seconds"] = json.loads(side.read_text())["seconds"]
        except (OSError, ValueError, KeyError):
            info["embed_seconds"] = None  # vectors cached by an earlier version: time not recorded
    else:
        info["embed_seconds"] = round(time.perf_counter() - t, 2)
        side.write_text(json.dumps({"seconds": info["embed_seconds"], "chunks": len(corpus)}))
    return v, info


def build_peers(docs, embedder, recipes=PEERS, *, cache: Path | None = None, progress: bool = False,
                ragnav_embedder=None, **split) -> tuple[dict, dict]:
    """The peers ready to search (harness baselines) and per peer its chunks and times.

    Args:
        ragnav_embedder: ``None``: ragnav embeds with its own sentence-transformers and the packaged MiniLM;
            an embedder: ragnav gets its vectors (the tests' stand-in; see :func:`build_ragnav`).

    Returns:
        ({name: baseline}, {name: {"chunks", "split_seconds", "embed_seconds", "from_cache", "unlocated"}}).
    """
    cache = Path(cache) if cache is not None else cache_dir() / "bench"
    corpora = peer_corpora(docs, [r for r in recipes if r not in RAGNAV], **split)
    out, info = {}, {}
    for name, e in corpora.items():
        corpus = e["corpus"]
        if name == "parent-child":
            v, i = _embed_timed(e["children"], docs, embedder, cache, progress)
            out[name] = ParentChildBaseline(name, corpus, e["children"], e["parent_of"], v, embedder)
            extra = {"children": len(e["children"]), "unlocated_children": e["children"].settings["unlocated"]}
        else:
            v, i = _embed_timed(corpus, docs, embedder, cache, progress)
            out[name] = DenseBaseline(name, corpus, v, embedder)
            extra = {}
        info[name] = {"chunks": len(corpus), "split_seconds": e["split_seconds"], "embed_seconds": i["embed_seconds"],
                      "embedded_now": not i["from_cache"], "unlocated": corpus.settings.get("unlocated", 0),
                      "settings": {k: v for k, v in corpus.settings.items() if k != "unlocated"}, **extra}
    wanted = [r for r in recipes if r in RAGNAV]
    if wanted:
        peers, peer_info = build_ragnav(docs, cache=cache, names=wanted, embedder=ragnav_embedder)
        out.update(peers)
        info.update(peer_info)
    return {r: out[r] for r in recipes}, {r: info[r] for r in recipes}


def _pct(ms: list[float]) -> dict:
    a = np.asarray(ms, dtype=np.float64)
    return {"p50_ms": round(float(np.percentile(a, 50)), 2), "p95_ms": round(float(np.percentile(a, 95)), 2)} \
        if len(a) else {"p50_ms": None, "p95_ms": None}


def run_peers(index, questions: list[dict], gold: GoldSet, *, benchmark: str = "", recipes=PEERS,
              ks=(3, 5), cache: Path | None = None, progress: bool = False, split: dict | None = None,
              ragnav_embedder=None) -> dict:
    """ppkit and the peer recipes on one question set, in one process, with one embedder.

    Returns a JSON-ready dict: ``benchmark``, ``n``, ``ppkit`` (mode -> k -> scores, and query time),
    ``recipes`` (name -> chunks, split/embed/query times, scores per mode at k = 3, 5, 10 and at equal
    context), ``harness`` (the full :class:`RetrievalBench` JSON: per question rows).

    >>> run_peers(index, questions, gold, benchmark="comprehensive")["recipes"]["lc-header+path"]  # doctest: +SKIP
    """
    t0 = time.perf_counter()
    peers, info = build_peers(index, index.embedder, recipes, cache=cache, progress=progress,
                              ragnav_embedder=ragnav_embedder, **(split or {}))
    bench = run_retrieval_bench(index, questions, gold, benchmark=benchmark, baselines=peers, progress=progress,
                                plan=BenchPlan(tuple(ks), MODES, baseline_ks=(3, 5, 10),
                                               baseline_modes=MODES)).to_dict()
    asked = [q for q in questions if q["qid"] in {r["qid"] for r in bench["per_question"]}]
    times = {"ppkit": []} | {n: [] for n in peers}
    for q in asked:  # each once, after the benchmark; query embedding included everywhere
        t = time.perf_counter()
        index.retrieve(q["text"], k=max(ks))
        times["ppkit"].append((time.perf_counter() - t) * 1000)
        for name, b in peers.items():
            t = time.perf_counter()
            b.search(q["text"], 200)
            times[name].append((time.perf_counter() - t) * 1000)
    rec = {name: {**info[name], "query": _pct(times[name]),
                  "scores": {m: bench["baselines"][m][name] for m in bench["baselines"]}} for name in peers}
    ppkit = {m: {k: v for k, v in s.items() if k.isdigit()} for m, s in bench["modes"].items()}
    build = index.manifest.get("build", {})  # as the index recorded its own build
    split_ppkit = sum(build.get("seconds_parse_noise_chunk", {}).values())
    return {"benchmark": benchmark, "n": bench["n"], "embedder": index.embedder.name,
            "ppkit": {"scores": ppkit, "query": _pct(times["ppkit"]), "chunks": len(index.chunks),
                      "split_seconds_at_index_time": round(split_ppkit, 3),
                      "embed_seconds_at_index_time": build.get("seconds_embed"),
                      "build_seconds_at_index_time": build.get("seconds_total"),
                      "built": index.manifest.get("created")},
            "recipes": rec, "harness": bench, "seconds": round(time.perf_counter() - t0, 1)}


def _f(x) -> str:
    return "–" if x is None else f"{x:.2f}"


def _found(scores: dict, key: str):
    """A score where a gold section counts as found when any of its lines is sent (``*_overlap``): a peer's
    chunks may leave out the heading line (LangChain's header splitter strips headers), which the strict
    ``hit`` needs; ppkit sends whole sections, so its two figures are equal."""
    return scores.get(f"{key}_overlap", scores.get(key))


def peers_markdown(result: dict, *, mode: str = "auto") -> str:
    """One table: ppkit and each recipe at k=3, k=5 and equal context, with their times (hit and recall:
    any line of a gold section sent, see :func:`_found`)."""
    head = ("| system | chunks | hit@3 | recall@3 | hit@5 | recall@5 | chars@5 | equal context hit / recall (chunks) | "
            "split s | embed s | query p50 / p95 ms |\n" + "|---" * 11 + "|")
    p = result["ppkit"]
    s3, s5 = p["scores"][mode]["3"], p["scores"][mode]["5"]
    rows = [(f"| ppkit | {p['chunks']} | {_f(_found(s3, 'hit'))} | {_f(_found(s3, 'recall'))} | {_f(_found(s5, 'hit'))} | "
             f"{_f(_found(s5, 'recall'))} | {s5['context_chars_mean']:,.0f} | (the budget) | "
             f"{p['split_seconds_at_index_time']} (at index time) | {p.get('embed_seconds_at_index_time') or '–'} | "
             f"{p['query']['p50_ms']} / {p['query']['p95_ms']} |")]
    for name, r in result["recipes"].items():
        sc = r["scores"].get(mode, {})
        a, b, eq = sc.get("3", {}), sc.get("5", {}), sc.get("equal_context", {})
        emb = "–" if r["embed_seconds"] is None else r["embed_seconds"]
        rows.append(f"| {name} | {r['chunks']}{' (+' + str(r['children']) + ' children)' if 'children' in r else ''} | "
                    f"{_f(_found(a, 'hit'))} | {_f(_found(a, 'recall'))} | {_f(_found(b, 'hit'))} | "
                    f"{_f(_found(b, 'recall'))} | {b.get('context_chars_mean', 0):,.0f} | {_f(_found(eq, 'hit'))} / "
                    f"{_f(_found(eq, 'recall'))} ({eq.get('chunks_mean', 0):.1f}) | {r['split_seconds']} | {emb} | "
                    f"{r['query']['p50_ms']} / {r['query']['p95_ms']} |")
    title = f"**{result['benchmark']}** ({result['n']} questions with gold, filter mode {mode}: {_MODE_SAYS.get(mode, mode)}; " \
        f"{result['embedder']}; a gold section is found when any of its lines is sent)"
    return "\n".join([title, "", head, *rows, *_build_line(result)])


_MODE_SAYS = {"auto": "ppkit's own filter, passed to every peer (ragnav-routed routes itself)",
              "none": "all documents (ragnav-routed routes itself)",
              "gold": "the question's filing (ragnav-routed routes itself)"}


def _build_line(result: dict) -> list[str]:
    """Index build times, ppkit's (as its manifest recorded it) beside ragnav's (measured when it embedded)."""
    p = result["ppkit"]
    r = next((r for name, r in result["recipes"].items() if name.startswith("ragnav")), None)
    if r is None or p.get("build_seconds_at_index_time") is None:
        return []
    total = round(r["split_seconds"] + (r["embed_seconds"] or 0), 1)
    return ["", f"Index build: ppkit {p['build_seconds_at_index_time']} s (parse, noise filter, chunk, embed; recorded "
                f"by the index at its build, {p.get('built') or 'date unknown'}); ragnav {total} s (ingest "
                f"{r['split_seconds']} s, BM25 + embeddings {r['embed_seconds']} s, {r.get('build_cpu_seconds')} CPU s; "
                f"measured {r.get('build_measured')}, when its embeddings were computed)."]


def plot_peers(results: list[dict], *, mode: str = "auto", figsize=(11, 3.8)):
    """Per question set: hit@5 and equal-context hit for ppkit and each recipe; and the split + embed time.
    Returns (rows, Figure)."""
    import matplotlib.pyplot as plt

    rows = []
    fig, ax = plt.subplots(1, len(results) + 1, figsize=figsize)
    ax = np.atleast_1d(ax)
    for a, res in zip(ax, results):
        names = ["ppkit", *res["recipes"]]
        h5 = [_found(res["ppkit"]["scores"][mode]["5"], "hit")] + \
            [_found(r["scores"][mode]["5"], "hit") for r in res["recipes"].values()]
        eq = [_found(res["ppkit"]["scores"][mode]["5"], "hit")] + \
            [_found(r["scores"][mode]["equal_context"], "hit") for r in res["recipes"].values()]
        x = np.arange(len(names))
        a.bar(x - 0.2, h5, 0.4, label="hit@5")
        a.bar(x + 0.2, eq, 0.4, label="hit at ppkit's context")
        a.set_xticks(x, names, rotation=30, ha="right", fontsize=8)
        a.set(title=f"{res['benchmark']} (n={res['n']})", ylim=(0, 1))
        a.legend(fontsize=7)
        rows += [{"benchmark": res["benchmark"], "system": n, "hit@5": h, "hit_equal_context": e}
                 for n, h, e in zip(names, h5, eq)]
    res = results[0]
    names = list(res["recipes"])
    sp = [res["recipes"][n]["split_seconds"] for n in names]
    em = [res["recipes"][n]["embed_seconds"] or 0 for n in names]
    ax[-1].bar(names, sp, label="split")
    ax[-1].bar(names, em, bottom=sp, label="embed")
    ax[-1].set_yscale("log")
    ax[-1].set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=8)
    ax[-1].set(title="time per recipe (s)")
    ax[-1].legend(fontsize=7)
    fig.tight_layout()
    return rows, fig
