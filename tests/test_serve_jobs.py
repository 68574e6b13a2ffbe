"""Uploads as background jobs, their status, and removal through ``ppkit serve`` (ppkit.serve.jobs,
ppkit.serve.documents), on a small hash-embedder index through FastAPI's TestClient: a Markdown upload indexed
and answerable, then removed; refusals before any work (type, size, a name with ``../``, a name taken); a job
that fails leaves the index as it was; a job a dead server left running is reported failed; the token rules;
the page's files served. The PDF path and the browser are in tests/browser/test_web_page.py."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("python_multipart")
from fastapi.testclient import TestClient  # noqa: E402

import ppkit  # noqa: E402
from ppkit.core.config import ServeSettings  # noqa: E402
from ppkit.serve.app import create_app  # noqa: E402
from ppkit.serve.engine import Engine  # noqa: E402
from ppkit.serve.jobs import Job, Jobs, jobs_folder, safe_name  # noqa: E402

FIX = Path(__file__).parent / "fixtures"
INITECH = (FIX / "initech.md").read_bytes()


@pytest.fixture
def index(tmp_path):
    """A fresh hash-embedder index over acme and globex (uploads change it)."""
    docs = []
    for name in ("acme.md", "globex.md"):
        (tmp_path / name).write_bytes((FIX / name).read_bytes())
        docs.append(tmp_path / name)
    return ppkit.build_index(docs, tmp_path / "index", embedder=ppkit.HashEmbedder(),
                             config=ppkit.Config(online=False), progress=False)


def _client(index, **settings) -> TestClient:
    return TestClient(create_app(Engine(index), ServeSettings(**settings)))


def _wait(client: TestClient, job_id: str, seconds: float = 60) -> dict:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        job = client.get(f"/v1/jobs/{job_id}").json()["job"]
        if job["state"] in ("done", "failed"):
            return job
        time.sleep(0.05)
    pytest.fail(f"job {job_id} did not end within {seconds} s")


def _names(client: TestClient) -> list[str]:
    return [d["name"] for d in client.get("/v1/documents").json()["documents"]]


def _uploads(index) -> list[str]:
    root = jobs_folder(index.folder) / "uploads"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_markdown_upload_is_indexed_answerable_and_removed(index):
    client = _client(index)
    before = client.post("/v1/ask", json={"question": "What was Initech's revenue in 2022?"}).json()
    r = client.post("/v1/documents", files={"file": ("initech.md", INITECH, "text/markdown")})
    assert r.status_code == 202
    job = r.json()["job"]
    assert r.headers["location"] == f"/v1/jobs/{job['id']}"
    assert (job["name"], job["kind"], job["bytes"]) == ("initech", "markdown", len(INITECH))
    done = _wait(client, job["id"])
    assert done["state"] == "done" and done["stage"] == "done" and done["error"] is None
    assert done["progress"] == 1.0 and set(done["seconds"]) == {"indexing", "loading"}
    assert _names(client) == ["acme", "globex", "initech"]
    after = client.post("/v1/ask", json={"question": "What was Initech's revenue in 2022?"}).json()
    assert "initech" not in {s["doc"] for s in before["sections"]}
    assert after["sections"][0]["doc"] == "initech"
    assert client.get(f"/v1/sections/initech/{after['sections'][0]['node_id']}").status_code == 200
    assert [j["id"] for j in client.get("/v1/jobs").json()["jobs"]] == [job["id"]]
    assert _uploads(index) == [f"{job['id']}/initech.md"]

    r = client.delete("/v1/documents/INITECH")  # case-insensitive, like `ppkit remove`
    assert r.status_code == 200 and r.json() == {"removed": "initech", "documents": 2}
    assert _names(client) == ["acme", "globex"] and _uploads(index) == []
    assert ppkit.load_index(index.folder).docs == ["acme", "globex"]
    r = client.delete("/v1/documents/initech")
    assert r.status_code == 404 and "acme, globex" in r.json()["error"]["message"]


@pytest.mark.parametrize(("filename", "data", "status", "says"), [
    ("report.exe", b"MZ\x90\x00", 415, "only PDF (.pdf) and Markdown"),
    ("report", b"# Title\n", 415, "without an extension"),
    ("report.pdf", b"# not a pdf\n", 415, "not a PDF"),
    ("report.md", b"%PDF-1.4\n", 415, "a PDF named as Markdown"),
    ("report.md", b"# a\x00b\n", 415, "binary data"),
    ("report.md", b"# caf\xe9\n", 415, "not UTF-8"),
    ("report.md", b"  \n\n", 400, "empty"),
    ("acme.md", b"# Another Acme\n\nText.\n", 409, "already indexed"),
    ("...md", b"# x\n", 400, "gives no document name"),
])
def test_refused_before_any_work(index, filename, data, status, says):
    client = _client(index)
    generation = json.loads((index.folder / "manifest.json").read_text())["generation"]
    r = client.post("/v1/documents", files={"file": (filename, data, "application/octet-stream")})
    assert r.status_code == status and says in r.json()["error"]["message"]
    assert r.json()["error"]["type"] == "UploadRefused"
    assert client.get("/v1/jobs").json() == {"jobs": []} and _uploads(index) == []
    assert json.loads((index.folder / "manifest.json").read_text())["generation"] == generation


def test_upload_size_limit_is_its_own(index):
    client = _client(index, max_upload=4096)
    r = client.post("/v1/documents", files={"file": ("big.md", b"# Big\n\n" + b"word " * 2000, "text/markdown")})
    assert r.status_code == 413 and "PPKIT_SERVE_MAX_UPLOAD" in r.json()["error"]["message"]
    assert _uploads(index) == []
    # the ordinary body limit (64 KiB) does not apply to uploads, and the upload limit not to questions
    ok = _client(index, max_upload=200_000).post(
        "/v1/documents", files={"file": ("big.md", b"# Big\n\nBig Corp sells things.\n" + b"word " * 20_000)})
    assert ok.status_code == 202


def test_uploaded_names_are_never_paths(index, tmp_path):
    client = _client(index)
    r = client.post("/v1/documents", files={"file": ("../../../outside/ev il;$(x).md", INITECH)})
    job = _wait(client, r.json()["job"]["id"])
    assert job["name"] == "ev_il_x" and job["state"] == "done"
    assert not (tmp_path.parent / "outside").exists()
    assert _uploads(index) == [f"{job['id']}/ev_il_x.md"]
    r = client.post("/v1/documents", files={"file": ("x.md", INITECH)}, data={"name": "../up/../../Initech Q3"})
    assert _wait(client, r.json()["job"]["id"])["name"] == "Initech_Q3"
    assert safe_name("C:\\Users\\me\\Boeing 2022 10-K.PDF") == "Boeing_2022_10-K"


def test_a_failed_job_says_why_and_leaves_the_index_as_it_was(index):
    client = _client(index)
    manifest = (index.folder / "manifest.json").read_bytes()
    question = {"question": "What were Globex's revenues in 2022?", "k": 3}
    before = client.post("/v1/ask", json=question).json()
    r = client.post("/v1/documents", files={"file": ("broken.pdf", b"%PDF-1.7\nnot really a pdf\n%%EOF\n")})
    assert r.status_code == 202
    job = _wait(client, r.json()["job"]["id"])
    assert job["state"] == "failed" and job["stage"] == "failed"
    assert job["error"]["type"] in ("InvalidInput", "ExtractionError") and job["error"]["message"]
    assert "/" not in job["error"]["message"].replace("<path>", "")  # no folder in the reason
    assert (index.folder / "manifest.json").read_bytes() == manifest
    assert _names(client) == ["acme", "globex"] and _uploads(index) == []
    after = client.post("/v1/ask", json=question).json()
    assert after["text"] == before["text"] and after["sections"] == before["sections"]


def test_a_job_left_running_by_a_dead_server_is_failed_on_start(index):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    root = jobs_folder(index.folder)
    (root / "uploads" / "0123456789abcdef").mkdir(parents=True)
    (root / "uploads" / "0123456789abcdef" / "gone.md").write_bytes(INITECH)
    (root / "jobs").mkdir(parents=True, exist_ok=True)
    job = Job(id="0123456789abcdef", name="gone", kind="markdown", bytes=len(INITECH),
              file="uploads/0123456789abcdef/gone.md", stage="indexing", started=time.time(), pid=dead.pid)
    (root / "jobs" / f"{job.id}.json").write_text(json.dumps(job.__dict__))
    jobs = Jobs(Engine(index))
    seen = jobs.get(job.id).view()
    assert seen["state"] == "failed" and seen["error"]["type"] == "Interrupted"
    assert "upload the file again" in seen["error"]["message"]
    assert _uploads(index) == [] and index.docs == ["acme", "globex"]


def test_removal_waits_for_no_job_and_the_token_rules(index):
    engine = Engine(index)
    client = TestClient(create_app(engine, ServeSettings(token="s3cret")))
    assert client.post("/v1/documents", files={"file": ("a.md", INITECH)}).status_code == 401
    assert client.get("/v1/jobs").status_code == 401 and client.delete("/v1/documents/acme").status_code == 401
    page = client.get("/")  # the page and its files hold no data: served without the token
    assert page.status_code == 200 and "<form id=\"ask-form\">" in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert client.get("/static/app.js").status_code == 200 and client.get("/static/app.css").status_code == 200
    auth = {"Authorization": "Bearer s3cret"}
    jobs = Jobs(engine)
    with jobs._write:  # a job is writing the index: removal is refused at once, not queued behind it
        with pytest.raises(Exception) as e:
            jobs.remove("acme")
    assert getattr(e.value, "status", None) == 409
    r = client.delete("/v1/documents/acme", headers=auth)
    assert r.status_code == 200 and r.json()["removed"] == "acme" and engine.index.docs == ["globex"]


def test_an_index_in_memory_answers_but_takes_no_uploads():
    docs = [FIX / "acme.md"]
    index = ppkit.build_index(docs, embedder=ppkit.HashEmbedder(), config=ppkit.Config(online=False), progress=False,
                              save=False)
    client = _client(index)
    assert client.post("/v1/ask", json={"question": "What was Acme's revenue?"}).status_code == 200
    for r in (client.post("/v1/documents", files={"file": ("a.md", INITECH)}), client.get("/v1/jobs"),
              client.get("/v1/jobs/0123456789abcdef"), client.delete("/v1/documents/acme")):
        assert r.status_code == 503 and "in memory" in r.json()["error"]["message"]
