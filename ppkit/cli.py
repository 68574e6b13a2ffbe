"""The ``ppkit`` command: ``tree``, ``extract``, ``index``, ``ask``, ``remove``, ``serve``, ``compare`` and ``bench``.

    ppkit tree FILE.md [--json] [--check]
    ppkit extract PDF... --out DIR [--pages 1-20] [--backend auto|offline|layout|llamaparse] [--overwrite]
    ppkit index DOCS... [--index DIR] [--fresh] [--replace]
                        [--embedder local|local-fp32|local-bf16|local-int8|static|gemini|hash]
                        [--store faiss|qdrant|...] [--qdrant-url URL] [--extracted DIR] [--workers 2]   (DOCS: Markdown and PDFs)
                        [--company NAME --period FY2024 --form 10-K]   (what one document given is)
    ppkit ask "QUESTION" [--index DIR] [--k N] [--doc NAME] [--retrieval dense|bm25|hybrid] [--json] [--images] [--evidence all]
              [--deadline SECONDS] [--llm-timeout SECONDS]
              [--trust-index] [--qdrant-url URL]
    ppkit remove NAME... [--index DIR] [--qdrant-url URL]
    ppkit serve [--index DIR] [--host 127.0.0.1] [--port 8000] [--workers N]   (see ppkit.serve)
    ppkit compare A B [--criteria TEXT] [--index DIR] [--out FILE.md|.html] [--json] [--n 10]
    ppkit bench retrieval --questions FILE [--k 3 --k 5] [--json OUT]

Errors the user can fix (a missing file, a stale index, a missing key) are printed
as one message with what to do, and exit with status 2, without a traceback. A reader
that closes the pipe early (``| head -1``) ends the command quietly with status 141.
``ask`` prints a WARNING block under an answer whose online stages fell back to their
offline twins or whose citations or numbers failed verification.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace
from pathlib import Path

from .compare.report import to_markdown, write_report
from .core.config import RERANKERS, RETRIEVAL_MODES, Config
from .core.errors import InvalidInput, PpkitError
from .core.progress import progress_bar, quiet_mode
from .documents.extract import check_outputs, extract_pdf_guarded, no_text_warning, pages_without_text
from .documents.pdfcache import checked_page_count
from .documents.tree import build_tree, read_lines
from .documents.treecheck import check_tree, format_report
from .indexing import stores
from .indexing.embed import EMBEDDERS
from .indexing.index import default_index_dir
from .pipeline import build_index, compare, load_index, remove_documents
from .serve.cli import add_serve_parser

__all__ = ["main"]


def _cmd_tree(args, cfg) -> int:
    tree = build_tree(args.file, args.name)
    if args.json:
        print(json.dumps(tree.to_dict(), ensure_ascii=False, indent=1))
        return 0
    if getattr(args, "check", False):
        print(format_report(check_tree(tree, Path(args.file))))
        return 0
    print(f"{tree.doc}: {len(tree) - 1} headings, {tree.n_lines} lines, sha256 {tree.sha256[:12]}…")
    for n in tree.headings():
        imgs = f"  [{len(n.images)} images]" if n.images else ""
        print(f"{n.node_id}  {'  ' * (n.depth - 1)}{n.title}  (L{n.level}, lines {n.line_start}-{n.text_end}"
              f"/{n.subtree_end}){imgs}")
    return 0


def _cmd_extract(args, cfg) -> int:
    stems: dict[str, str] = {}  # casefolded output stem -> the PDF that takes it
    for pdf in args.pdfs:
        other = stems.setdefault(Path(pdf).stem.casefold(), pdf)
        if other != pdf:
            raise InvalidInput(f"{other} and {pdf} would both be extracted to {Path(pdf).stem}.md in {args.out}; "
                               "nothing was extracted: extract them in separate runs with different --out folders")
        check_outputs(Path(args.out), Path(pdf).stem, args.overwrite)  # the user's files are never replaced
    for pdf in args.pdfs:
        if Path(pdf).is_file():
            checked_page_count(pdf)  # an absurd page count is one line before any extraction
    for pdf in progress_bar(args.pdfs, desc="documents", disable=len(args.pdfs) < 2):
        ex = extract_pdf_guarded(pdf, args.out, pages=args.pages, backend=args.backend, progress=not args.quiet,
                                 overwrite=args.overwrite)  # in a process of its own, under the PDF caps
        pm = ex.page_map
        failed = f", {len(pm.failed_pages)} pages FAILED" if pm.failed_pages else ""
        print(f"{ex.pdf.name}: {len(pm.pages)} of {pm.page_count} pages, {ex.n_headings} headings, "
              f"{ex.n_lines} lines with {pm.backend} in {ex.seconds:.1f} s{failed} -> {ex.markdown_path} "
              f"(+ {ex.page_map_path.name})")
        blank = pages_without_text(pm.pages, read_lines(ex.markdown_path))
        if blank:  # written all the same: exit status 0
            print(f"ppkit extract: warning: {no_text_warning(ex.pdf.name, blank, pm.page_count)}", file=sys.stderr)
    return 0


def _connection(args) -> dict:
    """The vector store's connection options from the command line (``--qdrant-url``: the Qdrant store's ``url``)."""
    url = getattr(args, "qdrant_url", None)
    return {"url": url} if url else {}


def _cmd_index(args, cfg) -> int:
    if args.embedder:
        cfg = cfg.set(embedder=args.embedder)  # explicit: checked against an existing index
    folder = Path(args.index) if args.index else default_index_dir()
    said = {k: v for k, v in (("company", args.company), ("period", args.period), ("form", args.form)) if v is not None}
    if said and len(args.docs) != 1:
        raise InvalidInput("--company, --period and --form say what one document is: index that file alone "
                           f"(got {len(args.docs)} documents)")
    index = build_index(args.docs, folder, config=cfg, fresh=args.fresh, progress=not args.quiet,
                        described={Path(args.docs[0]).stem: said} if said else None,
                        store=getattr(args, "store", None), connection=_connection(args),
                        replace=getattr(args, "replace", False), extracted=getattr(args, "extracted", None),
                        workers=getattr(args, "workers", 2))
    b = index.manifest["build"]
    if "pdfs" in b:
        print(f"{b['pdfs']['summary']}; {b['pdfs']['words_joined']} letter-spaced words joined")
    print(f"indexed {len(index.trees)} documents, {len(index.chunks)} chunks "
          f"({b['chunks_embedded']} embedded, {b['chunks_reused']} reused) with {index.embedder.name} "
          f"in {b['seconds_total']:.1f} s -> {folder}")
    for doc, was in b.get("replaced", {}).items():
        print(f"  {doc}: replaced the document indexed from {was}")
    for warning in b.get("warnings", []):  # indexed all the same: exit status 0
        print(f"ppkit index: warning: {warning}", file=sys.stderr)
    for rec in index.manifest["documents"]:
        dropped = sum(1 for d in index.noise.get(rec["doc"], {}).values() if d.noise)
        pages = f", {rec['page_count']} PDF pages" if rec.get("page_count") else ""
        print(f"  {rec['doc']}: {len(index.trees[rec['doc']]) - 1} headings, {rec['n_chunks']} chunks, "
              f"{dropped} noise sections dropped{pages}")
    return 0


def _cmd_ask(args, cfg) -> int:
    if args.deadline is not None:
        cfg = replace(cfg, ask_deadline=args.deadline)
    if args.llm_timeout is not None:
        cfg = replace(cfg, llm_timeout=args.llm_timeout)
    if args.reranker:
        cfg = replace(cfg, reranker=args.reranker)
    index = load_index(args.index, config=cfg, trust=getattr(args, "trust_index", False),
                       connection=_connection(args))
    docs = [index.resolve_doc(d) for d in args.doc] if args.doc else None
    extra = {"retrieval": args.retrieval} if getattr(args, "retrieval", None) else {}
    answer = index.ask(args.question, args.k, docs=docs, evidence=args.evidence, **extra)
    if args.json:
        print(answer.to_json(indent=1))
        return 0
    print(answer)
    if args.images:  # the answer above lists the images by label; here the files to open
        print("\nImage files:" if answer.images else "\nImages: none chosen for this answer")
        for im in answer.images:
            print(f"  {im.get('resolved') or im['path']}")
    return 0


def _cmd_remove(args, cfg) -> int:
    folder = Path(args.index) if args.index else default_index_dir()
    index = remove_documents(folder, args.names, config=cfg, connection=_connection(args))
    b = index.manifest["build"]
    print(f"removed {', '.join(b['removed'])} ({b['chunks_removed']} chunks) from {folder}; "
          f"{len(index.trees)} documents, {len(index.chunks)} chunks left")
    return 0


def _cmd_compare(args, cfg) -> int:
    if not 1 <= args.n <= cfg.candidates:  # before any work: k of the retrieval that picks A's sections
        raise InvalidInput(f"--n {args.n}: give 1 to {cfg.candidates} sections of A to compare (default 10)")
    if args.out and Path(args.out).is_dir():
        raise InvalidInput(f"--out {args.out} is a folder: give a file, FILE.md or FILE.html")
    if args.out and Path(args.out).exists() and not args.overwrite:
        raise InvalidInput(f"--out {args.out} is already there; nothing was compared or written: give another file, "
                           "or --overwrite to replace it")
    shown = set()

    def on_phase(phase: str, done: int, total: int) -> None:  # one line per phase, on stderr
        if not args.quiet and phase not in shown:
            shown.add(phase)
            print(f"compare: {phase}" + (f" ({total} sections)" if total > 1 else ""), file=sys.stderr)

    index = args.index if args.index else None
    result = compare(args.a, args.b, args.criteria, index=index, n=args.n, config=cfg, on_phase=on_phase,
                     progress=not args.quiet)
    if args.out:
        path = write_report(result, args.out)
        print(f"{result!r} -> {path}", file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(result.to_json(indent=1))
    elif not args.out:
        print(to_markdown(result))
    return 0


def build_parser(bench: bool = True) -> argparse.ArgumentParser:
    """The ``ppkit`` parser; ``bench=False`` leaves out the ``bench`` subcommand (and does not load
    :mod:`ppkit.bench`)."""
    p = argparse.ArgumentParser(prog="ppkit", description="Proxy-Pointer RAG toolkit")
    sub = p.add_subparsers(dest="command", required=True)

    t = sub.add_parser("tree", help="show a Markdown file's skeleton tree")
    t.add_argument("file")
    t.add_argument("--name", help="document name for breadcrumbs (default: file stem)")
    t.add_argument("--json", action="store_true", help="print the tree as JSON")
    t.add_argument("--check", action="store_true", help="report what will hurt retrieval")
    t.set_defaults(func=_cmd_tree)

    x = sub.add_parser("extract", help="PDF -> Markdown plus a line -> page map")
    x.add_argument("pdfs", nargs="+", metavar="PDF")
    x.add_argument("--out", required=True, help="folder for NAME.md and NAME.pages.json")
    x.add_argument("--pages", help="1-based page range, e.g. 1-20 or 1-5,9 (default: all)")
    x.add_argument("--backend", choices=["auto", "offline", "layout", "llamaparse"], default="auto",
                   help="offline: the PDF's text layer (fast, no extra); layout: pymupdf4llm's layout model "
                        "(extra pdf, AGPL); auto: LlamaParse when LLAMA_CLOUD_API_KEY is set, else offline")
    x.add_argument("--overwrite", action="store_true",
                   help="replace NAME.md/NAME.pages.json in --out that ppkit did not write (default: refuse)")
    x.add_argument("--quiet", action="store_true", help="no progress bars")
    x.set_defaults(func=_cmd_extract)

    i = sub.add_parser("index", help="index Markdown documents and PDFs (incremental by content hash)")
    i.add_argument("docs", nargs="+")
    i.add_argument("--index", help="index folder (default: $PPKIT_INDEX or the cache)")
    i.add_argument("--fresh", action="store_true", help="rebuild from scratch")
    i.add_argument("--embedder", choices=list(EMBEDDERS),
                   help="default: local MiniLM (bf16 where the CPU has it natively; local-fp32: float32; "
                        "local-int8: int8 weights in ONNX Runtime, the int8 extra; static: word-piece vectors distilled from it)")
    i.add_argument("--quiet", action="store_true", help="no progress bars")
    i.add_argument("--store", choices=stores.names(),
                   help=f"vector store (default: what the index uses, else {stores.DEFAULT}; qdrant: a local collection "
                        "kept in the index folder)")
    i.add_argument("--qdrant-url", help="with --store qdrant: a Qdrant server instead of the local collection "
                                        "(default $QDRANT_URL; never the URL an index folder records)")
    i.add_argument("--replace", action="store_true",
                   help="let a document replace an indexed one of the same name from another file")
    i.add_argument("--extracted", metavar="DIR",
                   help="`ppkit extract` output of the PDFs given (NAME.md + NAME.pages.json), used instead of "
                        "extracting them again when the page map names the same PDF (sha256)")
    i.add_argument("--workers", type=int, default=2, help="processes extracting PDFs (default 2)")
    i.add_argument("--company", help="what the one document given is: its company (over what its cover says)")
    i.add_argument("--period", help="its fiscal year or quarter: FY2024, 2024, FY2024Q2 or Q2 2024")
    i.add_argument("--form", help="its form: 10-K, 10-Q, 8-K, 20-F, 40-F, 10-KT, 6-K or 'earnings release'")
    i.set_defaults(func=_cmd_index)

    a = sub.add_parser("ask", help="answer a question from the index")
    a.add_argument("question")
    a.add_argument("--index", help="index folder (default: $PPKIT_INDEX or the cache)")
    a.add_argument("--k", type=int, default=None, help="sections to use (default 5)")
    a.add_argument("--doc", action="append", help="restrict to a document (repeatable)")
    a.add_argument("--json", action="store_true", help="print the answer object as JSON")
    a.add_argument("--images", action="store_true", help="list the images chosen for the answer")
    a.add_argument("--evidence", choices=["support", "all"], default="support",
                   help="under the answer: the passages that support it (default) or the best of every section")
    a.add_argument("--retrieval", choices=RETRIEVAL_MODES, help="stage-1 recall (default dense)")
    a.add_argument("--reranker", choices=RERANKERS,
                   help="offline stage 2 (default structural, $PPKIT_RERANKER; fitted: measured better on a shelf "
                        "of filings, see the README)")
    a.add_argument("--deadline", type=float, metavar="SECONDS",
                   help="time for all Gemini calls of this question (default 120, $PPKIT_ASK_DEADLINE; 0: none); "
                        "past it the online stages left fall back to their offline twins")
    a.add_argument("--llm-timeout", type=float, metavar="SECONDS",
                   help="seconds per Gemini request (default 60, $PPKIT_LLM_TIMEOUT)")
    a.add_argument("--trust-index", action="store_true",
                   help="read the documents named by an index folder that ppkit on this account did not write")
    a.add_argument("--qdrant-url", help="the Qdrant server of an index kept on one (default $QDRANT_URL)")
    a.set_defaults(func=_cmd_ask)

    r = sub.add_parser("remove", help="remove documents from an index (chunks, vectors, BM25 terms, trees, records)",
                       description="Remove documents from an index, all or nothing: a crash leaves the old index "
                                   "or the new one. Exit status 0: removed; 2: nothing removed (an unknown name, "
                                   "no index there), the message says why.")
    r.add_argument("names", nargs="+", metavar="NAME", help="a document's name in the index (its file stem, as "
                                                             "`ppkit index` lists it)")
    r.add_argument("--index", help="index folder (default: $PPKIT_INDEX or the cache)")
    r.add_argument("--qdrant-url", help="the Qdrant server of an index kept on one (default $QDRANT_URL)")
    r.set_defaults(func=_cmd_remove)
    add_serve_parser(sub)  # `ppkit serve`: FastAPI is imported only when it runs
    c = sub.add_parser("compare", help="compare two documents section by section (report, JSON)")
    c.add_argument("a", help="document A: a name in the index, or a Markdown/PDF file")
    c.add_argument("b", help="document B: a name in the index, or a Markdown/PDF file (two files: a cached index)")
    c.add_argument("--criteria", help="what to compare (e.g. 'liens and guarantees'); default: whole documents")
    c.add_argument("--index", help="index folder holding A and B (default: $PPKIT_INDEX or the cache)")
    c.add_argument("--out", help="write the report to FILE.md or FILE.html (a file already there: with --overwrite)")
    c.add_argument("--overwrite", action="store_true", help="let --out replace a file that is already there")
    c.add_argument("--json", action="store_true", help="print the comparison as JSON")
    c.add_argument("--n", type=int, default=10, help="with --criteria: sections of A to compare (default 10)")
    c.add_argument("--quiet", action="store_true", help="no progress lines")
    c.set_defaults(func=_cmd_compare)

    if bench:
        from .bench.cli import add_bench_parser, run_bench  # here only: ask and index never load ppkit.bench

        add_bench_parser(sub, run_bench)
    return p


_NOT_BENCH = {"tree", "extract", "index", "ask", "remove", "serve", "compare"}  # commands parsed without loading ppkit.bench


def main(argv: list[str] | None = None) -> int:
    """Run the ``ppkit`` command; returns the exit status.

    An error the user can fix (a :class:`ppkit.core.errors.PpkitError`) prints one line saying
    what to do and returns 2; anything else is a bug and shows its traceback.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    # another command named first: parse without `bench`, so that ppkit.bench is not imported
    args = build_parser(bench=not argv or argv[0] not in _NOT_BENCH).parse_args(argv)
    try:
        with quiet_mode(bool(getattr(args, "quiet", False))):  # the libraries' bars too (model loading)
            status = int(args.func(args, Config.from_env()) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return status
    except BrokenPipeError:
        # the reader went away (`ppkit tree F --json | head -1`): stop quietly, as cat does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the interpreter's own flush at exit does not fail again
        return 141  # 128 + SIGPIPE
    except PpkitError as e:
        print(f"ppkit {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
