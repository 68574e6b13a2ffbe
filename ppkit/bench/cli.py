"""``ppkit bench``: the retrieval benchmark, the online answer benchmark, and the reference tables.

    ppkit bench retrieval --questions FILE [--k 3 --k 5] [--json OUT] [--index DIR] [--no-baselines]
                          [--gold-from-reference]   (an index of another extraction of the reference filings)
                          [--cv loco [--cv-with FILE ...]]   (in- and out-of-sample figures with 95% intervals)
    ppkit bench answers   --questions FILE [--k 5] [--index DIR] [--out DIR]     (needs a Gemini key)
    ppkit bench answers   --offline --questions FILE [--k 3 --k 5] [--index DIR] [--store shared --store filing]
                          [--json OUT]       (answer blocks judged strictly offline: figures, unit, sign, yes/no)
    ppkit bench reproduce [--k 3]                                                 (reference tables, k=3 failures)
    ppkit bench verify    [--json OUT]       (the verifier against planted errors in the reference answers)
                          [--questions FILE... [--k 3 --k 5]]  (and the answer blocks of those questions, asked)
    ppkit bench metrics   --questions FILE... [--k 3 --k 5] [--index DIR] [--json OUT]
                          (FinanceBench metric questions computed offline, judged strictly: 1%, unit, sign)
    ppkit bench abstain   [--questions FILE] [--k 5] [--json OUT]   (abstention precision and recall)
    ppkit bench scale     [--markdown-dir DIR] [--replicas 400] [--budget-minutes 150] [--json OUT]
                                             (index time, memory, disk, query latency as the corpus grows)
    ppkit bench peers     [--questions FILE ...] [--index DIR] [--json OUT]   (LangChain/LlamaIndex recipes and
                                             ragnav beside ppkit on the same gold; needs the `peers` extra)
    ppkit bench metadata  --documents documents.jsonl --markdown-dir DIR [--questions FILE] [--json OUT]
    ppkit bench serve     [--index DIR] [--clients 1 --clients 4 ...] [--requests 200] [--soak 600] [--workers 2]
                          [--json OUT]       (ppkit serve under load on loopback beside the in-process rate)
    ppkit bench serve --faults [--index DIR] [--target PDF] [--json OUT]   (uploads under kill -9, concurrency, load)
    ppkit bench compare   [--n 10] [--pdf] [--whole PDF PDF | --no-whole] [--no-reports] [--no-alignments]
                          [--fit OUT.json] [--json OUT]
                                             (document comparison against human alignments of three pairs,
                                              the reference's four reports and two 10-Ks)
    ppkit bench extraction [--backends offline,layout] [--workers 2] [--out DIR]
                                             (PDF extractors side by side: pages/s, CPU, memory, headings vs reference)
    ppkit bench split-words DIR              (headings per filing and the split-word repair over `ppkit extract` output)
    ppkit bench stage2-rules [--shelf DIR] [--rules none,...]   (rules after stage 2, chosen leave-one-company-out)
    ppkit bench statement-weight [--shelf DIR] [--grid 0.8,1.0,1.2,1.6] [--retrieval MODE ...]
                                             (the re-ranker's statement weight, chosen leave-one-company-out)

``--questions`` takes the Comprehensive ``.xlsx``, a FinanceBench ``.jsonl`` or the
multimodal ``.json``; the format is detected from the content. Without ``--index``
the shared reference index of the matching corpus is used (built once, cached).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace
from pathlib import Path

from ..compare.align import AlignWeights
from ..core.config import RERANKERS, RETRIEVAL_MODES, Config, figures_dir
from ..core.data import DataNotFound, benchmark_path, data_dir, financebench_dir
from ..core.errors import InvalidInput
from ..core.io import atomic_write
from ..pipeline import cached_index, load_index, reference_index
from .data.gold import load_gold
from .data.loaders import load_questions
from .data.shelf import miss_causes
from .fit.loco import loco_bench, loco_markdown
from .fit.rerank import VISIBLE_SETS, load_sets
from .fit.stage2_rules import RULES, check_rules, stage2_rules
from .fit.statement_weight import statement_weight, weight_grid
from .runs.abstain import (
    abstain_markdown,
    default_abstain_questions,
    load_abstain_questions,
    run_abstain_bench,
)
from .fit.answers import ask_all, evaluate, fit, fit_markdown, loco, read_all
from .runs.answer_judge import judge_markdown, run_answer_judge, sealed_view
from .runs.answers import NeedsKey, run_answers_bench
from .runs.baselines import BASELINES, build_baselines
from .runs.alignment import alignment_indexes, alignment_markdown, run_alignment_bench
from .runs.compare import compare_markdown, default_reports, run_compare_bench, run_whole_bench, whole_markdown
from .runs.computed import metric_markdown, run_metric_bench
from .runs.extraction import default_out as default_extract_out
from .runs.extraction import extraction_table, run_extractions, split_words_report
from .runs.harness import MODES, BenchPlan, markdown_table, run_retrieval_bench
from .runs.metadata import metadata_markdown, run_metadata_bench
from .runs.peers import PEERS, peers_markdown, plot_peers, run_peers
from .runs.reproduce import (
    failure_analysis,
    failure_markdown,
    reference_summary,
    summary_markdown,
)
from .runs.scale import (
    ScalePlan,
    default_markdown_dir,
    plot_scale,
    run_scale,
    scale_markdown,
)
from .runs.serve import ServePlan, run_serve_bench, serve_markdown
from .runs.serve_faults import FaultPlan, default_fault_pdfs, faults_markdown, run_fault_bench
from .runs.transfer import gold_from_reference
from .measures.verify_block import block_case, blocks_markdown, summarize_blocks
from .runs.off_question import off_question_blocks
from .runs.verify import run_verify_bench, verify_markdown
from .views.plots import plot_retrieval

__all__ = ["add_bench_parser", "run_bench"]


class _Once(argparse.Action):
    """An option that may be given once: argparse would silently keep only the last of several."""

    def __call__(self, parser, namespace, values, option_string=None):
        if getattr(namespace, self.dest, None) is not None:
            parser.error(f"{option_string} given twice: run one question file per call")
        setattr(namespace, self.dest, values)


def add_bench_parser(subparsers, handler) -> None:
    """Add ``bench`` and its subcommands to the ``ppkit`` parser; ``handler(args)`` runs them."""
    b = subparsers.add_parser("bench", help="benchmarks: retrieval against gold sections, answers, reference tables")
    bs = b.add_subparsers(dest="bench_command", required=True)

    r = bs.add_parser("retrieval", help="hit@k / recall@k / context size against gold sections, with baselines")
    r.add_argument("--questions", required=True, action=_Once,
                   help="Comprehensive .xlsx, FinanceBench .jsonl or multimodal .json (one file per run)")
    r.add_argument("--k", type=int, action="append", help="cut-off (repeatable; default 3 and 5)")
    r.add_argument("--json", metavar="OUT", help="write the full result as JSON")
    r.add_argument("--index", help="index folder (default: the shared reference index of the corpus)")
    r.add_argument("--no-baselines", action="store_true", help="skip the chunk baselines")
    r.add_argument("--baselines", default=",".join(BASELINES),
                   help=f"the chunk baselines to run, comma-separated (default {','.join(BASELINES)}; blind-dense "
                        "embeds a second chunking of every document: on a large shelf, leave it out to save that)")
    r.add_argument("--modes", default="auto,none,gold", help="document-filter modes (default auto,none,gold)")
    r.add_argument("--reranker", choices=RERANKERS, help="offline stage 2 (default structural, $PPKIT_RERANKER)")
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
                   "nested leave-one-company-out over this set and the other visible sets (ppkit.bench.fit.loco)")
    r.add_argument("--cv-with", action="append", metavar="FILE",
                   help="with --cv: the question sets pooled with --questions (repeatable; default: the visible "
                        "sets of ppkit.bench.fit.rerank.VISIBLE_SETS)")
    r.add_argument("--shelf-index", metavar="DIR",
                   help="with --cv: also pool the FinanceBench questions (financebench/questions.jsonl of the data) "
                        "asked of this index of the FinanceBench filings; folds are by company across all sets")
    r.add_argument("--section-slots", type=int, default=0, metavar="N",
                   help="with --cv: N of the 50 candidate slots go to the section channel over titles and "
                        "summaries (ppkit.retrieval.section_channel); with --retrieval, --cv uses the last one")
    r.set_defaults(func=handler)

    a = bs.add_parser("answers", help="answer every question with the LLM and judge it (needs a Gemini key); "
                                      "--offline: the answer blocks judged strictly without an LLM")
    a.add_argument("--questions", required=True)
    a.add_argument("--k", type=int, action="append",
                   help="cut-off (online: one, default 5; --offline: repeatable, default 3 and 5)")
    a.add_argument("--offline", action="store_true",
                   help="ask offline and judge each answer block strictly: figures within 1%%, unit, sign, yes/no "
                        "(ppkit.bench.measures.answer_judge)")
    a.add_argument("--store", action="append", choices=("shared", "filing"),
                   help="with --offline: ask the whole index (shared, default) and/or the question's own filing "
                        "(filing: a store per filing); repeatable")
    a.add_argument("--json", metavar="OUT", help="with --offline: write every row and table as JSON (a sealed set: "
                                                 "the tables and failure kinds only)")
    a.add_argument("--shelf-index", metavar="DIR",
                   help="with --offline: the index of the FinanceBench filings, asked the questions of a set's "
                        "'shelf' corpus (a sealed set); its '10k' questions go to --index or the reference index")
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
    v.add_argument("--questions", action="append", metavar="FILE",
                   help="also ask these questions offline and measure the answer block's verification "
                        "(planted figures, clean blocks, planted off-question blocks, the answered check beside the "
                        "strict judge); repeatable")
    v.add_argument("--k", type=int, action="append", help="with --questions: cut-offs (default 3 and 5)")
    v.set_defaults(func=handler)

    cp = bs.add_parser("compare", help="document comparison against human alignments, the reference's reports, "
                                       "and two 10-Ks (offline)")
    cp.add_argument("--n", type=int, default=10, help="sections of A per comparison (default 10, as the reference)")
    cp.add_argument("--pdf", action="store_true", help="also from the agreements' PDFs (extracted and indexed first)")
    cp.add_argument("--whole", nargs=2, metavar="PDF", help="whole-document mode on these two filings (default: "
                    "Corning's 2021 and 2022 10-K of the FinanceBench shelf)")
    cp.add_argument("--no-whole", action="store_true", help="skip the whole-document measurement")
    cp.add_argument("--no-reports", action="store_true", help="skip the reference's reports (criteria mode)")
    cp.add_argument("--no-alignments", action="store_true", help="skip the human alignments (whole documents)")
    cp.add_argument("--fit", metavar="OUT", help="fit the alignment's weights on the visible human alignments "
                    "(the agreements' Articles 1-4, the papers) and write them to OUT (the package's: "
                    "ppkit/compare/align_weights.json)")
    cp.add_argument("--json", metavar="OUT", help="write the full result as JSON")
    cp.set_defaults(func=handler)

    m = bs.add_parser("metrics", help="FinanceBench metric questions computed offline, judged strictly (1%%, unit, sign)")
    m.add_argument("--questions", action="append", required=True, help="FinanceBench .jsonl (repeatable)")
    m.add_argument("--k", type=int, action="append", help="cut-off (repeatable; default 3 and 5)")
    m.add_argument("--index", help="index folder (default: the shared 10-K reference index)")
    m.add_argument("--json", metavar="OUT", help="write the full result as JSON")
    m.set_defaults(func=handler)

    fa = bs.add_parser("fit-answers", help="fit the answer selector's weights, calibration and threshold on "
                                           "development sets, leave-one-company-out beside in-sample (offline)")
    fa.add_argument("--questions", action="append", required=True,
                    help="a development question set (repeatable; never a sealed set): the Comprehensive .xlsx, "
                         "FinanceBench .jsonl, ppkit's dev set")
    fa.add_argument("--shelf-index", metavar="DIR",
                    help="the index of the FinanceBench filings: FinanceBench questions and a set's 'shelf' corpus "
                         "are asked of it")
    fa.add_argument("--k", type=int, default=5, help="cut-off (default 5, as ppkit ask)")
    fa.add_argument("--max-wrong", type=float, default=0.05,
                    help="the threshold keeps the share of wrong blocks at or under this (default 0.05)")
    fa.add_argument("--out", metavar="FILE", help="write the fitted selector (the package's: ppkit/answer/selector.json)")
    fa.add_argument("--json", metavar="OUT", help="write every question's verdicts, in-sample and out of sample")
    fa.set_defaults(func=handler)

    ab = bs.add_parser("abstain", help="abstention on answerable and unanswerable questions (offline)")
    ab.add_argument("--questions", help="a question set in the abstention format (default: ppkit's own set)")
    ab.add_argument("--k", type=int, default=5)
    ab.add_argument("--index", help="index folder (default: the shared 10-K reference index)")
    ab.add_argument("--json", metavar="OUT", help="write the full result as JSON")
    ab.set_defaults(func=handler)

    sv = bs.add_parser("serve", help="ppkit serve under load on loopback: answers/s, latency, first event, errors, "
                                     "memory, malformed requests, a soak")
    sv.add_argument("--index", help="index folder to serve (default: the shared 10-K reference index)")
    sv.add_argument("--clients", type=int, action="append", help="concurrent clients (repeatable; default 1 4 16 64)")
    sv.add_argument("--requests", type=int, default=200, help="requests per clients x route cell (default 200)")
    sv.add_argument("--cell-seconds", type=float, default=180.0, help="time limit of one cell (default 180)")
    sv.add_argument("--soak", type=float, default=600.0, metavar="SECONDS", help="soak length (default 600; 0: none)")
    sv.add_argument("--workers", type=int, default=2, help="server processes (default 2)")
    sv.add_argument("--reference", type=int, default=100, help="questions asked in-process for the reference rate")
    sv.add_argument("--json", metavar="OUT", help="write the full result as JSON")
    sv.add_argument("--faults", action="store_true", help="instead: uploads under faults (kill -9 during a job, two "
                                                          "at once, one under load) on a copy of the index")
    sv.add_argument("--target", metavar="PDF", help="with --faults: also time `ppkit index PDF` against its upload")
    sv.set_defaults(func=handler)

    s = bs.add_parser("scale", help="index time, memory, disk and query latency: 4 -> the real filings -> replicas")
    s.add_argument("--markdown-dir", help="the real filings as Markdown (default: the FinanceBench extraction "
                                          "cache when present, $PPKIT_FINANCEBENCH_MD)")
    s.add_argument("--no-filings", action="store_true", help="only the 4 reference 10-Ks")
    s.add_argument("--replicas", type=int, default=400, help="size of the replica point (0: none; default 400)")
    s.add_argument("--queries", type=int, default=60, help="questions asked per point (default 60)")
    s.add_argument("--budget-minutes", type=float, default=150.0, help="no task starts after this (default 150)")
    s.add_argument("--work", help="scratch folder for the indexes (default <cache>/bench/scale)")
    s.add_argument("--reuse-builds", action="store_true",
                   help="reuse a point's index and recorded build from an earlier run (same documents)")
    s.add_argument("--json", metavar="OUT", help="write the full result as JSON (default: figures/bench_scale.json)")
    s.add_argument("--figure", help="where to write the figure (default: figures/bench_scale.png)")
    s.set_defaults(func=handler)

    pe = bs.add_parser("peers", help="LangChain / LlamaIndex / small-to-big / fixed-size recipes and ragnav "
                                     "beside ppkit")
    pe.add_argument("--questions", action="append",
                    help="question file (repeatable; default: the Comprehensive and FinanceBench dev sets)")
    pe.add_argument("--index", help="index folder (default: the shared reference index of the 10-Ks)")
    pe.add_argument("--recipes", default=",".join(PEERS), help=f"comma-separated (default {','.join(PEERS)})")
    pe.add_argument("--json", metavar="OUT", help="write the full result as JSON (default: figures/bench_peers.json)")
    pe.add_argument("--figure", help="where to write the figure (default: figures/bench_peers.png)")
    pe.add_argument("--quiet", action="store_true", help="no progress bars")
    pe.set_defaults(func=handler)

    m = bs.add_parser("metadata", help="company, period and form read from each filing vs FinanceBench (names "
                                       "scrubbed); with --questions, the query analyzer's company and filing")
    m.add_argument("--documents", required=True, help="FinanceBench documents.jsonl")
    m.add_argument("--markdown-dir", required=True, help="folder of the extracted <doc_name>.md files")
    m.add_argument("--questions", help="FinanceBench questions.jsonl: also score the query analyzer")
    m.add_argument("--json", metavar="OUT", help="write the full result (every miss with its cause) as JSON")
    m.set_defaults(func=handler)

    ex = bs.add_parser("extraction", help="PDF extractors side by side on the reference PDFs: pages/s, CPU s, peak "
                                          "memory, and heading agreement with the reference Markdown")
    ex.add_argument("--backends", default="offline,layout",
                    help="comma-separated backends, measured one after the other (default offline,layout)")
    ex.add_argument("--workers", type=int, default=2, help="PDFs extracted at a time, one process each (default 2)")
    ex.add_argument("--out", help="folder for the Markdown (default <cache>/extract_bench)")
    ex.set_defaults(func=handler)

    sw = bs.add_parser("split-words", help="headings per filing and the split-word repair over `ppkit extract` output")
    sw.add_argument("folder", metavar="DIR", help="folder of NAME.md + NAME.pages.json")
    sw.set_defaults(func=handler)

    sr = bs.add_parser("stage2-rules", help="rules after stage 2 over every visible set, chosen leave-one-company-out "
                                            "(the record of rules tried and not kept)")
    sr.add_argument("--shelf", metavar="DIR", help="an index of the FinanceBench filings (ppkit index ... --index DIR)")
    sr.add_argument("--rules", default=",".join(RULES), help=f"rules to measure (default {','.join(RULES)})")
    sr.set_defaults(func=handler)

    st = bs.add_parser("statement-weight", help="the structural re-ranker's statement weight over every visible set, "
                                                "chosen leave-one-company-out")
    st.add_argument("--shelf", metavar="DIR", help="an index of the FinanceBench filings (ppkit index ... --index DIR)")
    st.add_argument("--grid", default="0.8,1.0,1.2,1.6", help="statement weights to try (default 0.8,1.0,1.2,1.6)")
    st.add_argument("--retrieval", action="append", choices=RETRIEVAL_MODES,
                    help="stage-1 recall (repeatable: chosen jointly with the weight; default the config's)")
    st.set_defaults(func=handler)


def _write_json(path, result) -> None:
    """``result`` as indented JSON at ``path`` (atomically; folders created), and say so on stderr."""
    atomic_write(Path(path), json.dumps(result, indent=1, ensure_ascii=False, default=str).encode("utf-8"))
    print(f"wrote {path}", file=sys.stderr)


def _metrics(args, config) -> int:
    questions = []
    for p in args.questions:
        fmt, qs = load_questions(Path(p))
        if fmt != "financebench":
            raise InvalidInput(f"{p}: `bench metrics` takes FinanceBench .jsonl question files, got {fmt}")
        questions += qs
    index = _open_index(args, "financebench", config)
    result = run_metric_bench(index, questions, ks=tuple(sorted(set(args.k or [3, 5]))))
    if args.json:
        _write_json(args.json, result)
    print(metric_markdown(result))
    return 0


def _fit_answers(args, config) -> int:
    """``ppkit bench fit-answers``: the selector fitted on development sets (see :mod:`ppkit.bench.fit.answers`)."""
    cfg = replace(config, online=False)
    tenk = reference_index("10k", config=cfg, progress=not getattr(args, "quiet", False))
    shelf = load_index(args.shelf_index, config=cfg) if args.shelf_index else None
    asked, names = [], []
    for p in args.questions:
        fmt, questions = load_questions(Path(p))
        names.append(Path(p).name)
        fb_shelf = fmt == "financebench" and not any(q.get("corpus") for q in questions) and \
            Path(p).resolve() == (financebench_dir() / "questions.jsonl").resolve()
        if fb_shelf and shelf is None:
            raise InvalidInput(f"{p} is asked of the FinanceBench filings: add --shelf-index DIR")
        corpora = {"10k": tenk, **({"shelf": shelf} if shelf is not None else {})}
        asked += ask_all(shelf if fb_shelf else tenk, questions, k=args.k,
                         corpora=corpora if any(q.get("corpus") for q in questions) else None,
                         progress=lambda a: print(".", end="", file=sys.stderr, flush=True))
    print(file=sys.stderr)
    data = read_all(asked)
    selector = fit(data, max_wrong=args.max_wrong)
    selector = replace(selector, note=f"fitted by `ppkit bench fit-answers` on {', '.join(names)} ({len(data)} "
                                      f"questions), k={args.k}, max wrong {args.max_wrong}")
    in_sample, out_of_sample = evaluate(data, selector), loco(data, max_wrong=args.max_wrong)
    print(fit_markdown(in_sample, out_of_sample, selector))
    if args.out:
        atomic_write(Path(args.out), (json.dumps(selector.to_dict(), indent=1) + "\n").encode("utf-8"))
        print(f"wrote {args.out}", file=sys.stderr)
    if args.json:
        _write_json(args.json, {"selector": selector.to_dict(), "in_sample": in_sample,
                                "out_of_sample": out_of_sample})
    return 0


def _abstain(args, config) -> int:
    questions = load_abstain_questions(args.questions) if args.questions else default_abstain_questions()
    index = _open_index(args, "financebench", config)
    result = run_abstain_bench(index, questions, k=args.k)
    if args.json:
        _write_json(args.json, result)
    print(abstain_markdown(result))
    return 0


def _serve(args, config) -> int:
    folder = args.index or str(reference_index("10k", config=config).folder)
    if args.faults:
        plan = FaultPlan(index=folder, pdfs=default_fault_pdfs(), target=args.target)
        result = run_fault_bench(plan, progress=lambda m: print(m, file=sys.stderr, flush=True))
        if args.json:
            _write_json(args.json, result)
        print(faults_markdown(result))
        return 0 if result["ok"] else 1
    plan = ServePlan(index=folder, clients=tuple(args.clients or (1, 4, 16, 64)), requests=args.requests,
                     cell_seconds=args.cell_seconds, soak=args.soak, workers=args.workers, reference=args.reference)
    result = run_serve_bench(plan, progress=lambda m: print(m, file=sys.stderr, flush=True))
    if args.json:
        _write_json(args.json, result)
    print(serve_markdown(result))
    return 0


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
    shelf = getattr(args, "shelf_index", None)
    if shelf:  # the FinanceBench questions are the shelf's: not asked of the reference index too
        fb = (financebench_dir() / "questions.jsonl").resolve()
        paths = [p for p in paths if p.resolve() != fb]
    options = {"section_slots": args.section_slots or 0}
    if args.retrieval:
        options["retrieval"] = args.retrieval[-1]
    result = loco_bench(load_sets(paths, config, progress=not args.quiet, shelf_index=shelf), options=options)
    if args.json:
        _write_json(args.json, result)
    print(loco_markdown(result))
    return 0


def _retrieval(args, config) -> int:
    if getattr(args, "cv", None):
        return _cross_validated(args, config)
    if getattr(args, "shelf_index", None):
        raise InvalidInput("--shelf-index pools a set into --cv loco: add --cv loco (or use --index DIR)")
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
    if getattr(args, "reranker", None):
        config = replace(config, reranker=args.reranker)
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
        which = tuple(b.strip() for b in args.baselines.split(",") if b.strip())
        if not which or set(which) - set(BASELINES):
            raise InvalidInput(f"--baselines {args.baselines!r}: choose from {', '.join(BASELINES)}")
        baselines, info = build_baselines(index, index.embedder, index=index, which=which, progress=not args.quiet)
        for name, i in info.items():
            how = ("lexical" if "cache" not in i else "vectors from the cache" if i["from_cache"] else
                   f"embedded {i['embedded']}, {i['reused_from_index']} reused from the index")
            print(f"  baseline {name}: {i['chunks']} chunks ({how})", file=sys.stderr)
    result = run_retrieval_bench(index, questions, g, benchmark=fmt, plan=BenchPlan(tuple(ks), modes),
                                 baselines=baselines, progress=not args.quiet)
    result = replace(result, questions_file=str(path), format=fmt,
                     transfer=transfer.to_dict() if transfer is not None else None)
    if args.json:  # written before anything is printed, so a printing failure loses nothing
        _write_json(args.json, result.to_dict())
    if not result.n:
        print(f"no question of {path} has gold sections in this index: nothing to score "
              f"({len(result.skipped)} skipped, see `skipped`{' in ' + args.json if args.json else ''})")
    else:
        print(markdown_table(result))
        if "auto" in result.modes:
            k = str(max(ks))
            misses = {c: q for c, q in miss_causes(result, g, k=k).items() if q}
            if misses:
                print(f"\nMisses at k={k} (own filter) by the first stage that lost them: "
                      + "; ".join(f"{c} {len(q)}" for c, q in misses.items()))
    if not args.no_figure and result.n:
        _save_figure(plot_retrieval, result,
                     Path(args.figure) if args.figure else figures_dir() / f"bench_retrieval_{path.stem}.png")
    return 0


def _answers_offline(args, config) -> int:
    path = Path(args.questions)
    fmt, questions = load_questions(path)
    if args.limit:
        questions = questions[: args.limit]
    cfg = replace(config, online=False)
    index = _open_index(args, fmt, cfg, _data_root_near(path))
    corpora = {"10k": index}
    if args.shelf_index:
        corpora["shelf"] = load_index(args.shelf_index, config=cfg)
    result = run_answer_judge(index, questions, ks=tuple(sorted(set(args.k or [3, 5]))),
                              stores=tuple(dict.fromkeys(args.store or ["shared"])), benchmark=path.stem,
                              corpora=corpora if any(q.get("corpus") for q in questions) else None)
    if result["sealed"]:  # read as aggregates only: no question, reference or block text printed or written
        result = sealed_view(result)
    if args.json:
        _write_json(args.json, result)
    print(judge_markdown(result))
    return 0


def _answers(args, config) -> int:
    if args.offline:
        return _answers_offline(args, config)
    if args.store or args.json or args.shelf_index:
        raise InvalidInput("--store, --json and --shelf-index are options of `ppkit bench answers --offline`: "
                           "add --offline")
    cfg = config
    if not cfg.online:
        raise NeedsKey("`ppkit bench answers` needs a Gemini key: set GEMINI_API_KEY (or GOOGLE_API_KEY) and unset "
                       "PPKIT_OFFLINE. Offline, use `ppkit bench retrieval` (it measures retrieval without an LLM).")
    path = Path(args.questions)
    fmt, questions = load_questions(path)
    if args.limit:
        questions = questions[: args.limit]
    index = _open_index(args, fmt, cfg, _data_root_near(path))
    out = run_answers_bench(index, questions, fmt=fmt, k=(args.k or [5])[-1], out_dir=args.out, tolerance=args.tolerance,
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
    if args.questions:  # the answer blocks of these questions, asked offline at each k, and off-question plants
        cases, planted, skipped = [], [], 0
        for p in args.questions:
            _, qs = load_questions(Path(p))
            for q in (q for q in qs if (q.get("answer") or "").strip()):
                if q.get("corpus") == "shelf" and not args.index:  # the FinanceBench shelf's: not in the 10-Ks
                    skipped += 1
                    continue
                for k in sorted(set(args.k or [3, 5])):
                    answer = index.ask(q["text"], k)
                    off = [{**x, "qid": q["qid"], "k": k} for x in off_question_blocks(q, answer, index, k)]
                    planted += off
                    case = block_case(q["text"], q["answer"], answer, qtype=q.get("question_type", ""),
                                      key_facts=q.get("key_facts") or (), off_question=off)
                    cases += [{**case, "qid": q["qid"], "k": k, "set": Path(p).name}] if case else []
        result["blocks"] = {**summarize_blocks(cases, planted), "cases": cases, "off_question_blocks": planted,
                            "skipped_shelf_questions": skipped}
    if args.json:
        _write_json(args.json, result)
    print(verify_markdown(result))
    if args.questions:
        print()
        print(blocks_markdown(result["blocks"]))
        if result["blocks"]["skipped_shelf_questions"]:
            print(f"\n{result['blocks']['skipped_shelf_questions']} questions of the FinanceBench shelf left out (not in "
                  "the 10-K reference index; --index a shelf index to ask them)")
    return 0


def _compare(args, config) -> int:
    comparison = data_dir() / "comparison"
    docs = [comparison / f"{d}.md" for d in ("Emerson", "TRoadhouse", "VectorFusion", "VectorPainter")]
    out = {}
    if not args.no_alignments or args.fit:
        out["alignments"] = run_alignment_bench(alignment_indexes(config))
        print(alignment_markdown(out["alignments"]))
        if args.fit:
            AlignWeights(**out["alignments"]["fitted"]).save(args.fit)
            print(f"fitted weights written to {args.fit}", file=sys.stderr)
    if not args.no_reports:
        out["markdown"] = run_compare_bench(cached_index(docs, "comparison", config=config), default_reports(), n=args.n)
        print(compare_markdown(out["markdown"]))
    if args.pdf:
        pdfs = cached_index([comparison / "Emerson.pdf", comparison / "TRoadhouse.pdf"], "comparison-pdf", config=config)
        reports = [r for r in default_reports() if "VF" not in r.name]  # the papers have no PDF here
        out["pdf"] = run_compare_bench(pdfs, reports, n=args.n)
        print(compare_markdown(out["pdf"], "the agreements' PDFs through `ppkit index` (offline extraction)"))
    if not args.no_whole:
        shelf = data_dir() / "financebench" / "pdfs"
        paths = [Path(p) for p in args.whole] if args.whole else [shelf / "CORNING_2021_10K.pdf",
                                                                 shelf / "CORNING_2022_10K.pdf"]
        out["whole"] = run_whole_bench(paths)
        print(whole_markdown(out["whole"]))
    if args.json:
        _write_json(args.json, out)
    return 0


def _scale(args, config) -> int:
    md = None if args.no_filings else (Path(args.markdown_dir) if args.markdown_dir else default_markdown_dir())
    if md is None and not args.no_filings:
        print("no Markdown filings found (--markdown-dir, $PPKIT_FINANCEBENCH_MD): measuring the 4 reference "
              "10-Ks only", file=sys.stderr)
    plan = ScalePlan(markdown_dir=md, replicas=args.replicas, queries=args.queries, budget_minutes=args.budget_minutes,
                     work=Path(args.work) if args.work else None, reuse_builds=args.reuse_builds)
    result = run_scale(plan, log=lambda m: print(m, file=sys.stderr, flush=True))
    _write_json(args.json or figures_dir() / "bench_scale.json", result)
    print(scale_markdown(result))
    _save_figure(plot_scale, result, Path(args.figure) if args.figure else figures_dir() / "bench_scale.png")
    return 0


def _peers(args, config) -> int:
    recipes = tuple(r.strip() for r in args.recipes.split(",") if r.strip())
    bad = [r for r in recipes if r not in PEERS]
    if bad:
        raise InvalidInput(f"unknown recipe(s) {bad}: use {', '.join(PEERS)}")
    files = [Path(q) for q in args.questions] if args.questions else \
        [data_dir() / "benchmarks" / "comprehensive_questions.xlsx", data_dir() / "benchmarks" / "financebench_dev.jsonl"]
    results = []
    for path in files:
        fmt, questions = load_questions(path)
        data_root = _data_root_near(path)
        index = _open_index(args, fmt, config, data_root)
        gold = load_gold(fmt, questions, path, index, args, data_root)
        res = run_peers(index, questions, gold, benchmark=path.stem, recipes=recipes, progress=not args.quiet)
        results.append({**res, "questions_file": str(path), "format": fmt})
        for mode in ("auto", "gold"):  # every peer with ppkit's filter, then with the question's filing
            print(peers_markdown(res, mode=mode))
            print()
    _write_json(args.json or figures_dir() / "bench_peers.json", {"benchmark": "peers", "sets": results})
    _save_figure(plot_peers, results, Path(args.figure) if args.figure else figures_dir() / "bench_peers.png")
    return 0


def _save_figure(plot, result, path: Path) -> None:
    try:
        import matplotlib
    except ImportError:
        print("figure skipped: it needs matplotlib (pip install 'ppkit[notebooks]')", file=sys.stderr)
        return
    matplotlib.use("Agg")
    _, fig = plot(result)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    print(f"wrote {path}", file=sys.stderr)


def _metadata(args) -> int:
    result = run_metadata_bench(args.documents, args.markdown_dir, questions=args.questions)
    if args.json:
        _write_json(args.json, result)
    print(metadata_markdown(result))
    return 0


def _extraction(args, config) -> int:
    out = Path(args.out) if args.out else default_extract_out()
    runs = [run_extractions(b, out / b, workers=args.workers) for b in args.backends.split(",") if b]
    print("\n".join(extraction_table(runs)))
    return 0


def _split_words(args, config) -> int:
    print("\n".join(split_words_report(args.folder)))
    return 0


def _stage2_rules(args, config) -> int:
    print("\n".join(stage2_rules(check_rules(args.rules), config, shelf=args.shelf)))
    return 0


def _statement_weight(args, config) -> int:
    print("\n".join(statement_weight(weight_grid(args.grid, args.retrieval, config), config, shelf=args.shelf)))
    return 0


def _nearest_existing(path: Path) -> Path:
    """``path`` or its closest ancestor that exists."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _check_output(path, option: str, *, folder: bool = False) -> None:
    """An InvalidInput, before a run starts, when ``path`` (``option``'s value: a file, or a ``folder``) cannot
    be written: a folder where a file goes (or a file where a folder goes), a file where a parent folder must be
    made, or a parent that is not writable. A benchmark then fails in its first second, not after its run."""
    path = Path(path)
    if path.exists() and path.is_dir() != folder:
        raise InvalidInput(f"{option} {path} is a {'file' if folder else 'folder'}: give a "
                           + ("folder" if folder else f"file name, e.g. {option} {path / 'result.json'}"))
    base = _nearest_existing(path if folder else path.parent)
    if not base.is_dir():
        raise InvalidInput(f"{option} {path} cannot be written: {base} is a file, not a folder; choose another path")
    if not os.access(base, os.W_OK | os.X_OK):
        raise InvalidInput(f"{option} {path} cannot be written: {base} is not writable; choose another path")


def run_bench(args, config=None) -> int:
    """Run the ``bench`` subcommand in ``args.bench_command`` with ``config`` (default
    :meth:`Config.from_env`); returns the exit status."""
    config = config or Config.from_env()
    cmd = args.bench_command
    commands = {"retrieval": _retrieval, "answers": _answers, "reproduce": _reproduce, "verify": _verify,
                "compare": _compare, "metrics": _metrics, "abstain": _abstain, "scale": _scale, "peers": _peers,
                "metadata": lambda a, _config: _metadata(a), "extraction": _extraction, "split-words": _split_words,
                "stage2-rules": _stage2_rules, "statement-weight": _statement_weight, "serve": _serve,
                "fit-answers": _fit_answers}
    if cmd not in commands:
        raise ValueError(f"unknown bench command {cmd!r}")
    for option in ("json", "figure"):
        if getattr(args, option, None):
            _check_output(getattr(args, option), f"--{option}")
    if cmd == "answers" and args.out:
        _check_output(args.out, "--out", folder=True)
    if cmd == "fit-answers" and args.out:
        _check_output(args.out, "--out")
    try:
        return commands[cmd](args, config)
    except NeedsKey as e:
        print(f"ppkit bench {cmd}: {e}", file=sys.stderr)
        return 2
