"""The routes that change the server's documents: uploads as jobs, the jobs' status, removal.

* ``POST /v1/documents`` - a multipart upload (field ``file``: a PDF or Markdown; optional fields ``name`` and
  what the document is: ``company``, ``period``, ``form``, over what its cover says): 202 and the job
  (``{"job": {...}}``, its ``id`` to poll); 413 too large, 415 not a PDF or Markdown, 409 a name already indexed
  or being uploaded, 400 otherwise (a period or form that cannot be read included);
* ``POST /v1/documents/cover`` - a file's company, period and form as its cover page and name give them
  (``{"cover": {...}}``), nothing stored: what the web page prefills the upload's fields with;
* ``PATCH /v1/documents/{name}`` - JSON ``{"company", "period", "form"}`` (any of them): what an indexed document
  is, set in place; the index's metadata and filters follow, nothing is embedded again (``{"document": {...}}``);
* ``GET /v1/jobs/{id}`` - one job: ``stage``, ``state``, ``pages_done``/``pages_total``, ``progress``,
  ``eta_seconds``, ``error``; ``GET /v1/jobs`` - every job, newest first;
* ``DELETE /v1/documents/{name}`` - the document removed from the index (:meth:`ppkit.serve.jobs.Jobs.remove`).

The work is :mod:`ppkit.serve.jobs`; this module only maps it to HTTP. The token and the upload size limit
are checked by the app's guard before a body is read. An index that is only in memory, or whose folder's
parent cannot be written, still answers questions: these routes then answer 503 saying why.
"""

from __future__ import annotations

import anyio
from fastapi import FastAPI, File, Form, Path, UploadFile
from fastapi.responses import JSONResponse

from .engine import Engine, error_body
from .jobs import Jobs, UploadRefused, jobs_folder
from .models import DescribeRequest

__all__ = ["add_document_routes"]


def _refused(e: UploadRefused) -> JSONResponse:
    return JSONResponse(error_body("UploadRefused", str(e)), status_code=e.status)


def _open_jobs(engine: Engine, max_upload: int) -> Jobs | str:
    """The jobs of ``engine``'s index folder, or why there can be none."""
    if engine.index.folder is None:
        return "this server's index is in memory: there is no folder to add documents to"
    try:
        return Jobs(engine, max_upload=max_upload)
    except OSError as e:
        where = jobs_folder(engine.index.folder).name
        return (f"this server cannot write beside its index folder ({where}: {e.strerror or type(e).__name__}): serve "
                "an index in a folder you can write to add or remove documents")


def add_document_routes(app: FastAPI, engine: Engine, *, max_upload: int) -> None:
    """Add the upload, job and removal routes over ``engine``'s index folder to ``app``."""
    jobs = _open_jobs(engine, max_upload)
    if isinstance(jobs, str):
        reason = jobs

        @app.api_route("/v1/documents", methods=["POST"], include_in_schema=False)
        @app.api_route("/v1/documents/cover", methods=["POST"], include_in_schema=False)
        @app.api_route("/v1/documents/{name}", methods=["DELETE", "PATCH"], include_in_schema=False)
        @app.get("/v1/jobs", include_in_schema=False)
        @app.get("/v1/jobs/{job_id}", include_in_schema=False)
        async def unavailable():
            return JSONResponse(error_body("UploadsUnavailable", reason), status_code=503)

        return

    @app.post("/v1/documents", status_code=202)
    async def upload(file: UploadFile = File(description="a PDF (.pdf) or Markdown (.md, .markdown) file"),
                     name: str | None = Form(None, max_length=200, description="the document's name (default: the "
                                                                               "file name's stem)"),
                     company: str | None = Form(None, max_length=200, description="the document's company"),
                     period: str | None = Form(None, max_length=20, description="FY2024, 2024, FY2024Q2 or Q2 2024"),
                     form: str | None = Form(None, max_length=40, description="10-K, 10-Q, 8-K, ... or earnings "
                                                                             "release")):
        """Add a document: checked at once (size, type, name, company/period/form), then extracted and indexed by
        a background job while questions are answered from the index as it was; poll ``GET /v1/jobs/{id}``."""
        data = await file.read(jobs.max_upload + 1)
        said = {"company": company, "period": period, "form": form}
        try:
            job = await anyio.to_thread.run_sync(lambda: jobs.submit(file.filename or "", data, name, said))
        except UploadRefused as e:
            return _refused(e)
        return JSONResponse({"job": job.view()}, status_code=202, headers={"Location": f"/v1/jobs/{job.id}"})

    @app.post("/v1/documents/cover")
    async def cover(file: UploadFile = File(description="a PDF (.pdf) or Markdown (.md, .markdown) file")):
        """What a file says it is (company, period, form from its cover page and name), before it is uploaded;
        nothing is stored."""
        data = await file.read(jobs.max_upload + 1)
        try:
            return {"cover": await anyio.to_thread.run_sync(lambda: jobs.cover(file.filename or "", data))}
        except UploadRefused as e:
            return _refused(e)

    @app.patch("/v1/documents/{name}")
    async def describe(req: DescribeRequest, name: str = Path(min_length=1, max_length=200)):
        """Say what an indexed document is (company, period, form): its metadata and the filters follow at once,
        nothing is embedded again. 409 while an upload is being indexed."""
        said = req.model_dump(exclude_none=True)
        if not said:
            return JSONResponse(error_body("InvalidRequest", "send at least one of company, period, form"),
                                status_code=400)
        try:
            return await anyio.to_thread.run_sync(jobs.describe, name, said)
        except UploadRefused as e:
            return _refused(e)

    @app.get("/v1/jobs")
    async def list_jobs():
        """Every upload job, newest first."""
        return {"jobs": [j.view() for j in jobs.all()]}

    @app.get("/v1/jobs/{job_id}")
    async def get_job(job_id: str = Path(max_length=40)):
        """One upload job: stage, pages done of total, progress, ETA, error."""
        return {"job": jobs.get(job_id).view()}

    @app.delete("/v1/documents/{name}")
    async def delete(name: str = Path(min_length=1, max_length=200)):
        """Remove a document from the index (its chunks, vectors, BM25 terms, tree, manifest entry), atomically;
        the uploaded file goes too. 409 while an upload is being indexed."""
        try:
            return await anyio.to_thread.run_sync(jobs.remove, name)
        except UploadRefused as e:
            return _refused(e)
