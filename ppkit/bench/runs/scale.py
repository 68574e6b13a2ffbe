"""``ppkit bench scale``: what indexing and querying cost as the shelf of filings grows.

Three corpus sizes (points), each measured in its own child processes so that every
number has its own peak memory (``os.wait4`` returns the child's ``ru_maxrss``):

* **4**: the reference 10-Ks (``<data>/10k``);
* **N real filings**: every ``*.md`` of a Markdown folder (``--markdown-dir``; default: the
  FinanceBench extraction cache, see :func:`default_markdown_dir`), e.g. the 74 FinanceBench PDFs
  extracted once with ``ppkit extract``;
* **400**: replicas of those filings with the company renamed (each letter of the company name and
  of the document name shifted by the replica number: same length, so the chunks line up), for
  *cost only*. Replicas are not re-embedded: the build gets the real filings' vectors in chunk order,
  and the point's index time is stated as the measured non-embedding time plus chunks / the
  embedding throughput measured at the largest real point (``index_seconds_estimated``, never
  presented as measured).

Per point (tasks run one at a time, each in a child process):

``build``    ``build_index`` into a scratch folder (FAISS exact store): wall time, the build's own
             timings, chunks, peak memory, index size on disk.
``rebuild``  ``build_index`` again into the same folder (unchanged documents: the previous index is
             loaded, its vectors reused, the new copy written beside it and swapped in): time and peak
             memory; ``peak_disk_bytes`` = old copy + new copy, both on disk between the new copy's
             completion and the swap (:mod:`ppkit.indexing.folder`).
``query``    ``load_index`` with the real embedder, then each question asked once (first time,
             ``retrieve`` k=5, query embedding included): load time, p50/p95, peak memory. Writes the
             question vectors for ``stores``.
``stores``   the index's vectors in FAISS exact (``IndexFlatIP``), FAISS HNSW (M=32, efConstruction=80,
             efSearch=256; FAISS on one thread: one query at a time) and the Qdrant store (local mode,
             in memory: dense vectors + the ``doc`` payload): build time, size on disk, peak memory,
             search p50/p95 at the stage-1 depth (k=200). HNSW's recall@10 and @200 against exact search are reported for real filings only
             (near-duplicate replica vectors make approximate recall meaningless).

It does not judge retrieval quality (``ppkit bench retrieval`` does) and it is a benchmark, not a test:
budget it (``--budget-minutes``; a task that would start after the budget is skipped and says so).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...core.config import Config, cache_dir, child_env, financebench_markdown_dir
from ...core.data import benchmark_path, data_dir, tenk_paths
from ...core.errors import InvalidInput, MissingFile
from ...core.io import atomic_write
from ...documents.noise import RuleNoiseFilter
from ...indexing import stores
from ...indexing.embed import get_embedder
from ...pipeline import build_index, load_index
from ..data.loaders import load_financebench

__all__ = ["ScalePlan", "default_markdown_dir", "plot_scale", "replica_name", "run_scale", "scale_markdown"]

GIB = 1024 ** 3
# the stores measured: registered stores by name (with their creation options), and FAISS HNSW (bench only)
_STORES = {"faiss-exact": ("faiss", {}), "faiss-hnsw": None, "qdrant-local": ("qdrant", {"batch": 1024})}
STORES = tuple(_STORES)


@dataclass(frozen=True)
class ScalePlan:
    """What ``bench scale`` measures.

    Attributes:
        markdown_dir: the real filings (``*.md``); None: only the 4 reference 10-Ks.
        replicas: the size of the replica point (0: none).
        queries: questions asked per point (FinanceBench questions, file order; see :func:`_questions`).
        k: the stores' search depth (stage 1 recalls 200 chunks).
        budget_minutes: no task starts after this.
        work: scratch folder for the indexes (default ``<cache>/bench/scale``).
        reuse_builds: reuse a point's index and its recorded build from an earlier run when the
            documents are the same (the numbers are then that run's, and say so).
    """

    markdown_dir: Path | None = None
    replicas: int = 400
    queries: int = 60
    k: int = 200
    budget_minutes: float = 150.0
    work: Path | None = None
    reuse_builds: bool = False
    stores: tuple[str, ...] = STORES


def default_markdown_dir() -> Path | None:
    """The FinanceBench extraction cache when present: ``$PPKIT_FINANCEBENCH_MD``, else
    ``<cache>/fb_extract`` or ``<cache>/../fb_extract`` (where ``ppkit extract`` of the 74 PDFs was written)."""
    env = financebench_markdown_dir()
    cands = [env] if env else [cache_dir() / "fb_extract", cache_dir().parent / "fb_extract"]
    return next((c for c in cands if c.is_dir() and any(c.glob("*.md"))), None)


# -- replicas -------------------------------------------------------------------------------------
def _shift(s: str, j: int) -> str:
    """Letters and digits shifted by ``j`` (same length, case kept)."""
    out = []
    for ch in s:
        if "a" <= ch <= "z":
            out.append(chr((ord(ch) - 97 + j) % 26 + 97))
        elif "A" <= ch <= "Z":
            out.append(chr((ord(ch) - 65 + j) % 26 + 65))
        elif "0" <= ch <= "9":
            out.append(chr((ord(ch) - 48 + j) % 10 + 48))
        else:
            out.append(ch)
    return "".join(out)


def replica_name(doc: str, j: int) -> str:
    """The name of replica ``j`` of ``doc``: letters shifted (``3M_2018_10K`` -> ``3N_2018_10L`` for j=1,
    years kept); unique for j = 1..25."""
    return "_".join(p if p.isdigit() else _shift(p, j) for p in doc.split("_"))


def _companies() -> dict[str, str]:
    """{doc_name: company} of the FinanceBench documents, when the list is there."""
    try:
        path = data_dir() / "financebench" / "documents.jsonl"
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, ValueError, LookupError):
        return {}
    return {r["doc_name"]: r.get("company", "") for r in rows if "doc_name" in r}


def write_replicas(paths: list[Path], n_total: int, out: Path) -> list[Path]:
    """The real filings plus renamed copies until there are ``n_total`` documents, in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    companies = _companies()
    result = list(paths)
    j = 1
    while len(result) < n_total:
        if j > 25:
            raise InvalidInput(f"at most 26 x {len(paths)} documents from replicas, asked for {n_total}")
        for p in paths:
            if len(result) >= n_total:
                break
            company = companies.get(p.stem) or p.stem.split("_")[0]
            dest = out / f"{replica_name(p.stem, j)}.md"
            if not dest.is_file():
                text = p.read_text(encoding="utf-8")
                for name in sorted({company, company.upper(), p.stem.split("_")[0]}, key=len, reverse=True):
                    if name:
                        text = text.replace(name, _shift(name, j))
                atomic_write(dest, text.encode("utf-8"))
            result.append(dest)
        j += 1
    return result


class _ReplayEmbedder:
    """Documents get the real filings' vectors in order (replicas chunk like their originals); queries
    and anything else go to the real embedder. Counts how many replica chunks lined up by length."""

    def __init__(self, inner, texts: list[str], vectors: np.ndarray):
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self._texts, self._vecs = texts, vectors
        self.aligned = self.n = 0

    def embed_documents(self, texts, *, progress: bool = False):
        n = len(self._vecs)
        idx = [i % n for i in range(len(texts))]
        self.n += len(texts)
        self.aligned += sum(len(t) == len(self._texts[i]) for t, i in zip(texts, idx))
        return self._vecs[idx]

    def embed_query(self, text: str):
        return self.inner.embed_query(text)


# -- measurement helpers --------------------------------------------------------------------------
def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())


def _rss_now() -> int:
    """This process's resident memory now (bytes; Linux ``/proc``), 0 when unknown."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _pct(ms: list[float]) -> dict:
    a = np.asarray(ms, dtype=np.float64)
    return {"p50_ms": round(float(np.percentile(a, 50)), 2), "p95_ms": round(float(np.percentile(a, 95)), 2),
            "n": len(ms)} if len(a) else {"p50_ms": None, "p95_ms": None, "n": 0}


def _index_vectors(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """(ids, vectors) of an index folder's store, in id order."""
    manifest = json.loads((folder / "manifest.json").read_text())
    store = stores.open(manifest.get("store"), folder, manifest["embedder"]["dim"])
    n = len(store)
    ids = np.arange(n, dtype=np.int64)
    return ids, store.vectors(ids)


# -- the tasks (each runs in a child process) -----------------------------------------------------
def _task_build(a: dict) -> dict:
    cfg = Config.from_env()
    paths, folder = [Path(p) for p in a["paths"]], Path(a["folder"])
    embedder = get_embedder(cfg.embedder)
    opts = {"progress": False, "fresh": not a.get("rebuild")}
    replay = None
    if a.get("replay_from"):  # replicas: the real filings' vectors, in chunk order
        src = Path(a["replay_from"])
        texts = [json.loads(line)["text"] for line in (src / "chunks.jsonl").read_text(encoding="utf-8").splitlines()]
        replay = _ReplayEmbedder(embedder, texts, _index_vectors(src)[1])
        opts["noise_filter"] = RuleNoiseFilter(embedder)  # title embeddings are real, as in a real build
    before = _folder_bytes(folder) if folder.is_dir() else 0
    t = time.perf_counter()
    index = build_index(paths, folder, embedder=replay or embedder, config=cfg, **opts)
    wall = time.perf_counter() - t
    b = index.manifest["build"]
    after = _folder_bytes(folder)
    out = {"seconds": round(wall, 2), "seconds_embed": b["seconds_embed"], "chunks": len(index.chunks),
           "chunks_embedded": b["chunks_embedded"], "chunks_reused": b["chunks_reused"], "documents": len(index.docs),
           "disk_bytes": after, "embedder": embedder.name}
    if a.get("rebuild"):
        out["peak_disk_bytes"] = before + after  # both copies exist between tmp-complete and the swap
    if replay is not None:
        out["replayed_vectors"] = {"chunks": replay.n, "same_length_as_original": replay.aligned}
    return out


def _questions(n: int) -> list[str]:
    """The first ``n`` FinanceBench questions (the 129 about the 74 filings when there, else the dev set)."""
    full = data_dir() / "financebench" / "questions.jsonl"
    qs = load_financebench(full if full.is_file() else benchmark_path("financebench_dev.jsonl"))
    return [q["text"] for q in qs][:n]


def _task_query(a: dict) -> dict:
    cfg = Config.from_env()
    t = time.perf_counter()
    index = load_index(a["folder"], embedder=get_embedder(cfg.embedder), config=cfg)
    index.embedder.embed_query("warm up the model")  # model load is part of load_seconds
    load_s = time.perf_counter() - t
    qs = _questions(a["queries"])
    times, vecs = [], []
    for q in qs:
        t = time.perf_counter()
        index.retrieve(q, k=5)
        times.append((time.perf_counter() - t) * 1000)
        vecs.append(index.embedder.embed_query(q))
    np.save(a["qvecs"], np.asarray(vecs, dtype=np.float32), allow_pickle=False)
    return {"load_seconds": round(load_s, 2), "retrieve": _pct(times)}


def _hnsw(dim: int):
    import faiss

    h = faiss.IndexHNSWFlat(dim, 32, faiss.METRIC_INNER_PRODUCT)
    h.hnsw.efConstruction = 80
    h.hnsw.efSearch = 256  # at least the search depth (k=200)
    return h


def _task_store(a: dict) -> dict:
    import faiss

    # one query at a time: OpenMP threads only add waiting on a shared machine (one thread, stated in the output)
    faiss.omp_set_num_threads(1)
    folder, kind, k = Path(a["folder"]), a["store"], int(a["k"])
    ids, vecs = _index_vectors(folder)
    q = np.load(a["qvecs"], allow_pickle=False)
    base = _rss_now()
    out_dir = Path(a["scratch"])
    out_dir.mkdir(parents=True, exist_ok=True)
    if kind not in _STORES:
        raise InvalidInput(f"unknown store {kind!r}: use one of {', '.join(STORES)}")
    t = time.perf_counter()
    if _STORES[kind] is None:  # FAISS HNSW: not a ppkit store
        h = _hnsw(vecs.shape[1])
        h.add(vecs)

        def search(v, kk):
            s, i = h.search(np.ascontiguousarray(v.reshape(1, -1), dtype=np.float32), kk)
            return i[0], s[0]
    else:
        name, options = _STORES[kind]
        store = stores.create(name, vecs.shape[1], **options)
        if store.supports_where:  # payload filters: the doc of each chunk, as a build stores it
            chunks = (folder / "chunks.jsonl").read_text(encoding="utf-8").splitlines()
            store.add(ids, vecs, [{"doc": json.loads(line)["doc"]} for line in chunks])
        else:
            store.add(ids, vecs)
        search = store.search
    build_s = time.perf_counter() - t
    rss_built = _rss_now()
    t = time.perf_counter()
    if _STORES[kind] is None:
        faiss.write_index(h, str(out_dir / "hnsw.faiss"))
    else:
        store.save(out_dir)
    save_s = time.perf_counter() - t
    times, got = [], []
    for v in q:
        t = time.perf_counter()
        i, _ = search(v, k)
        times.append((time.perf_counter() - t) * 1000)
        got.append([int(x) for x in i])
    out = {"build_seconds": round(build_s, 2), "save_seconds": round(save_s, 2), "disk_bytes": _folder_bytes(out_dir),
           "rss_vectors_loaded": base, "rss_store_built": rss_built, "search": _pct(times), "k": k, "n": len(ids)}
    if kind.startswith("faiss"):
        out["faiss_threads"] = 1
    if _STORES[kind] is None and a.get("real"):
        exact = np.argsort(-(q @ vecs.T), axis=1, kind="stable")
        cuts = {kk: min(kk, len(ids)) for kk in (10, k)}
        out["recall_vs_exact"] = {str(kk): round(float(np.mean([len(set(g[:c]) & set(e[:c].tolist())) / c
                                                               for g, e in zip(got, exact)])), 4)
                                  for kk, c in cuts.items()}
    return out


_TASKS = {"build": _task_build, "query": _task_query, "store": _task_store}


def _run_task(task: str, args: dict, out: Path, timeout: float) -> dict:
    """Run one task in a child process; its result plus the child's peak memory and wall time."""
    spec = out.with_suffix(".args.json")
    spec.write_text(json.dumps(args), encoding="utf-8")
    out.unlink(missing_ok=True)  # never read an earlier run's result
    load = [round(x, 1) for x in os.getloadavg()]  # a shared machine: the contention beside every number
    t = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "ppkit.bench.runs.scale", task, str(spec), str(out)],
                         env=child_env(PPKIT_QUIET="1"))
    deadline = time.monotonic() + timeout
    while True:  # bounded by the budget
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            p.kill()
            os.wait4(p.pid, 0)
            return {"error": f"stopped after {timeout:.0f} s (budget)", "loadavg_at_start": load}
        time.sleep(0.2)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t
    if p.returncode != 0 or not out.is_file():
        return {"error": f"exit status {p.returncode}", "wall_seconds": round(wall, 1)}
    res = json.loads(out.read_text(encoding="utf-8"))
    return {**res, "peak_rss_bytes": usage.ru_maxrss * 1024, "wall_seconds": round(wall, 1),
            "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1), "loadavg_at_start": load}


# -- the run ------------------------------------------------------------------------------------------
def _points(plan: ScalePlan) -> list[dict]:
    pts = [{"label": "4", "paths": [str(p) for p in tenk_paths()], "source": f"reference 10-Ks ({data_dir() / '10k'})",
            "real": True}]
    if plan.markdown_dir is not None:
        md = sorted(Path(plan.markdown_dir).glob("*.md"))
        if not md:
            raise MissingFile(f"no *.md in {plan.markdown_dir}")
        pts.append({"label": str(len(md)), "paths": [str(p) for p in md], "real": True,
                    "source": f"{len(md)} Markdown filings in {plan.markdown_dir}"})
        if plan.replicas > len(md):
            pts.append({"label": str(plan.replicas), "replicas_of": str(len(md)), "real": False,
                        "source": f"the {len(md)} filings plus {plan.replicas - len(md)} copies with the company "
                                  "renamed (cost only; vectors replayed from the real filings, not re-embedded)"})
    return pts


def run_scale(plan: ScalePlan, *, log=print) -> dict:
    """Measure every point of ``plan``; returns the JSON-ready result (see the module docstring)."""
    t0 = time.perf_counter()
    work = Path(plan.work) if plan.work else cache_dir() / "bench" / "scale"
    work.mkdir(parents=True, exist_ok=True)
    budget = plan.budget_minutes * 60

    def left() -> float:
        return budget - (time.perf_counter() - t0)

    def task(name: str, args: dict, out: Path) -> dict:
        if left() <= 0:
            log(f"  {name}: skipped (budget of {plan.budget_minutes:g} min spent)")
            return {"skipped": "budget"}
        log(f"  {name} ...")
        r = _run_task(name.split(":")[0], args, out, left())
        log(f"  {name}: {json.dumps({k: v for k, v in r.items() if k in ('seconds', 'chunks', 'error', 'peak_rss_bytes', 'search', 'retrieve')})}")
        return r

    points, throughput = [], None
    for pt in _points(plan):
        d = work / f"n{pt['label']}"
        d.mkdir(parents=True, exist_ok=True)
        folder = d / "index"
        log(f"point {pt['label']}: {pt['source']}")
        args = {"folder": str(folder)}
        if "replicas_of" in pt:
            real = next(p for p in points if p["label"] == pt["replicas_of"])
            paths = write_replicas([Path(p) for p in real["paths"]], plan.replicas, work / "replicas")
            args["replay_from"] = str(work / f"n{real['label']}" / "index")
            pt = {**pt, "paths": [str(p) for p in paths]}
        args["paths"] = pt["paths"]
        rec = {"label": pt["label"], "documents": len(pt["paths"]), "source": pt["source"], "real": pt["real"],
               "paths": pt["paths"]}
        prior = d / "build.json"
        reused = plan.reuse_builds and prior.is_file() and (folder / "manifest.json").is_file() and \
            json.loads(prior.read_text()).get("paths") == pt["paths"]
        if reused:
            rec["build"] = {**json.loads(prior.read_text())["build"], "reused_from_earlier_run": str(prior)}
            log(f"  build: reused from {prior}")
        else:
            rec["build"] = task("build", args, d / "build.out.json")
            if "error" not in rec["build"] and "skipped" not in rec["build"]:
                atomic_write(prior, json.dumps({"paths": pt["paths"], "build": rec["build"]}).encode())
        b = rec["build"]
        if "chunks" not in b:
            points.append(rec)
            continue
        if pt["real"] and b.get("chunks_embedded") and b.get("seconds_embed"):
            throughput = {"chunks_per_second": round(b["chunks_embedded"] / b["seconds_embed"], 2), "point": pt["label"],
                          "chunks": b["chunks_embedded"], "seconds": b["seconds_embed"]}
        if not pt["real"] and throughput:
            rest = b["seconds"] - b.get("seconds_embed", 0.0)
            rec["index_seconds_estimated"] = {
                "seconds": round(rest + b["chunks"] / throughput["chunks_per_second"], 1),
                "how": f"measured build without embedding ({rest:.1f} s) + {b['chunks']} chunks / "
                       f"{throughput['chunks_per_second']} chunks/s (embedding throughput measured at point "
                       f"{throughput['point']}); an estimate, not a measurement"}
        rec["rebuild"] = task("build:rebuild", {**args, "rebuild": True}, d / "rebuild.out.json")
        qvecs = d / "questions.npy"
        rec["query"] = task("query", {"folder": str(folder), "queries": plan.queries, "qvecs": str(qvecs)},
                            d / "query.out.json")
        rec["stores"] = {}
        if qvecs.is_file():
            for s in plan.stores:
                rec["stores"][s] = task(f"store:{s}", {"folder": str(folder), "store": s, "k": plan.k, "qvecs": str(qvecs),
                                                        "real": pt["real"], "scratch": str(d / s)}, d / f"{s}.out.json")
        points.append(rec)
    result = {"benchmark": "scale", "points": points, "embedding_throughput": throughput,
              "plan": {"markdown_dir": str(plan.markdown_dir) if plan.markdown_dir else None, "replicas": plan.replicas,
                       "queries": plan.queries, "k": plan.k, "budget_minutes": plan.budget_minutes,
                       "stores": list(plan.stores), "work": str(work)},
              "machine": {"cpus": os.cpu_count(), "memory_bytes": _total_memory()},
              "capacity": capacity(points),
              "seconds": round(time.perf_counter() - t0, 1)}
    return result


def _total_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None


def _peak(rec: dict) -> int:
    """The largest peak memory of a point's tasks (build, rebuild, query, stores)."""
    parts = [rec.get("build", {}), rec.get("rebuild", {}), rec.get("query", {}), *rec.get("stores", {}).values()]
    return max((p.get("peak_rss_bytes") or 0) for p in parts)


def capacity(points: list[dict], *, memory_bytes: int = 24 * 10 ** 9) -> dict | None:
    """The largest corpus one machine with ``memory_bytes`` holds: a least-squares line of each point's
    largest task peak memory against its chunks, solved for ``memory_bytes``; in filings at the real
    filings' mean chunks per filing. None with fewer than two measured points."""
    rows = [(p["build"]["chunks"], _peak(p), p["documents"]) for p in points
            if "chunks" in p.get("build", {}) and _peak(p) > 0]
    if len(rows) < 2:
        return None
    x = np.asarray([r[0] for r in rows], dtype=np.float64)
    y = np.asarray([r[1] for r in rows], dtype=np.float64)
    slope, icept = np.polyfit(x, y, 1)
    real = [p for p in points if p["real"] and "chunks" in p.get("build", {})]
    per_doc = max(real, key=lambda p: p["documents"])
    chunks_per_filing = per_doc["build"]["chunks"] / per_doc["documents"]
    max_chunks = int(np.floor((memory_bytes - icept) / slope + 1e-6)) if slope > 0 else None  # + rounding noise
    return {"memory_bytes": memory_bytes, "bytes_per_chunk": round(float(slope), 1), "intercept_bytes": round(float(icept)),
            "max_chunks": max_chunks,
            "chunks_per_filing": round(chunks_per_filing, 1),
            "max_filings": None if max_chunks is None else int(max_chunks / chunks_per_filing),
            "fit": "least squares, peak memory of the largest task against chunks, over points " +
                   ", ".join(p["label"] for p in points if "chunks" in p.get("build", {}))}


# -- reporting --------------------------------------------------------------------------------------
def _gb(x) -> str:
    return "–" if not x else f"{x / GIB:.2f}"


def _mb(x) -> str:
    return "–" if not x else f"{x / 2 ** 20:,.0f}"


def _ms(d: dict | None) -> str:
    d = d or {}
    return "–" if d.get("p50_ms") is None else f"{d['p50_ms']:.1f} / {d['p95_ms']:.1f}"


def scale_markdown(result: dict) -> str:
    """Two Markdown tables: per point (index, memory, disk, retrieve) and per point and store."""
    head = ("| filings | chunks | index s | embed s | peak GiB build | rebuild s | peak GiB rebuild | index MiB | "
            "rebuild peak disk MiB | load s | retrieve p50 / p95 ms | peak GiB query |\n" + "|---" * 12 + "|")
    rows = []
    for p in result["points"]:
        b, r, q = p.get("build", {}), p.get("rebuild", {}), p.get("query", {})
        est = p.get("index_seconds_estimated")
        idx = f"{est['seconds']:,.0f} (est.)" if est else (f"{b['seconds']:,.1f}" if "seconds" in b else "–")
        rows.append(f"| {p['documents']}{'' if p['real'] else ' (replicas)'} | {b.get('chunks', '–')} | {idx} | "
                    f"{b.get('seconds_embed', '–') if p['real'] else 'replayed'} | {_gb(b.get('peak_rss_bytes'))} | "
                    f"{r.get('seconds', '–')} | {_gb(r.get('peak_rss_bytes'))} | {_mb(b.get('disk_bytes'))} | "
                    f"{_mb(r.get('peak_disk_bytes'))} | {q.get('load_seconds', '–')} | {_ms(q.get('retrieve'))} | "
                    f"{_gb(q.get('peak_rss_bytes'))} |")
    shead = ("| filings | store | build s | on disk MiB | peak GiB | search p50 / p95 ms (k=200) | recall@10 / @200 vs exact |\n"
             + "|---" * 7 + "|")
    srows = []
    for p in result["points"]:
        for name, s in p.get("stores", {}).items():
            rc = s.get("recall_vs_exact")
            rtxt = " / ".join(f"{v:.3f}" for v in rc.values()) if rc else ("–" if p["real"] else "not measured (replicas)")
            srows.append(f"| {p['documents']} | {name} | {s.get('build_seconds', s.get('error', s.get('skipped', '–')))} | "
                         f"{_mb(s.get('disk_bytes'))} | {_gb(s.get('peak_rss_bytes'))} | {_ms(s.get('search'))} | {rtxt} |")
    lines = [head, *rows, "", shead, *srows]
    tp = result.get("embedding_throughput")
    if tp:
        lines += ["", (f"Embedding throughput: {tp['chunks_per_second']} chunks/s ({tp['chunks']} chunks in "
                       f"{tp['seconds']} s at point {tp['point']}).")]
    for p in result["points"]:
        if p.get("index_seconds_estimated"):
            lines.append(f"Index time of the {p['documents']}-document point: {p['index_seconds_estimated']['how']}.")
    cap = result.get("capacity")
    if cap and cap.get("max_filings"):
        lines.append(f"Capacity of a {cap['memory_bytes'] / 1e9:.0f} GB machine: about {cap['max_chunks']:,} chunks "
                     f"≈ {cap['max_filings']:,} filings ({cap['bytes_per_chunk'] / 1024:.1f} KiB per chunk; {cap['fit']}).")
    lines.append(f"Run time: {result['seconds'] / 60:.1f} min.")
    return "\n".join(lines)


def plot_scale(result: dict, *, figsize=(12, 3.8)):
    """Log-log panels against corpus size (chunks): index time, peak memory, query latency.
    Returns (rows, Figure); the caller saves it. Estimated index times are hollow markers."""
    import matplotlib.pyplot as plt

    pts = [p for p in result["points"] if "chunks" in p.get("build", {})]
    x = [p["build"]["chunks"] for p in pts]
    rows = []
    fig, ax = plt.subplots(1, 3, figsize=figsize)
    t_idx = [p["index_seconds_estimated"]["seconds"] if p.get("index_seconds_estimated") else p["build"]["seconds"]
             for p in pts]
    ax[0].plot(x, t_idx, "o-", label="index (build)")
    for xi, p, ti in zip(x, pts, t_idx):
        if p.get("index_seconds_estimated"):
            ax[0].plot([xi], [ti], "o", mfc="white", color="C0")
    reb = [(xi, p["rebuild"]["seconds"]) for xi, p in zip(x, pts) if "seconds" in p.get("rebuild", {})]
    if reb:
        ax[0].plot(*zip(*reb), "s--", label="rebuild (vectors reused)")
    for s in result["plan"]["stores"]:
        v = [(xi, p["stores"][s]["build_seconds"]) for xi, p in zip(x, pts) if "build_seconds" in p.get("stores", {}).get(s, {})]
        if v:
            ax[0].plot(*zip(*v), ".:", label=f"store {s}")
    ax[0].set(title="time (s); hollow = estimated", xlabel="chunks")
    for name, key in (("build", "build"), ("rebuild", "rebuild"), ("query", "query")):
        v = [(xi, p[key]["peak_rss_bytes"] / GIB) for xi, p in zip(x, pts) if p.get(key, {}).get("peak_rss_bytes")]
        if v:
            ax[1].plot(*zip(*v), "o-", label=name)
    for s in result["plan"]["stores"]:
        v = [(xi, p["stores"][s]["peak_rss_bytes"] / GIB) for xi, p in zip(x, pts)
             if p.get("stores", {}).get(s, {}).get("peak_rss_bytes")]
        if v:
            ax[1].plot(*zip(*v), ".:", label=s)
    ax[1].set(title="peak memory (GiB)", xlabel="chunks")
    v = [(xi, p["query"]["retrieve"]["p50_ms"]) for xi, p in zip(x, pts) if p.get("query", {}).get("retrieve")]
    if v:
        ax[2].plot(*zip(*v), "o-", label="retrieve p50 (k=5)")
    for s in result["plan"]["stores"]:
        v = [(xi, p["stores"][s]["search"]["p50_ms"]) for xi, p in zip(x, pts) if p.get("stores", {}).get(s, {}).get("search")]
        if v:
            ax[2].plot(*zip(*v), ".:", label=f"{s} p50 (k=200)")
    ax[2].set(title="query latency (ms)", xlabel="chunks")
    for a in ax:
        a.set_xscale("log")
        a.set_yscale("log")
        a.grid(True, which="both", alpha=0.3)
        a.legend(fontsize=7)
    for p, xi, ti in zip(pts, x, t_idx):
        rows.append({"label": p["label"], "chunks": xi, "index_seconds": ti, "peak_gib": _peak(p) / GIB})
    fig.tight_layout()
    return rows, fig


def _main(argv: list[str]) -> int:
    """Child-process entry: ``python -m ppkit.bench.runs.scale TASK ARGS.json OUT.json``."""
    task, spec, out = argv
    res = _TASKS[task](json.loads(Path(spec).read_text(encoding="utf-8")))
    atomic_write(Path(out), json.dumps(res).encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
