"""``ppkit bench``: the retrieval benchmark, the online answer benchmark, and the reference tables.

    ppkit bench retrieval --questions FILE [--k 3 --k 5] [--json OUT] [--index DIR] [--no-baselines]
    ppkit bench answers   --questions FILE [--k 5] [--index DIR] [--out DIR]     (needs a Gemini key)
    ppkit bench reproduce [--k 3]                                                 (reference tables, k=3 failures)

``--questions`` takes the Comprehensive ``.xlsx``, a FinanceBench ``.jsonl`` or the
multimodal ``.json``; the format is detected from the content. Without ``--index``
the shared reference index of the matching corpus is used (built once, cached).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

__all__ = ["add_bench_parser", "run_bench"]


def add_bench_parser(subparsers, handler) -> None:
    """Add ``bench`` and its subcommands to the ``ppkit`` parser; ``handler(args)`` runs them."""
    b = subparsers.add_parser("bench", help="benchmarks: retrieval against gold sections, answers, reference tables")
    bs = b.add_subparsers(dest="bench_command", required=True)

    r = bs.add_parser("retrieval", help="hit@k / recall@k / context size against gold sections, with baselines")
    r.add_argument("--questions", required=True, help="Comprehensive .xlsx, FinanceBench .jsonl or multimodal .json")
    r.add_argument("--k", type=int, action="append", help="cut-off (repeatable; default 3 and 5)")
    r.add_argument("--json", metavar="OUT", help="write the full result as JSON")
    r.add_argument("--index", help="index folder (default: the shared reference index of the corpus)")
    r.add_argument("--no-baselines", action="store_true", help="skip the chunk baselines")
    r.add_argument("--modes", default="auto,none,gold", help="document-filter modes (default auto,none,gold)")
    r.add_argument("--reference-logs", help="Comprehensive gold: folder of the reference k=5 logs")
    r.add_argument("--reference-log", help="multimodal gold: the reference run's JSON log")
    r.add_argument("--figure", help="where to write the figure (default: figures/bench_retrieval_<set>.png)")
    r.add_argument("--no-figure", action="store_true", help="do not draw the figure")
    r.add_argument("--quiet", action="store_true", help="no progress bars")
    r.set_defaults(func=handler)

    a = bs.add_parser("answers", help="answer every question with the LLM and judge it (needs a Gemini key)")
    a.add_argument("--questions", required=True)
    a.add_argument("--k", type=int, default=5)
    a.add_argument("--index", help="index folder (default: the shared reference index)")
    a.add_argument("--out", help="folder for the log and scorecard (default: outputs/bench)")
    a.add_argument("--limit", type=int, help="only the first N questions")
    a.add_argument("--tolerance", type=float, default=0.02, help="relative tolerance of the numeric check (0.02)")
    a.set_defaults(func=handler)

    p = bs.add_parser("reproduce", help="the reference scorecards and the k=3 failure analysis")
    p.add_argument("--index", help="index folder (default: the shared 10-K reference index)")
    p.add_argument("--k", type=int, default=3, help="ppkit's cut-off to compare with the reference k=3 run")
    p.set_defaults(func=handler)


@contextlib.contextmanager
def _data_dir_near(questions: Path):
    """Let the reference data be found beside a question file in ``<data>/benchmarks/``
    when it cannot be found otherwise (a checkout without ``../shared/data``)."""
    from ..data import DataNotFound, data_dir

    old = os.environ.get("PPKIT_DATA_DIR")
    try:
        data_dir()
        found = True
    except DataNotFound:
        found = False
    root = questions.resolve().parent.parent
    beside = questions.resolve().parent.name == "benchmarks" and ((root / "10k").is_dir() or (root / "papers").is_dir())
    if not found and beside:
        os.environ["PPKIT_DATA_DIR"] = str(root)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("PPKIT_DATA_DIR", None)
        else:
            os.environ["PPKIT_DATA_DIR"] = old


def _open_index(args, fmt: str):
    from ..index import load_index, reference_index

    if getattr(args, "index", None):
        return load_index(args.index)
    return reference_index("papers" if fmt == "multimodal" else "10k", progress=not getattr(args, "quiet", False))


def _sibling(questions: Path, name: str, explicit: str | None) -> Path:
    from ..data import benchmark_path

    if explicit:
        return Path(explicit)
    near = questions.resolve().parent / name
    return near if near.exists() else benchmark_path(name)


def load_gold(fmt: str, questions: list[dict], path: Path, docs, args=None):
    """The gold set for a question file of format ``fmt`` (used by the CLI and notebooks)."""
    from . import gold

    if fmt == "comprehensive":
        return gold.comprehensive_gold(questions, _sibling(path, "comprehensive_k5",
                                                           getattr(args, "reference_logs", None)), docs)
    if fmt == "financebench":
        return gold.financebench_gold(questions, docs)
    return gold.multimodal_gold(questions, _sibling(path, "multimodal_reference_log.json",
                                                    getattr(args, "reference_log", None)), docs)


def _retrieval(args) -> int:
    from ..config import figures_dir
    from .baselines import build_baselines
    from .harness import markdown_table, run_retrieval_bench
    from .loaders import load_questions

    path = Path(args.questions)
    fmt, questions = load_questions(path)
    ks = sorted(set(args.k or [3, 5]))
    modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    bad = [m for m in modes if m not in ("auto", "none", "gold")]
    if bad:
        raise ValueError(f"unknown mode(s) {bad}: use auto, none, gold")
    with _data_dir_near(path):
        index = _open_index(args, fmt)
        g = load_gold(fmt, questions, path, index, args)
    rep = g.report()
    print(f"{path.name}: {fmt}, {len(questions)} questions; gold for {rep['with_gold']} "
          f"({rep['coverage']:.0%}), {rep['gold_sections']} gold sections", file=sys.stderr)
    for qid, why in rep["unmapped"].items():
        print(f"  no gold for {qid}: {why}", file=sys.stderr)
    for qid, notes in rep["notes"].items():
        for n in notes:
            print(f"  note {qid}: {n}", file=sys.stderr)
    baselines = None
    if not args.no_baselines:
        baselines, info = build_baselines(index, index.embedder, index=index, progress=not args.quiet)
        for name, i in info.items():
            how = ("lexical" if "cache" not in i else "vectors from the cache" if i["from_cache"] else
                   f"embedded {i['embedded']}, {i['reused_from_index']} reused from the index")
            print(f"  baseline {name}: {i['chunks']} chunks ({how})", file=sys.stderr)
    result = run_retrieval_bench(index, questions, g, benchmark=fmt, ks=ks, modes=modes, baselines=baselines,
                                 progress=not args.quiet)
    result["questions_file"] = str(path)
    result["format"] = fmt
    print(markdown_table(result))
    if args.json:
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
        print(f"\nwrote {out}", file=sys.stderr)
    if not args.no_figure:
        try:
            import matplotlib
        except ImportError:
            print("figure skipped: it needs matplotlib (pip install 'ppkit[notebooks]')", file=sys.stderr)
            return 0
        matplotlib.use("Agg")
        from .plots import plot_retrieval

        _, fig = plot_retrieval(result)
        fpath = Path(args.figure) if args.figure else figures_dir() / f"bench_retrieval_{path.stem}.png"
        fpath.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(fpath, dpi=120, bbox_inches="tight")
        print(f"wrote {fpath}", file=sys.stderr)
    return 0


def _answers(args) -> int:
    from ..config import Config
    from .answers import NeedsKey, run_answers_bench

    cfg = Config.from_env()
    if not cfg.use_gemini:
        raise NeedsKey("`ppkit bench answers` needs a Gemini key: set GEMINI_API_KEY (or GOOGLE_API_KEY) and unset "
                       "PPKIT_OFFLINE. Offline, use `ppkit bench retrieval` (it measures retrieval without an LLM).")
    from .loaders import load_questions

    path = Path(args.questions)
    fmt, questions = load_questions(path)
    if args.limit:
        questions = questions[: args.limit]
    with _data_dir_near(path):
        index = _open_index(args, fmt)
    out = run_answers_bench(index, questions, fmt=fmt, k=args.k, out_dir=args.out, tolerance=args.tolerance,
                            benchmark=path.stem)
    print(out["scorecard_markdown"])
    print(f"\nwrote {out['log_path']} and {out['scorecard_path']}", file=sys.stderr)
    return 0


def _reproduce(args) -> int:
    from ..data import data_dir
    from .reproduce import failure_analysis, failure_markdown, reference_summary, summary_markdown

    bench_dir = data_dir() / "benchmarks"
    summary = reference_summary(bench_dir)
    print(summary_markdown(summary))
    index = _open_index(args, "comprehensive")
    fa = failure_analysis(index, bench_dir, k=args.k)
    print()
    print(failure_markdown(fa))
    return 0


def run_bench(args) -> int:
    """Run the ``bench`` subcommand in ``args.bench_command``; returns the exit status."""
    from .answers import NeedsKey

    cmd = args.bench_command
    try:
        if cmd == "retrieval":
            return _retrieval(args)
        if cmd == "answers":
            return _answers(args)
        if cmd == "reproduce":
            return _reproduce(args)
    except NeedsKey as e:
        print(f"ppkit bench {cmd}: {e}", file=sys.stderr)
        return 2
    raise ValueError(f"unknown bench command {cmd!r}")
