"""``ppkit bench``: the retrieval benchmark, the online answer benchmark, and the reference tables.

    ppkit bench retrieval --questions FILE [--k 3 --k 5] [--json OUT] [--index DIR] [--no-baselines]
                          [--gold-from-reference]   (an index of another extraction of the reference filings)
                          [--cv loco [--cv-with FILE ...]]   (in- and out-of-sample figures with 95% intervals)
    ppkit bench answers   --questions FILE [--k 5] [--index DIR] [--out DIR]     (needs a Gemini key)
    ppkit bench reproduce [--k 3]                                                 (reference tables, k=3 failures)
    ppkit bench verify    [--json OUT]       (the verifier against planted errors in the reference answers)

``--questions`` takes the Comprehensive ``.xlsx``, a FinanceBench ``.jsonl`` or the
multimodal ``.json``; the format is detected from the content. Without ``--index``
the shared reference index of the matching corpus is used (built once, cached).
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

from ..core.config import RETRIEVAL_MODES, Config, figures_dir
from ..core.data import DataNotFound, benchmark_path, data_dir
from ..core.errors import InvalidInput
from ..core.io import atomic_write
from ..pipeline import load_index, reference_index
from .answers import NeedsKey, run_answers_bench
from .baselines import build_baselines
from .fit_rerank import VISIBLE_SETS, load_sets
from .gold import load_gold
from .harness import MODES, BenchPlan, markdown_table, run_retrieval_bench
from .loaders import load_questions
from .loco import loco_bench, loco_markdown
from .plots import plot_retrieval
from .reproduce import (
    failure_analysis,
    failure_markdown,
    reference_summary,
    summary_markdown,
)
from .transfer import gold_from_reference
from .verify_bench import run_verify_bench, verify_markdown

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
    r.add_argument("--retrieval", action="append", choices=RETRIEVAL_MODES,
                   help="also run the auto and none modes with this stage-1 recall (repeatable), "
                        "e.g. --retrieval bm25 --retrieval hybrid")
    r.add_argument("--reference-logs", help="Comprehensive gold: folder of the reference k=5 logs")
    r.add_argument("--reference-log", help="multimodal gold: the reference run's JSON log")
    r.add_argument("--gold-from-reference", action="store_true",
                   help="the index holds another extraction of the reference filings (documents named like the "
                        "reference): make the gold over the reference Markdown and transfer it onto the index")
    r.add_argument("--reference-md", action="append", metavar="FILE",
                   help="with --gold-from-reference: a reference Markdown file (repeatable; default: the reference "
                        "10-Ks and papers in the data folder)")
    r.add_argument("--figure", help="where to write the figure (default: figures/bench_retrieval_<set>.png)")
    r.add_argument("--no-figure", action="store_true", help="do not draw the figure")
    r.add_argument("--quiet", action="store_true", help="no progress bars")
    r.add_argument("--cv", choices=["loco"], help="in-sample and out-of-sample figures with 95%% bootstrap intervals: "
                   "nested leave-one-company-out over this set and the other visible sets (ppkit.bench.loco)")
    r.add_argument("--cv-with", action="append", metavar="FILE",
                   help="with --cv: the question sets pooled with --questions (repeatable; default: the visible "
                        "sets of ppkit.bench.fit_rerank.VISIBLE_SETS)")
    r.add_argument("--section-slots", type=int, default=0, metavar="N",
                   help="with --cv: N of the 50 candidate slots go to the section channel over titles and "
                        "summaries (ppkit.retrieval.section_channel); with --retrieval, --cv uses the last one")
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

    v = bs.add_parser("verify", help="the verifier against planted errors in the reference answers (offline)")
    v.add_argument("--index", help="index folder (default: the shared 10-K reference index)")
    v.add_argument("--json", metavar="OUT", help="write the full result (every case) as JSON")
    v.set_defaults(func=handler)


def _data_root_near(questions: Path) -> Path | None:
    """The reference data folder beside a question file in ``<data>/benchmarks/``, used when the data
    cannot be found otherwise (a checkout without ``../shared/data``); None: the usual search."""
    try:
        data_dir()
        return None
    except DataNotFound:
        pass
    root = questions.resolve().parent.parent
    beside = questions.resolve().parent.name == "benchmarks" and ((root / "10k").is_dir() or (root / "papers").is_dir())
    return root if beside else None


def _open_index(args, fmt: str, config, data_root: Path | None = None):
    if getattr(args, "index", None):
        return load_index(args.index, config=config)
    return reference_index("papers" if fmt == "multimodal" else "10k", config=config,
                           progress=not getattr(args, "quiet", False), data_root=data_root)


def _cross_validated(args, config) -> int:
    """``--cv loco``: the nested leave-one-company-out table (and JSON) over the pooled question sets."""
    first = Path(args.questions)
    others = [Path(p) for p in args.cv_with] if args.cv_with else [benchmark_path(n) for n in VISIBLE_SETS]
    paths = list({p.resolve(): p for p in [first, *others]}.values())
    options = {"section_slots": args.section_slots or 0}
    if args.retrieval:
        options["retrieval"] = args.retrieval[-1]
    result = loco_bench(load_sets(paths, config, progress=not args.quiet), options=options)
    if args.json:
        atomic_write(Path(args.json), json.dumps(result, ensure_ascii=False, indent=1).encode("utf-8"))
        print(f"wrote {args.json}", file=sys.stderr)
    print(loco_markdown(result))
    return 0


def _retrieval(args, config) -> int:
    if getattr(args, "cv", None):
        return _cross_validated(args, config)
    path = Path(args.questions)
    fmt, questions = load_questions(path)
    ks = sorted(set(args.k or [3, 5]))
    modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    bad = [m for m in modes if m not in MODES]
    if bad:
        raise InvalidInput(f"unknown mode(s) {bad}: use auto, none, gold")
    for extra in dict.fromkeys(args.retrieval or []):  # the default recall is already in the plain modes
        if extra != config.retrieval:
            modes += tuple(f"{m}:{extra}" for m in ("auto", "none") if m in modes)
    if getattr(args, "reference_md", None) and not getattr(args, "gold_from_reference", False):
        raise InvalidInput("--reference-md names the reference for --gold-from-reference: add that flag")
    data_root = _data_root_near(path)
    index = _open_index(args, fmt, config, data_root)
    transfer = None
    if getattr(args, "gold_from_reference", False):
        g, transfer = gold_from_reference(fmt, questions, path, index, args, reference_paths=args.reference_md,
                                          data_root=data_root)
        print(transfer.summary(), file=sys.stderr)
        for sid, why in transfer.unmapped.items():
            print(f"  gold {sid} not transferred: {why}", file=sys.stderr)
    else:
        g = load_gold(fmt, questions, path, index, args, data_root)
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
    result = run_retrieval_bench(index, questions, g, benchmark=fmt, plan=BenchPlan(tuple(ks), modes),
                                 baselines=baselines, progress=not args.quiet)
    result = replace(result, questions_file=str(path), format=fmt,
                     transfer=transfer.to_dict() if transfer is not None else None)
    if args.json:  # written before anything is printed, so a printing failure loses nothing
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(out, json.dumps(result.to_dict(), ensure_ascii=False, indent=1).encode("utf-8"))
        print(f"wrote {out}", file=sys.stderr)
    if not result.n:
        print(f"no question of {path} has gold sections in this index: nothing to score "
              f"({len(result.skipped)} skipped, see `skipped`{' in ' + args.json if args.json else ''})")
    else:
        print(markdown_table(result))
    if not args.no_figure and result.n:
        try:
            import matplotlib
        except ImportError:
            print("figure skipped: it needs matplotlib (pip install 'ppkit[notebooks]')", file=sys.stderr)
            return 0
        matplotlib.use("Agg")
        _, fig = plot_retrieval(result)
        fpath = Path(args.figure) if args.figure else figures_dir() / f"bench_retrieval_{path.stem}.png"
        fpath.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(fpath, dpi=120, bbox_inches="tight")
        print(f"wrote {fpath}", file=sys.stderr)
    return 0


def _answers(args, config) -> int:
    cfg = config
    if not cfg.use_gemini:
        raise NeedsKey("`ppkit bench answers` needs a Gemini key: set GEMINI_API_KEY (or GOOGLE_API_KEY) and unset "
                       "PPKIT_OFFLINE. Offline, use `ppkit bench retrieval` (it measures retrieval without an LLM).")
    path = Path(args.questions)
    fmt, questions = load_questions(path)
    if args.limit:
        questions = questions[: args.limit]
    index = _open_index(args, fmt, cfg, _data_root_near(path))
    out = run_answers_bench(index, questions, fmt=fmt, k=args.k, out_dir=args.out, tolerance=args.tolerance,
                            benchmark=path.stem)
    print(out["scorecard_markdown"])
    print(f"\nwrote {out['log_path']} and {out['scorecard_path']}", file=sys.stderr)
    return 0


def _reproduce(args, config) -> int:
    bench_dir = data_dir() / "benchmarks"
    summary = reference_summary(bench_dir)
    print(summary_markdown(summary))
    index = _open_index(args, "comprehensive", config)
    fa = failure_analysis(index, bench_dir, k=args.k)
    print()
    print(failure_markdown(fa))
    return 0


def _verify(args, config) -> int:
    index = _open_index(args, "comprehensive", config)
    result = run_verify_bench(index)
    if args.json:
        atomic_write(Path(args.json), json.dumps(result, indent=1, ensure_ascii=False).encode("utf-8"))
        print(f"wrote {args.json}", file=sys.stderr)
    print(verify_markdown(result))
    return 0


def run_bench(args, config=None) -> int:
    """Run the ``bench`` subcommand in ``args.bench_command`` with ``config`` (default
    :meth:`Config.from_env`); returns the exit status."""
    config = config or Config.from_env()
    cmd = args.bench_command
    try:
        if cmd == "retrieval":
            return _retrieval(args, config)
        if cmd == "answers":
            return _answers(args, config)
        if cmd == "reproduce":
            return _reproduce(args, config)
        if cmd == "verify":
            return _verify(args, config)
    except NeedsKey as e:
        print(f"ppkit bench {cmd}: {e}", file=sys.stderr)
        return 2
    raise ValueError(f"unknown bench command {cmd!r}")
