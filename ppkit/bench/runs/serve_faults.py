"""``ppkit bench serve --faults``: uploads to ``ppkit serve`` under faults, on loopback, bounded.

The server is the real command (``ppkit serve --workers 1``, a child process on a free loopback port) over a
*copy* of the index given (the original is never written), with a fresh cache folder, so every PDF is
extracted for real. Runs, in order:

1. **kill -9 during an upload**, twice: once while the PDF is being extracted, once while it is being indexed
   (the job polled every 20 ms, the server killed the moment the stage shows). The server is started again on
   the same folder: the job must read ``failed``, the documents and the answers to five questions be those
   from before the upload (the offline answer is deterministic), and the same upload retried must end
   ``done`` and be answerable; it is then removed (``DELETE``) and the documents are those from before again.
2. **two uploads at once**: both accepted (202), both ``done``, both listed and answerable; then both removed.
3. **an upload while a load runs**: ``clients`` threads ask ``/v1/ask`` in a loop, first for ``baseline``
   seconds alone, then while an upload is extracted and indexed: the questions' latency (p50, p95, max) and
   errors in both phases, and the job's time.
4. optionally the **target**: ``ppkit index PDF`` into a copy of the index (fresh cache; the wall time of the
   command, and its extraction and embedding seconds from the manifest it writes) beside the same PDF uploaded
   to the server over another copy (fresh cache): seconds from the upload to the job ``done`` and to the first
   answer from it.

Every wait has a bound; nothing here imports ``ppkit.serve``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ...core.config import child_env
from ...core.data import financebench_dir
from ...core.errors import InvalidInput
from .serve import _free_port, wait_healthy

__all__ = ["FaultPlan", "run_fault_bench", "faults_markdown", "FAULT_QUESTIONS", "default_fault_pdfs"]

# questions whose answers must not change when an upload fails (the four 10-Ks)
# (written for this check; none repeats a visible benchmark question's wording, tests/test_question_wording.py)
FAULT_QUESTIONS = ("How large was Boeing's order backlog when 2022 closed?",
                   "How much inventory did AMD carry when 2022 closed?",
                   "How much did PepsiCo's snack division sell in 2022?",
                   "How many people worked for Amex at the close of 2022?",
                   "Which supply chain risks does AMD describe?")
_DEFAULT_PDFS = ("AMCOR_2023Q4_EARNINGS.pdf", "ULTABEAUTY_2023Q4_EARNINGS.pdf", "PEPSICO_2023_8K_dated-2023-05-05.pdf",
                 "FOOTLOCKER_2022_8K_dated_2022-08-19.pdf")


def default_fault_pdfs() -> tuple[str, ...]:
    """Four small FinanceBench PDFs (14, 9, 5 and 31 pages): the one killed, the two at once, the one under load."""
    folder = financebench_dir() / "pdfs"
    return tuple(str(folder / name) for name in _DEFAULT_PDFS)


@dataclass(frozen=True)
class FaultPlan:
    """What ``ppkit bench serve --faults`` runs (see the module docstring)."""

    index: str  # the index folder copied and served
    pdfs: tuple[str, ...]  # four PDFs: killed, two at once (2), under load
    clients: int = 4  # askers during the load run
    baseline: float = 20.0  # seconds of the load alone
    target: str | None = None  # a PDF for the target measure (None: skip)
    step_seconds: float = 900.0  # bound of one wait (a job, a start)


class _Server:
    """``ppkit serve`` as a child process on ``port``, its log in ``log``."""

    def __init__(self, index: Path, port: int, env: dict, log: Path):
        self.index, self.port, self.env, self.log = index, port, env, log
        self.url = f"http://127.0.0.1:{port}"
        self.proc: subprocess.Popen | None = None

    def start(self, bound: float) -> None:
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "ppkit.cli", "serve", "--index", str(self.index),
                                          "--port", str(self.port)], env=self.env, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        wait_healthy(self.proc, self.url, bound, lambda: self.log.read_text(errors="replace"))

    def kill9(self) -> None:
        """SIGKILL the server's process group (its extraction workers die with it)."""
        assert self.proc is not None, "kill9 before start"
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)


def _upload(http, pdf: str) -> dict:
    with open(pdf, "rb") as fh:
        r = http.post("/v1/documents", files={"file": (Path(pdf).name, fh, "application/pdf")})
    if r.status_code != 202:
        raise InvalidInput(f"upload of {Path(pdf).name} refused: {r.status_code} {r.text[:300]}")
    return r.json()["job"]


def _wait(http, job_id: str, bound: float, until=("done", "failed"), field: str = "state") -> dict:
    end = time.monotonic() + bound
    while time.monotonic() < end:
        job = http.get(f"/v1/jobs/{job_id}").json()["job"]
        if job[field] in until or job["state"] in ("done", "failed"):
            return job
        time.sleep(0.02)
    raise InvalidInput(f"job {job_id} did not reach {until} within {bound:g} s")


def _snapshot(http) -> dict:
    """The documents and the answers (text and sections) to :data:`FAULT_QUESTIONS`."""
    docs = [d["name"] for d in http.get("/v1/documents").json()["documents"]]
    answers = []
    for q in FAULT_QUESTIONS:
        body = http.post("/v1/ask", json={"question": q}).json()
        answers.append((body.get("text"), [(s["doc"], s["node_id"]) for s in body.get("sections", [])]))
    return {"docs": docs, "answers": answers}


def _answerable(http, name: str) -> bool:
    r = http.post("/v1/ask", json={"question": "What was the total revenue?", "docs": [name]})
    return r.status_code == 200 and any(s["doc"] == name for s in r.json()["sections"])


def _kill_run(server: _Server, http_factory, pdf: str, stage: str, before: dict, bound: float) -> dict:
    """Kill -9 the server when an upload of ``pdf`` reaches ``stage``; restart; check; retry; remove."""
    with http_factory() as http:
        job = _upload(http, pdf)
        seen = _wait(http, job["id"], bound, until=(stage,), field="stage")
        server.kill9()
    killed_at = seen["stage"]
    server.start(bound)
    with http_factory() as http:
        after = http.get(f"/v1/jobs/{job['id']}").json()["job"]
        now = _snapshot(http)
        t = time.monotonic()
        retry = _wait(http, _upload(http, pdf)["id"], bound)
        retry_s = time.monotonic() - t
        answerable = retry["state"] == "done" and _answerable(http, retry["name"])
        removed = http.delete(f"/v1/documents/{retry['name']}").status_code
        docs_after = [d["name"] for d in http.get("/v1/documents").json()["documents"]]
    return {"fault": f"kill -9 while {stage}", "killed_at": killed_at, "job_after_restart": after["state"],
            "reason": (after.get("error") or {}).get("type"), "documents_same": now["docs"] == before["docs"],
            "answers_same": now["answers"] == before["answers"], "retry": retry["state"],
            "retry_seconds": round(retry_s, 1), "retry_answerable": answerable, "removed_status": removed,
            "documents_restored": docs_after == before["docs"],
            "ok": (after["state"] == "failed" and now == before and retry["state"] == "done" and answerable
                   and removed == 200 and docs_after == before["docs"])}


def _two_at_once(http, pdfs: list[str], before: dict, bound: float) -> dict:
    jobs = [_upload(http, p) for p in pdfs]
    ends = [_wait(http, j["id"], bound) for j in jobs]
    docs = [d["name"] for d in http.get("/v1/documents").json()["documents"]]
    names = [j["name"] for j in ends]
    answerable = [_answerable(http, n) for n in names]
    removed = [http.delete(f"/v1/documents/{n}").status_code for n in names]
    docs_after = [d["name"] for d in http.get("/v1/documents").json()["documents"]]
    ok = (all(j["state"] == "done" for j in ends) and all(n in docs for n in names) and all(answerable)
          and removed == [200, 200] and docs_after == before["docs"])
    return {"fault": "two uploads at once", "states": [j["state"] for j in ends],
            "seconds": [round(j["finished"] - j["created"], 1) for j in ends], "both_listed": all(n in docs for n in names),
            "answerable": answerable, "removed_status": removed, "documents_restored": docs_after == before["docs"],
            "ok": ok}


def _asking(url: str, clients: int, stop: threading.Event, out: list) -> list[threading.Thread]:
    import httpx

    def client(i: int):
        with httpx.Client(base_url=url, timeout=120) as http:
            n = i
            while not stop.is_set():
                t = time.perf_counter()
                try:
                    r = http.post("/v1/ask", json={"question": FAULT_QUESTIONS[n % len(FAULT_QUESTIONS)]})
                    out.append((time.perf_counter() - t, None if r.status_code == 200 else str(r.status_code)))
                except httpx.HTTPError as e:
                    out.append((time.perf_counter() - t, type(e).__name__))
                n += 1

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    for th in threads:
        th.start()
    return threads


def _latency(rows: list) -> dict:
    ok = sorted(s for s, e in rows if e is None)
    pct = (lambda q: round(ok[min(len(ok) - 1, int(q * len(ok)))], 3)) if ok else (lambda q: None)
    return {"questions": len(rows), "errors": sum(1 for _, e in rows if e is not None), "p50": pct(0.5),
            "p95": pct(0.95), "max": round(ok[-1], 3) if ok else None,
            "mean": round(statistics.fmean(ok), 3) if ok else None}


def _under_load(server: _Server, http, pdf: str, clients: int, baseline: float, bound: float) -> dict:
    phases = {}
    for phase in ("alone", "during upload"):
        rows: list = []
        stop = threading.Event()
        threads = _asking(server.url, clients, stop, rows)
        t = time.monotonic()
        if phase == "alone":
            time.sleep(baseline)
        else:
            job = _wait(http, _upload(http, pdf)["id"], bound)
        stop.set()
        for th in threads:
            th.join(130)
        phases[phase] = {**_latency(rows), "seconds": round(time.monotonic() - t, 1)}
    answerable = job["state"] == "done" and _answerable(http, job["name"])
    removed = http.delete(f"/v1/documents/{job['name']}").status_code
    ok = job["state"] == "done" and answerable and removed == 200 and phases["during upload"]["errors"] == 0
    return {"fault": f"an upload while {clients} clients ask", "job": job["state"], "pages": job["pages_total"],
            "job_seconds": job["seconds"], "alone": phases["alone"], "during": phases["during upload"],
            "answerable": answerable, "removed_status": removed, "ok": ok}


def _target(pdf: str, index: Path, work: Path, bound: float, progress) -> dict:
    """``ppkit index PDF`` into a copy of ``index`` (fresh cache) beside the upload of the same PDF into another
    copy (fresh cache): wall times, and the command's extraction and embedding seconds from its manifest."""
    import httpx

    progress(f"target: ppkit index {Path(pdf).name} into a copy of the index")
    env = child_env(PPKIT_QUIET="1", PPKIT_CACHE_DIR=str(work / "cache-cli"))
    shutil.copytree(index, work / "cli-index")
    t = time.monotonic()
    subprocess.run([sys.executable, "-m", "ppkit.cli", "index", pdf, "--index", str(work / "cli-index")], env=env,
                   check=True, timeout=bound, stdout=subprocess.DEVNULL)
    cli_s = time.monotonic() - t
    build = json.loads((work / "cli-index" / "manifest.json").read_text(encoding="utf-8"))["build"]
    extract_s, embed_s = build["pdfs"]["seconds_extract"], build["seconds_embed"] + build["seconds_embed_paths"]
    progress(f"target: the same PDF uploaded ({cli_s:.1f} s for ppkit index)")
    served = work / "target-index"
    shutil.copytree(index, served)
    server = _Server(served, _free_port(), child_env(PPKIT_QUIET="1", PPKIT_CACHE_DIR=str(work / "cache-serve")),
                     work / "target-serve.log")
    server.start(bound)
    try:
        with httpx.Client(base_url=server.url, timeout=120) as http:
            t = time.monotonic()
            job = _wait(http, _upload(http, pdf)["id"], bound)
            done_s = time.monotonic() - t
            answerable = _answerable(http, job["name"])
            answered_s = time.monotonic() - t
    finally:
        server.stop()
    upload_build = json.loads((served / "manifest.json").read_text(encoding="utf-8"))["build"]
    return {"pdf": Path(pdf).name, "pages": job["pages_total"], "ppkit_index_seconds": round(cli_s, 1),
            "ppkit_index_extract_seconds": extract_s, "ppkit_index_embed_seconds": round(embed_s, 1),
            "ppkit_index_build_seconds": build["seconds_total"],
            "upload_done_seconds": round(done_s, 1), "upload_answered_seconds": round(answered_s, 1),
            "job_seconds": job["seconds"], "upload_embed_seconds": round(
                upload_build["seconds_embed"] + upload_build["seconds_embed_paths"], 1),
            "upload_build_seconds": upload_build["seconds_total"], "answerable": answerable,
            "within_target": answerable and answered_s <= extract_s + embed_s + 5,
            "within_command_wall": answerable and answered_s <= cli_s + 5}


def run_fault_bench(plan: FaultPlan, *, progress=print) -> dict:
    """Run ``plan`` (see the module docstring) and return every run as plain data."""
    import httpx

    if len(plan.pdfs) != 4:
        raise InvalidInput("--faults needs four PDFs: the one killed, two uploaded at once, one under load")
    for p in (*plan.pdfs, *([plan.target] if plan.target else [])):
        if not Path(p).is_file():
            raise InvalidInput(f"no such PDF: {p}")
    result: dict = {"plan": asdict(plan), "cpus": os.cpu_count(), "load_average": list(os.getloadavg()), "runs": []}
    with tempfile.TemporaryDirectory(prefix="ppkit-faults-") as tmp:
        work = Path(tmp)
        served = work / "index"
        shutil.copytree(plan.index, served)
        env = child_env(PPKIT_QUIET="1", PPKIT_CACHE_DIR=str(work / "cache"))
        server = _Server(served, _free_port(), env, work / "serve.log")
        client = lambda: httpx.Client(base_url=server.url, timeout=120)  # noqa: E731
        progress("starting ppkit serve on a copy of the index")
        server.start(plan.step_seconds)
        try:
            with client() as http:
                before = _snapshot(http)
            result["documents"] = before["docs"]
            for stage in ("extracting", "indexing"):
                progress(f"kill -9 while {stage}")
                result["runs"].append(_kill_run(server, client, plan.pdfs[0], stage, before, plan.step_seconds))
                progress(f"  ok: {result['runs'][-1]['ok']}")
            with client() as http:
                progress("two uploads at once")
                result["runs"].append(_two_at_once(http, list(plan.pdfs[1:3]), before, plan.step_seconds))
                progress(f"  ok: {result['runs'][-1]['ok']}")
                progress(f"an upload while {plan.clients} clients ask")
                result["runs"].append(_under_load(server, http, plan.pdfs[3], plan.clients, plan.baseline,
                                                  plan.step_seconds))
                progress(f"  ok: {result['runs'][-1]['ok']}")
                result["final_same"] = _snapshot(http) == before
        finally:
            server.stop()
        if plan.target:
            result["target"] = _target(plan.target, Path(plan.index), work, plan.step_seconds, progress)
    result["ok"] = all(r["ok"] for r in result["runs"]) and result["final_same"]
    return result


def faults_markdown(result: dict) -> str:
    """The fault runs (and the target) as Markdown."""
    lines = [f"Index served: a copy of {len(result['documents'])} documents ({', '.join(result['documents'])}); "
             f"{result['cpus']} CPUs, load average at the start "
             f"{', '.join(f'{x:.1f}' for x in result['load_average'])}.", "",
             "| fault | what happened | nothing lost, index answering |", "| --- | --- | --- |"]
    for r in result["runs"]:
        if r["fault"].startswith("kill"):
            what = (f"killed at stage `{r['killed_at']}`; after restart the job reads `{r['job_after_restart']}` "
                    f"({r['reason']}); documents same: {r['documents_same']}, answers to 5 questions same: "
                    f"{r['answers_same']}; retried upload `{r['retry']}` in {r['retry_seconds']} s, answerable: "
                    f"{r['retry_answerable']}; removed ({r['removed_status']}), documents as before: "
                    f"{r['documents_restored']}")
        elif r["fault"].startswith("two"):
            what = (f"both accepted; jobs {r['states']} in {r['seconds']} s (queued one after the other); both "
                    f"listed: {r['both_listed']}; answerable: {r['answerable']}; removed {r['removed_status']}")
        else:
            a, d = r["alone"], r["during"]
            what = (f"upload of {r['pages']} pages `{r['job']}` (stages {r['job_seconds']}); questions alone: "
                    f"{a['questions']} in {a['seconds']} s, p50 {a['p50']} s, p95 {a['p95']} s, max {a['max']} s, "
                    f"{a['errors']} errors; during the upload: {d['questions']} in {d['seconds']} s, p50 {d['p50']} s, "
                    f"p95 {d['p95']} s, max {d['max']} s, {d['errors']} errors")
        lines.append(f"| {r['fault']} | {what} | {'yes' if r['ok'] else '**no**'} |")
    lines.append(f"\nAfter every run, the documents and the answers to the 5 questions are those from before: "
                 f"{result['final_same']}.")
    if "target" in result:
        t = result["target"]
        lines.append(f"\nTarget ({t['pdf']}, {t['pages']} pages), each into a copy of the index, fresh caches: "
                     f"`ppkit index` took {t['ppkit_index_seconds']} s in all, of which extraction "
                     f"{t['ppkit_index_extract_seconds']} s and embedding {t['ppkit_index_embed_seconds']} s (its build "
                     f"{t['ppkit_index_build_seconds']} s); the upload: job done after {t['upload_done_seconds']} s, "
                     f"first answer from it after {t['upload_answered_seconds']} s (stages {t['job_seconds']}; "
                     f"embedding {t['upload_embed_seconds']} s, build {t['upload_build_seconds']} s). Within extraction "
                     f"+ embedding + 5 s: {t['within_target']}; within the command's wall time + 5 s: "
                     f"{t['within_command_wall']}.")
    return "\n".join(lines)
