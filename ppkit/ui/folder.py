"""Your own documents in one call: a folder of PDFs and Markdown files, indexed once and cached.

:func:`index_folder` finds the documents (``*.pdf``, ``*.md``; sub-folders too), says what the first run will
cost before it starts (PDFs are extracted, every chunk is embedded) and builds the index with progress bars
through :func:`ppkit.cached_index`, so a second run, in this notebook or another, loads it in seconds. With
no folder it opens the four reference 10-Ks, the same cached index as ``ppkit.reference_index("10k")``.

The cost per document is a rough guide measured on a 2-core machine (the reference 10-K index: four
filings, about 2,500 chunks, in 35 s idle and about 1.5 minutes under load; the offline PDF extractor reads
about 13 pages a second); it is printed as a range, not promised.
"""

from __future__ import annotations

from pathlib import Path

from ..core import data
from ..core.errors import InvalidInput, NotFound
from ..pipeline import Index, cached_index

__all__ = ["find_documents", "index_folder"]

_SUFFIXES = (".pdf", ".md", ".markdown")


def find_documents(folder: Path | str) -> list[Path]:
    """The PDFs and Markdown files under ``folder`` and its sub-folders, sorted; hidden files and folders are
    skipped."""
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise NotFound(f"{folder} is not a folder: give the folder that holds your PDFs or Markdown files")
    return sorted(p for p in folder.rglob("*") if p.suffix.lower() in _SUFFIXES and p.is_file()
                  and not any(part.startswith(".") for part in p.relative_to(folder).parts))


def _estimate(paths: list[Path]) -> str:
    """A rough first-run cost: about 10-25 s per Markdown filing and 1-3 s per PDF page on 2 cores."""
    pages = 0
    for p in paths:
        if p.suffix.lower() == ".pdf":
            try:
                import pypdfium2

                pages += len(pypdfium2.PdfDocument(str(p)))
            except Exception:  # a page count is only for the estimate: the build reports a bad PDF itself
                pages += 20
    markdown = len(paths) - sum(p.suffix.lower() == ".pdf" for p in paths)
    low, high = 10 * markdown + 0.5 * pages, 25 * markdown + 2 * pages
    return f"about {max(1, round(low / 60))}-{max(1, round(high / 60))} minutes"


def index_folder(folder: Path | str | None = None, name: str | None = None, *, progress: bool = True) -> Index:
    """Index the PDFs and Markdown files of ``folder`` (default: the reference 10-Ks), once; later calls load it.

    Args:
        folder: a folder of your documents; ``None``: the four reference 10-Ks (``PPKIT_DATA_DIR`` or
            ``../shared/data``), whose index the other notebooks share.
        name: the cache entry's name (default: the folder's name; ``"10k"`` for the reference filings).
        progress: progress bars for extraction and embedding.

    Returns:
        the :class:`ppkit.Index`, ready for ``index.ask(question)`` or :class:`ppkit.ui.cited_answer.CitedAnswer`.

    >>> index = index_folder("~/papers")  # doctest: +SKIP
    """
    if folder is None:
        paths, name = data.tenk_paths(), name or "10k"
        where = f"the reference 10-Ks in {data.data_dir() / '10k'}"
    else:
        paths = find_documents(folder)
        name = name or Path(folder).expanduser().resolve().name or "documents"
        where = str(Path(folder).expanduser())
        if not paths:
            raise InvalidInput(f"no PDF or Markdown file under {where}: put your .pdf or .md files there, "
                               "or pass another folder")
    print(f"{len(paths)} document{'s' if len(paths) != 1 else ''} from {where}. The first run indexes them "
          f"({_estimate(paths)} on 2 cores; PDFs are extracted, every chunk embedded); it is cached, so later "
          "runs load it in seconds.", flush=True)
    index = cached_index(paths, name, progress=progress)
    print(f"ready: {index}")
    return index
