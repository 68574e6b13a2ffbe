"""Uploads as background jobs: a PDF or Markdown file added to the server's index while it keeps answering.

``POST /v1/documents`` hands :meth:`Jobs.submit` the uploaded bytes. Everything that can be checked before
work starts is checked there, and a refusal changes nothing:

* **size**: at most ``ServeSettings.max_upload`` bytes (the app's guard refuses a longer body before reading it);
* **type**: the extension (``.pdf``, ``.md``, ``.markdown``) and the content must agree: a PDF starts with
  ``%PDF-``, Markdown is UTF-8 text without NUL bytes;
* **name**: the document's name is the file name's stem reduced to letters and digits (of any script:
  ``報告.md`` is ``報告``), ``_``, ``-`` and ``.`` (at most 80 characters; never a path: ``../../etc/passwd.md``
  becomes ``etc_passwd``), or the form field ``name`` reduced the same way; a name already indexed, or being
  uploaded, is a 409.
* **space**: a disk too full to store the upload is a 507 (the job's folder is removed again).

The file is stored as ``<name><ext>`` inside a folder named by the job's random id, in ``.<index>.serve/``
beside the index folder (never inside it: an index folder holds only ppkit's own files). It stays there while
the document is indexed, since answers read the indexed Markdown's lines at answer time.

One worker thread runs the jobs in order (a second upload waits in the queue). A job's stages:
``queued`` -> ``extracting`` (a PDF: text layer to Markdown, into the extraction cache, under the PDF caps of
:mod:`ppkit.documents.pdfguard`) -> ``indexing`` (``ppkit index`` on the one file: under the index folder's
writers' lock; the write is atomic) -> ``loading`` (the new index loaded and warmed, then swapped into the engine
between two steps of the running answers: a question is answered from the old index or the new one, never a
mix) -> ``done`` (with ``warnings``, e.g. the pages of a scan without text); or ``failed`` with the reason, the
index as it was. Extracting and indexing run in a process of the job's own (:class:`ppkit.core.child.Child`,
which dies with the server): nothing an upload holds is parsed in the server's process, so no document can stall
its event loop or grow its memory. Pages done are counted when extraction ends; ``progress`` and
``eta_seconds`` are estimates from the pages (or bytes) and the rates of the jobs this server has run (at
first, :data:`RATES`).

Every job is a JSON file in ``.<index>.serve/jobs/``, rewritten atomically at each stage. A server that
starts finds the jobs a dead process left queued or running and marks them ``failed`` (interrupted), since
the index's own write is all-or-nothing; their files are deleted unless the document made it into the index.
Only an upload folder of its own is ever deleted: ``uploads/<the job's id>`` inside the jobs folder, by resolved
path. A job file that names any other file (edited by hand, or planted) is reported (``error.type``
``ForeignJobFile``, and the server's log) and nothing it names is touched.

:meth:`Jobs.remove` (``DELETE /v1/documents/{name}``) calls :func:`ppkit.pipeline.remove_documents` under the
same worker lock, then swaps the new index in the same way; :meth:`Jobs.describe` (``PATCH /v1/documents/{name}``)
likewise calls :func:`ppkit.pipeline.describe_documents` (the company, period and form a user says a document is;
nothing is embedded again). An upload may say them too (``said``), checked with the rest before any work.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import queue
import re
import secrets
import shutil
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..core.child import Child, tell
from ..core.config import Config
from ..core.errors import InvalidInput, NotFound, PpkitError
from ..core.io import atomic_write
from ..documents.described import described, guess_from_text
from ..documents.extract import get_extractor
from ..documents.pdfcache import checked_page_count, prepare_pdfs
from ..documents.pdfguard import check_inflated, read_guarded
from ..indexing.embed import get_embedder
from ..pipeline import build_index, describe_documents, load_index, remove_documents
from .engine import Engine

__all__ = ["Jobs", "Job", "UploadRefused", "safe_name", "jobs_folder", "RATES", "KINDS", "COVER_PAGES"]

log = logging.getLogger("ppkit.serve")

KINDS = {".pdf": "pdf", ".md": "markdown", ".markdown": "markdown"}  # extension -> kind
# first estimates, replaced by what this server measures: seconds per PDF page extracted (text layer), per PDF page
# indexed, per byte of Markdown indexed; measured on BOEING_2022_10K.pdf (190 pages, 526 kB of Markdown) uploaded
# on 2 busy cores (load average 12 to 18; docs/results/serve.md): extraction 47 s, indexing 622 s
RATES = {"extract_page": 0.25, "index_page": 3.3, "index_byte": 0.0012}
_ACTIVE = ("queued", "extracting", "indexing", "loading")
COVER_PAGES = 3  # PDF pages read to tell what a document is (its cover page and what follows it)
_JOB_ID = re.compile(r"^[0-9a-f]{16}$")
_NOT_NAME = re.compile(r"[^\w.-]+")  # \w: letters and digits of any script, and "_"
_FIELDS = {"id": str, "name": str, "kind": str, "file": str, "stage": str, "pid": int}  # a job file's must-haves


class UploadRefused(InvalidInput):
    """An upload refused before any work: ``status`` is its HTTP status (413 too large, 415 wrong type, 409 a
    name taken, 507 no space to store it, 503 it could not be stored, 400 otherwise)."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def safe_name(raw: str) -> str:
    """A document name from an uploaded file's name: its last path part's stem, every run of characters other
    than letters and digits (of any script), ``_``, ``-`` and ``.`` replaced by ``_``, no leading dots or
    underscores, at most 80.

    >>> safe_name("../../etc/Boeing 2022 10-K.pdf"), safe_name("年次報告.md")
    ('Boeing_2022_10-K', '年次報告')
    """
    base = re.split(r"[\\/]", raw)[-1]
    stem, dot, ext = base.rpartition(".")
    stem = stem if dot and ("." + ext.lower()) in KINDS else base
    name = _NOT_NAME.sub("_", stem).strip("._-")[:80].rstrip("._-")
    if not name:
        raise UploadRefused(f"the file name {raw[:100]!r} gives no document name: name the file with letters or "
                            "digits, or send the form field 'name'")
    return name


def jobs_folder(index_folder: Path) -> Path:
    """``.<index name>.serve`` beside the index folder: the jobs and the uploaded files."""
    index_folder = Path(index_folder)
    return index_folder.parent / f".{index_folder.name}.serve"


@dataclass
class Job:
    """One upload: what it is, where it stands, and how it ended."""

    id: str
    name: str  # the document's name in the index
    kind: str  # "pdf" | "markdown"
    bytes: int
    file: str  # the stored file, relative to the jobs folder
    stage: str = "queued"  # queued | extracting | indexing | loading | done | failed
    pages_total: int | None = None
    pages_done: int = 0
    created: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    stage_started: float | None = None
    estimate: float | None = None  # seconds the whole job is expected to take (from the rates)
    seconds: dict = field(default_factory=dict)  # stage -> seconds taken
    error: dict | None = None  # {"type", "message"} when failed
    pid: int = field(default_factory=os.getpid)
    warnings: list = field(default_factory=list)  # what the user should know of a job done (pages without text)
    said: dict = field(default_factory=dict)  # what the uploader says the document is: company, period, form

    def view(self, now: float | None = None) -> dict:
        """The job as the API shows it: the stored fields (without ``file``/``pid``), ``state``, ``progress``
        (0..1, an estimate while running) and ``eta_seconds``."""
        now = time.time() if now is None else now
        d = {k: v for k, v in asdict(self).items() if k not in ("file", "pid", "estimate", "stage_started")}
        d["state"] = self.stage if self.stage in ("done", "failed", "queued") else "running"
        if self.stage == "done":
            d["progress"], d["eta_seconds"] = 1.0, 0.0
        elif self.stage in ("failed", "queued") or not self.started or not self.estimate:
            d["progress"], d["eta_seconds"] = 0.0, (self.estimate if self.stage == "queued" else None)
        else:
            spent = now - self.started
            d["progress"] = round(min(0.99, spent / self.estimate), 3)
            d["eta_seconds"] = round(max(0.5, self.estimate - spent), 1)
        return d


def _check_content(kind: str, data: bytes) -> None:
    if kind == "pdf":
        if not data.startswith(b"%PDF-"):
            raise UploadRefused("the file is named .pdf but is not a PDF (it does not start with %PDF-): send the "
                                "PDF itself", 415)
        return
    if data.startswith(b"%PDF-"):
        raise UploadRefused("the file is a PDF named as Markdown: send it with the .pdf extension", 415)
    if b"\x00" in data:
        raise UploadRefused("the file is named as Markdown but holds binary data: send UTF-8 text", 415)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UploadRefused(f"the Markdown is not UTF-8 (byte {e.start}): save it as UTF-8 and send it again",
                            415) from None
    if not text.strip():
        raise UploadRefused("the Markdown file is empty: nothing to index")


class Jobs:
    """The upload jobs of one server process over ``engine``'s index folder; see the module docstring.

    Args:
        engine: the server's engine; its index must have a folder.
        max_upload: the largest upload in bytes.

    >>> jobs = Jobs(Engine(ppkit.load_index("/tmp/idx")))          # doctest: +SKIP
    >>> job = jobs.submit("AMD.md", open("AMD.md", "rb").read())   # doctest: +SKIP
    """

    def __init__(self, engine: Engine, *, max_upload: int = 64 * 1024 * 1024):
        if engine.index.folder is None:
            raise InvalidInput("uploads need an index saved in a folder")
        self.engine, self.max_upload = engine, max_upload
        self.folder = Path(engine.index.folder)
        self.root = jobs_folder(self.folder)
        (self.root / "jobs").mkdir(parents=True, exist_ok=True)
        self._guard = threading.Lock()  # the jobs dict and the rates
        self._write = threading.Lock()  # one writer of the index at a time: a job or a removal
        self._queue: queue.Queue[Job | None] = queue.Queue()
        self._jobs: dict[str, Job] = {}
        self._rates = dict(RATES)
        self._thread: threading.Thread | None = None
        self._child: Child | None = None  # the running job's process
        self._closing = False
        self._recover()

    def __repr__(self) -> str:
        return f"Jobs({len(self._jobs)} jobs, {self._queue.qsize()} queued)"

    # -- the job files ---------------------------------------------------------------------------------------
    def _save(self, job: Job) -> None:
        atomic_write(self.root / "jobs" / f"{job.id}.json", json.dumps(asdict(job), indent=1))

    def _read(self, path: Path) -> Job | None:
        try:
            job = Job(**json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            job = None
        if job is None or any(not isinstance(getattr(job, k), t) for k, t in _FIELDS.items()) \
                or not _JOB_ID.match(job.id) or path.stem != job.id:
            log.warning("unreadable job file %s: left as it is", path.name)
            return None
        return job

    def _upload_folder(self, job: Job) -> Path | None:
        """The job's own upload folder, ``uploads/<its id>`` inside the jobs folder (resolved), when its file is
        in it; else None: a job file naming anything else, which nothing may delete."""
        folder = (self.root / "uploads" / job.id).resolve()
        try:
            inside = (self.root / job.file).resolve().parent == folder
        except (OSError, ValueError):
            inside = False
        return folder if inside and folder.parent == (self.root / "uploads").resolve() else None

    def _delete_upload(self, job: Job) -> None:
        """Delete the job's own upload folder (:meth:`_upload_folder`); nothing else, ever."""
        folder = self._upload_folder(job)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    def _recover(self) -> None:
        """Mark the jobs a dead process left unfinished as failed; drop their upload folders unless indexed. A job
        file naming a file outside its own upload folder is reported and nothing it names is touched."""
        for path in sorted((self.root / "jobs").glob("*.json")):
            job = self._read(path)
            if job is None:
                continue
            if self._upload_folder(job) is None:
                log.warning("job file %s names %r, outside this server's upload folders: nothing was deleted",
                            path.name, job.file[:200])
                if job.stage != "failed" or (job.error or {}).get("type") != "ForeignJobFile":
                    job.stage, job.finished = "failed", time.time()
                    job.error = {"type": "ForeignJobFile", "message": "this job file names a file outside the "
                                 "server's upload folders (edited by hand?): it was ignored and nothing was deleted"}
                    self._save(job)
            elif job.stage in _ACTIVE and not _alive(job.pid):
                job.stage, job.finished = "failed", time.time()
                job.error = {"type": "Interrupted", "message": "the server stopped while this job ran; the index is "
                             "as it was before it: upload the file again"}
                if job.name in self.engine.index.docs and _source_in(self.engine, job.name, self.root / job.file):
                    job.stage, job.error = "done", None  # the index committed it before the server stopped
                else:
                    self._delete_upload(job)
                self._save(job)
            self._jobs[job.id] = job

    # -- the API ---------------------------------------------------------------------------------------------
    def _kind(self, filename: str, data: bytes) -> str:
        """``"pdf"`` or ``"markdown"`` for a file this server takes (size, extension and content agree), else an
        :class:`UploadRefused`."""
        if len(data) > self.max_upload:
            raise UploadRefused(f"the file is over this server's upload limit of {self.max_upload} bytes "
                                "(PPKIT_SERVE_MAX_UPLOAD)", 413)
        ext = "." + filename.rpartition(".")[2].lower() if "." in filename else ""
        kind = KINDS.get(ext)
        if kind is None:
            raise UploadRefused(f"only PDF (.pdf) and Markdown (.md, .markdown) files can be uploaded, not "
                                f"{ext or 'a file without an extension'}", 415)
        _check_content(kind, data)
        return kind

    def submit(self, filename: str, data: bytes, name: str | None = None, said: dict | None = None) -> Job:
        """Check an upload (size, type, name, and what ``said`` says it is: ``company``, ``period``, ``form``) and
        queue its job; an :class:`UploadRefused` changes nothing."""
        kind = self._kind(filename, data)
        name = safe_name(name if name else filename)
        said = {k: v for k, v in (said or {}).items() if v}  # a field left empty: read from the document
        try:
            described({}, name, **said)
        except InvalidInput as e:
            raise UploadRefused(str(e)) from None
        with self._guard:
            taken = {d.casefold() for d in self.engine.index.docs}
            busy = {j.name.casefold() for j in self._jobs.values() if j.stage in _ACTIVE}
            if name.casefold() in taken | busy:
                raise UploadRefused(f"a document named {name!r} is already {'indexed' if name.casefold() in taken else 'being uploaded'}: "
                                    f"remove it first (DELETE /v1/documents/{name}) or upload under another name", 409)
            job_id = secrets.token_hex(8)
            rel = f"uploads/{job_id}/{name}{'.pdf' if kind == 'pdf' else '.md'}"
            job = Job(id=job_id, name=name, kind=kind, bytes=len(data), file=rel, said=said)
            job.estimate = self._estimate(job)
            try:
                atomic_write(self.root / rel, data)
                self._save(job)
            except OSError as e:  # nothing of the upload is kept: its folder and job file go again
                self._delete_upload(job)
                (self.root / "jobs" / f"{job.id}.json").unlink(missing_ok=True)
                if e.errno in (errno.ENOSPC, errno.EDQUOT):
                    raise UploadRefused("the server has no space left to store the upload: nothing was kept; free "
                                        "some space on its disk and send the file again", 507) from None
                raise UploadRefused(f"the server cannot store the upload ({e.strerror or type(e).__name__}): nothing "
                                    "was kept; send the file again later", 503) from None
            self._jobs[job.id] = job
        self._queue.put(job)
        self._start()
        return job

    def cover(self, filename: str, data: bytes) -> dict:
        """What a file says it is before it is uploaded (``POST /v1/documents/cover``): ``{"company", "period",
        "form"}`` from its cover page (the first :data:`COVER_PAGES` pages of a PDF, the start of a Markdown file) and
        its name, to prefill the upload's fields; nothing is stored or indexed. Refused like an upload (type, size)."""
        kind = self._kind(filename, data)
        stem = safe_name(filename)
        if kind == "markdown":
            lines = data.decode("utf-8").split("\n")[:400]
        else:
            tmp = self.root / "uploads" / f"cover-{secrets.token_hex(8)}.pdf"
            try:
                atomic_write(tmp, data)
                # read like an upload: in a process of its own under the PDF caps (ppkit.documents.pdfguard)
                lines = read_guarded(tmp, _cover_lines, str(tmp))
            except PpkitError as e:  # the file named by its name, never by where it was stored (as a job's error)
                shown = Path(filename).name or "the file"
                raise UploadRefused(str(e).replace(str(tmp.resolve()), shown).replace(str(tmp), shown)) from None
            except OSError as e:
                raise UploadRefused(f"the server cannot store the file to read it ({e.strerror or type(e).__name__})"
                                    ": send it again later", 507 if e.errno in (errno.ENOSPC, errno.EDQUOT) else 503
                                    ) from None
            finally:
                tmp.unlink(missing_ok=True)
        return guess_from_text(lines, stem)

    def get(self, job_id: str) -> Job:
        """The job ``job_id`` (a NotFound when there is none)."""
        job = self._jobs.get(job_id) if _JOB_ID.match(job_id) else None
        if job is None and _JOB_ID.match(job_id):  # another server process's job
            job = self._read(self.root / "jobs" / f"{job_id}.json") if (self.root / "jobs" / f"{job_id}.json").is_file() else None
        if job is None:
            raise NotFound(f"no job {job_id[:40]!r} on this server: GET /v1/jobs lists them")
        return job

    def all(self) -> list[Job]:
        """Every job this server's folder knows, newest first."""
        seen = dict(self._jobs)
        for path in (self.root / "jobs").glob("*.json"):
            if path.stem not in seen and (job := self._read(path)) is not None:
                seen[job.id] = job
        return sorted(seen.values(), key=lambda j: -j.created)

    def busy(self) -> bool:
        """Whether a job is queued or running."""
        return any(j.stage in _ACTIVE for j in self._jobs.values())

    def remove(self, name: str) -> dict:
        """Remove the document ``name`` from the index (:func:`ppkit.pipeline.remove_documents`), swap the new
        index in, and delete its uploaded file; 409 (:class:`UploadRefused`) while a job writes the index."""
        if not self._write.acquire(blocking=False):
            raise UploadRefused("an upload is being indexed: remove the document when its job is done (GET /v1/jobs)",
                                409)
        try:
            old = self.engine.index
            doc = old.resolve_doc(name)
            new = remove_documents(self.folder, [doc], embedder=old.embedder, config=old.config,
                                   connection=old.store.connection)
            self.engine.adopt(new)
            for job in self._jobs.values():
                if job.name == doc and job.stage == "done":
                    self._delete_upload(job)
            return {"removed": doc, "documents": len(new.docs)}
        finally:
            self._write.release()

    def describe(self, name: str, said: dict) -> dict:
        """Say what the indexed document ``name`` is (``said``: ``company``, ``period``, ``form``; an empty string
        clears one) with :func:`ppkit.pipeline.describe_documents`, and swap the new index in; 409
        (:class:`UploadRefused`) while a job writes the index. Returns the document as ``GET /v1/documents`` lists it."""
        if not self._write.acquire(blocking=False):
            raise UploadRefused("an upload is being indexed: edit the document when its job is done (GET /v1/jobs)",
                                409)
        try:
            old = self.engine.index
            doc = old.resolve_doc(name)
            new = describe_documents(self.folder, {doc: said}, embedder=old.embedder, config=old.config,
                                     connection=old.store.connection)
            self.engine.adopt(new)
            return {"document": next(d for d in self.engine.documents() if d["name"] == doc)}
        finally:
            self._write.release()

    def close(self, timeout: float = 10) -> None:
        """Stop the worker: the running job's process is killed (the job fails, the index as it was) and queued
        jobs stay queued on disk (the next server fails them)."""
        self._closing = True
        if self._thread is not None:
            self._queue.put(None)
            if self._child is not None:
                self._child.kill()
            self._thread.join(timeout)

    # -- the worker ------------------------------------------------------------------------------------------
    def _start(self) -> None:
        with self._guard:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, name="ppkit-upload-jobs", daemon=True)
                self._thread.start()

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            with self._write:
                self._run(job)

    def _stage(self, job: Job, stage: str) -> None:
        now = time.time()
        if job.stage_started is not None and job.stage not in ("queued", "done", "failed"):
            job.seconds[job.stage] = round(now - job.stage_started, 2)
        job.stage, job.stage_started = stage, now
        if stage in ("done", "failed"):
            job.finished = now
        self._save(job)

    def _run(self, job: Job) -> None:
        job.started = time.time()
        child = None
        try:
            old = self.engine.index
            recipe = _embedder_recipe(old)
            child = self._child = Child(_index_upload, str(self.root / job.file), str(self.folder), job.name,
                                        job.kind, old.config, recipe, job.said, name=f"ppkit-job-{job.id}")
            warnings = self._follow(job, child)
            self._stage(job, "loading")
            new = load_index(self.folder, embedder=old.embedder, config=old.config, connection=old.store.connection)
            self.engine.adopt(new)
            job.warnings = list(warnings)
            self._stage(job, "done")
            self._learn(job)
        except Exception as e:  # noqa: BLE001 - a job reports every failure, a bug included
            stored = self.root / job.file  # the upload is named by its file's name, never by where it is stored
            job.error = self.engine.error_data(e, names={str(stored.resolve()): stored.name, str(stored): stored.name})
            job.error = {"type": job.error["error"], "message": job.error["message"]}
            if not isinstance(e, PpkitError):
                log.error("upload job %s failed", job.id, exc_info=e)
            self._stage(job, "failed")
            if job.name not in self.engine.index.docs:
                self._delete_upload(job)
        finally:
            if child is not None:
                child.kill()
            self._child = None

    def _follow(self, job: Job, child: Child) -> list[str]:
        """Follow the job's process to its end, each stage it reports saved; its warnings, or its error raised."""
        while True:
            for message in child.poll(0.2):
                if message[0] == "stage":
                    if message[1] == "indexing" and job.kind == "pdf":
                        job.pages_done = job.pages_total or 0
                    self._stage(job, message[1])
                elif message[0] == "pages":
                    job.pages_total = message[1]
                    job.estimate = self._estimate(job)
                    self._save(job)
                elif message[0] == "done":
                    return message[1]
                elif message[0] == "error":
                    raise message[1]
                elif message[0] == "died":
                    raise JobInterrupted("the server stopped while this job ran; the index is as it was before it: "
                                         "upload the file again" if self._closing else "the job's process ended "
                                         f"without an answer (exit status {message[1]}): the index is as it was")

    # -- estimates -------------------------------------------------------------------------------------------
    def _estimate(self, job: Job) -> float:
        r = self._rates
        if job.kind == "pdf":
            pages = job.pages_total or max(1, job.bytes // 20_000)  # a guess until the pages are counted
            return 1.0 + pages * (r["extract_page"] + r["index_page"])
        return 1.0 + job.bytes * r["index_byte"]

    def _learn(self, job: Job) -> None:
        """Move the rates halfway towards what this job took."""
        with self._guard:
            if job.kind == "pdf" and job.pages_total:
                if "extracting" in job.seconds:
                    self._rates["extract_page"] = (self._rates["extract_page"]
                                                   + job.seconds["extracting"] / job.pages_total) / 2
                self._rates["index_page"] = (self._rates["index_page"] + (
                    job.seconds.get("indexing", 0) + job.seconds.get("loading", 0)) / job.pages_total) / 2
            elif job.kind == "markdown":
                self._rates["index_byte"] = (self._rates["index_byte"] + (
                    job.seconds.get("indexing", 0) + job.seconds.get("loading", 0)) / max(1, job.bytes)) / 2


class JobInterrupted(PpkitError):
    """The job's process ended without an answer (killed, or the server stopping)."""


def _embedder_recipe(index) -> object:
    """How the job's process makes the index's embedder: ``(kind, kwargs)`` from the manifest, as loading an index
    does; the embedder object itself (pickled) when it is the caller's own (``kind`` ``"custom"``)."""
    spec = index.manifest.get("embedder", {})
    kind = spec.get("kind", str(spec.get("name", "")).split(":")[0].split("-")[0])
    return index.embedder if kind == "custom" else (kind, dict(spec.get("kwargs", {})))


def _index_upload(path: str, folder: str, name: str, kind: str, config: Config, recipe,
                  said: dict | None = None) -> list[str]:
    """In the job's own process: a PDF extracted (each PDF read under its caps), then the file indexed into the
    index ``folder`` as ``name`` (with what the uploader ``said`` it is); each stage told to the server. Returns the
    build's warnings."""
    if kind == "pdf":
        tell("stage", "extracting")
        tell("pages", checked_page_count(path))
        prepare_pdfs([path], workers=1, progress=False)
    tell("stage", "indexing")
    embedder = get_embedder(recipe[0], **recipe[1]) if isinstance(recipe, tuple) else recipe
    index = build_index([path], folder, embedder=embedder, config=config, names=[name], progress=False, workers=1,
                        described={name: said} if said else None)
    return list(index.manifest["build"].get("warnings", []))


def _cover_lines(pdf: str) -> list[str]:
    """In a process of its own (:func:`ppkit.documents.pdfguard.read_guarded`): the Markdown lines of the first
    :data:`COVER_PAGES` pages of ``pdf``, its decompressed bytes and page count checked first."""
    check_inflated(pdf)
    n = checked_page_count(pdf) or COVER_PAGES
    got = get_extractor("offline").extract_pages(Path(pdf), list(range(1, min(n, COVER_PAGES) + 1)), progress=False)
    return "".join(md for _, md in got.pages).split("\n")


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # this process has just started: a job file with its pid is from an earlier one
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _source_in(engine: Engine, doc: str, stored: Path) -> bool:
    """Whether the indexed ``doc`` was indexed from the uploaded file ``stored`` (or, for a PDF, its PDF)."""
    rec: dict = next((r for r in engine.index.manifest["documents"] if r["doc"] == doc), {})
    paths = {str(Path(p).resolve()) for p in (rec.get("source"), rec.get("pdf")) if p}
    return str(stored.resolve()) in paths
