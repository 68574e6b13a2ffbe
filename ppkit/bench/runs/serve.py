"""``ppkit bench serve``: ``ppkit serve`` under load on loopback, beside the in-process rate.

One run, bounded in count and time:

1. the **reference**: ``Index.ask`` over the questions in this process, pinned to one core, asked twice (answers/s
   of the second pass, as warm as the server after its first cell; the first pass is kept as ``cold_*``);
2. ``ppkit serve --workers W`` started as a child process on a free loopback port, then for each number of
   concurrent clients C (1, 4, 16, 64) and each route (``/v1/ask``, ``/v1/ask/stream``): ``requests``
   questions asked by C asyncio clients (httpx), each cell cut at ``cell_seconds``: answers/s, latency
   p50/p95/p99, time to the first SSE event, errors (a status other than 200, an ``error`` event, a stream
   without ``done``), the server's peak memory (its processes' RSS summed, sampled every 0.25 s);
3. **malformed requests** (bad JSON, a huge body, wrong types, unknown fields, a stream opened and dropped):
   the status each got, and the server still answering afterwards;
4. a **soak**: 16 clients for ``soak`` seconds, both routes in turn; the server's RSS after the first tenth of
   the soak and at its end (growth in percent).

The questions are the Comprehensive set's and FinanceBench's (dev and the visible sample), distinct, cycled
when a cell asks more than there are. Nothing here imports ``ppkit.serve``: the server is the real command.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass

from ...core.config import child_env
from ...core.data import benchmark_path, financebench_dir
from ...core.errors import InvalidInput, MissingDependency
from ...pipeline import load_index
from ..data.loaders import load_questions

__all__ = ["ServePlan", "serve_questions", "run_serve_bench", "serve_markdown"]


@dataclass(frozen=True)
class ServePlan:
    """What ``ppkit bench serve`` runs (see the module docstring)."""

    index: str  # the index folder served
    clients: tuple[int, ...] = (1, 4, 16, 64)
    requests: int = 200  # per (clients, route) cell; at least the distinct questions when there are fewer
    cell_seconds: float = 180.0  # a cell stops asking after this
    soak: float = 600.0  # seconds of the soak (0: none)
    workers: int = 2
    reference: int = 100  # questions asked in-process for the reference rate
    startup_seconds: float = 600.0  # the server must answer /healthz within this


def serve_questions() -> list[str]:
    """The distinct questions of the Comprehensive set, FinanceBench dev and FinanceBench's visible sample."""
    paths = [benchmark_path("comprehensive_questions.xlsx"), benchmark_path("financebench_dev.jsonl"),
             financebench_dir() / "questions.jsonl"]
    return list(dict.fromkeys(row["text"] for p in paths for row in load_questions(p)[1]))


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    v = sorted(values)
    return round(v[min(len(v) - 1, int(q * len(v)))], 4)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _psutil():
    try:
        import psutil
    except ImportError:
        raise MissingDependency("ppkit bench serve measures memory with psutil: pip install 'ppkit[serve]'") from None
    return psutil


class _Memory:
    """The RSS of a process and its children, sampled in a thread: peak and the samples (seconds, MB)."""

    def __init__(self, pid: int, every: float = 0.25):
        self.proc = _psutil().Process(pid)
        self.every, self.samples, self.peak = every, [], 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def now(self) -> float:
        psutil = _psutil()
        total = 0
        for p in [self.proc, *self.proc.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total / 2**20

    def _run(self):
        start = time.monotonic()
        while not self._stop.wait(self.every):
            try:
                mb = self.now()
            except _psutil().Error:
                return
            self.samples.append((time.monotonic() - start, mb))
            self.peak = max(self.peak, mb)

    def reset_peak(self) -> None:
        self.peak = self.now()

    def cpu(self) -> dict[int, float]:
        """CPU seconds (user + system) used so far by each process of the server, by pid."""
        psutil = _psutil()
        out = {}
        for p in [self.proc, *self.proc.children(recursive=True)]:
            try:
                t = p.cpu_times()
                out[p.pid] = t.user + t.system
            except psutil.Error:
                pass
        return out

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2)


def wait_healthy(proc: subprocess.Popen, url: str, bound: float, output) -> None:
    """Wait until the ``ppkit serve`` process ``proc`` answers ``url``'s ``/healthz``, at most ``bound`` seconds;
    ``output()`` gives its log when it exits first (the last 2,000 characters are in the error)."""
    import httpx

    end = time.monotonic() + bound
    while True:
        if proc.poll() is not None:
            raise InvalidInput(f"ppkit serve exited with {proc.returncode}: {output()[-2000:]}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > end:
            raise InvalidInput(f"ppkit serve did not answer /healthz within {bound:g} s")
        time.sleep(0.3)


@contextmanager
def _server(index: str, workers: int, startup: float):
    """``ppkit serve`` on a free loopback port: yields (base URL, its memory sampler)."""
    port = _free_port()
    cmd = [sys.executable, "-m", "ppkit.cli", "serve", "--index", index, "--port", str(port),
           "--workers", str(workers)]
    proc = subprocess.Popen(cmd, env=child_env(PPKIT_QUIET="1"), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(proc, url, startup, lambda: proc.stderr.read().decode(errors="replace"))
        memory = _Memory(proc.pid)
        try:
            yield url, memory
        finally:
            memory.stop()
    finally:
        try:
            children = _psutil().Process(proc.pid).children(recursive=True)
        except _psutil().Error:
            children = []
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for child in children:  # worker processes left behind by a supervisor that was killed
            try:
                child.kill()
            except _psutil().Error:
                pass


async def _one(http, route: str, question: str) -> tuple[float, float | None, str | None]:
    """One request: (seconds, seconds to the first SSE event or None, error or None)."""
    t0 = time.perf_counter()
    if route == "/v1/ask":
        r = await http.post(route, json={"question": question})
        if r.status_code != 200:
            return time.perf_counter() - t0, None, f"{r.status_code}: {r.text[:200]}"
        return time.perf_counter() - t0, None, None if "text" in r.json() else "no answer text"
    first, last, error = None, None, None
    async with http.stream("POST", route, json={"question": question}) as r:
        if r.status_code != 200:
            await r.aread()
            return time.perf_counter() - t0, None, f"{r.status_code}: {r.text[:200]}"
        async for line in r.aiter_lines():
            if line.startswith("event: "):
                first = first if first is not None else time.perf_counter() - t0
                last = line[7:]
                if last == "error":
                    error = "error event"
    if error is None and last != "done":
        error = f"stream ended with {last!r}"
    return time.perf_counter() - t0, first, error


async def _load(url: str, routes: list[str], questions: list[str], clients: int, n: int | None,
                seconds: float) -> dict:
    """``clients`` concurrent clients asking until ``n`` requests (None: no count) or ``seconds`` have passed;
    the routes taken in turn."""
    import httpx

    results: list[tuple[float, float | None, str | None]] = []
    counter = iter(range(10**9))
    stop_at = time.monotonic() + seconds
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(120.0), limits=limits) as http:

        async def client():
            while time.monotonic() < stop_at:
                i = next(counter)
                if n is not None and i >= n:
                    return
                try:
                    results.append(await _one(http, routes[i % len(routes)], questions[i % len(questions)]))
                except httpx.HTTPError as e:
                    results.append((0.0, None, f"{type(e).__name__}: {e}"))

        t0 = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        wall = time.perf_counter() - t0
    lat = [r[0] for r in results if r[2] is None]
    first = [r[1] for r in results if r[1] is not None]
    errors = [r[2] for r in results if r[2] is not None]
    return {"requests": len(results), "errors": len(errors), "error_examples": errors[:3], "seconds": round(wall, 2),
            "answers_per_s": round(len(lat) / wall, 3) if wall else None,
            "p50": _pct(lat, 0.50), "p95": _pct(lat, 0.95), "p99": _pct(lat, 0.99),
            "first_event_p50": _pct(first, 0.50), "first_event_p95": _pct(first, 0.95)}


def _cpu_use(before: dict[int, float], after: dict[int, float], cell: dict) -> dict:
    """The server's CPU seconds over a cell, per answer, and each process's share of them, largest first (how
    evenly the requests spread over the worker processes; the supervisor's share is near 0)."""
    used = {pid: after[pid] - before.get(pid, 0.0) for pid in after}
    total = sum(used.values())
    answers = cell["requests"] - cell["errors"]
    return {"cpu_s": round(total, 2), "cpu_s_per_answer": round(total / answers, 4) if answers else None,
            "worker_cpu_shares": [round(u / total, 2) for u in sorted(used.values(), reverse=True) if u / total >= 0.01]
            if total else []}


def _reference(index_folder: str, questions: list[str], n: int) -> dict:
    """``Index.ask`` over ``n`` questions in this process on one core (after one warm-up question), twice: the
    first pass meets each question as new (``cold_*``); the second, the rate reported, asks them again, as the
    server's cells do after the first (a question's vector and its sections' passages and rows are kept per
    process, never an answer), so the ratio compares like with like."""
    index = load_index(index_folder)
    before = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    if before:
        os.sched_setaffinity(0, {min(before)})
    try:
        index.ask(questions[0])
        qs = [questions[i % len(questions)] for i in range(n)]
        passes = []
        for _ in range(2):
            t0, c0 = time.perf_counter(), time.process_time()
            for q in qs:
                index.ask(q)
            passes.append((time.perf_counter() - t0, time.process_time() - c0))
    finally:
        if before:
            os.sched_setaffinity(0, before)
    (cold_wall, cold_cpu), (wall, cpu) = passes
    return {"questions": n, "seconds": round(wall, 2), "answers_per_s": round(n / wall, 3),
            "cpu_s_per_answer": round(cpu / n, 4), "cold_answers_per_s": round(n / cold_wall, 3),
            "cold_cpu_s_per_answer": round(cold_cpu / n, 4)}


def _malformed(url: str) -> list[dict]:
    """Bad requests and the status each got (expected in brackets), then whether the server still answers."""
    import httpx

    q = "What was AMD's revenue in FY2022?"
    cases = [("bad JSON", "/v1/ask", b"{not json", 400),
             ("huge body (2 MB)", "/v1/ask", json.dumps({"question": "x" * 2_000_000}).encode(), 413),
             ("wrong type (k as text)", "/v1/ask", json.dumps({"question": q, "k": "5"}).encode(), 422),
             ("unknown field", "/v1/ask", json.dumps({"question": q, "top_k": 5}).encode(), 422),
             ("empty question", "/v1/ask/stream", json.dumps({"question": "  "}).encode(), 400),
             ("chat without a user message last", "/v1/chat/completions",
              json.dumps({"messages": [{"role": "assistant", "content": "hi"}]}).encode(), 400)]
    out = []
    with httpx.Client(base_url=url, timeout=60) as http:
        for name, route, body, expected in cases:
            r = http.post(route, content=body, headers={"content-type": "application/json"})
            out.append({"case": name, "status": r.status_code, "expected": expected,
                        "ok": r.status_code == expected and "Traceback" not in r.text})
        with http.stream("POST", "/v1/ask/stream", json={"question": q}) as r:
            for line in r.iter_lines():
                if line.startswith("event: "):
                    break  # dropped after the first event
        health = http.get("/healthz").status_code
        after = http.post("/v1/ask", json={"question": q}).status_code
    out.append({"case": "stream opened and dropped, then /healthz and an ask", "status": [health, after],
                "expected": [200, 200], "ok": [health, after] == [200, 200]})
    return out


def run_serve_bench(plan: ServePlan, questions: list[str] | None = None, *, progress=print) -> dict:
    """Run ``plan`` (see the module docstring) and return every measure as plain data."""
    questions = questions or serve_questions()
    n = max(plan.requests, 1)
    result: dict = {"plan": asdict(plan), "questions": len(questions), "cpus": os.cpu_count(),
                    "load_average": list(os.getloadavg())}
    progress(f"reference: Index.ask x {plan.reference} on one core")
    result["reference"] = _reference(plan.index, questions, plan.reference)
    cells = []
    with _server(plan.index, plan.workers, plan.startup_seconds) as (url, memory):
        result["server_rss_mb_idle"] = round(memory.now(), 1)
        for clients in plan.clients:
            for route in ("/v1/ask", "/v1/ask/stream"):
                memory.reset_peak()
                cpu0 = memory.cpu()
                cell = asyncio.run(_load(url, [route], questions, clients, n, plan.cell_seconds))
                cell.update(clients=clients, route=route, peak_rss_mb=round(memory.peak, 1), **_cpu_use(
                    cpu0, memory.cpu(), cell))
                progress(f"C={clients} {route}: {cell['answers_per_s']}/s p95 {cell['p95']} s "
                         f"first event p50 {cell['first_event_p50']} s, {cell['cpu_s_per_answer']} CPU s an answer, "
                         f"worker shares {cell['worker_cpu_shares']}, errors {cell['errors']}")
                cells.append(cell)
        result["cells"] = cells
        result["malformed"] = _malformed(url)
        if plan.soak > 0:
            progress(f"soak: 16 clients for {plan.soak:g} s")
            early: dict = {}

            def mark():
                time.sleep(plan.soak / 10)
                early["mb"] = memory.now()

            marker = threading.Thread(target=mark, daemon=True)
            marker.start()
            memory.reset_peak()
            cpu0 = memory.cpu()
            soak = asyncio.run(_load(url, ["/v1/ask", "/v1/ask/stream"], questions, 16, None, plan.soak))
            marker.join()
            end = memory.now()
            soak.update(**_cpu_use(cpu0, memory.cpu(), soak))
            soak.update(rss_mb_at_tenth=round(early["mb"], 1), rss_mb_end=round(end, 1), peak_rss_mb=round(memory.peak, 1),
                        growth_pct=round(100 * (end - early["mb"]) / early["mb"], 2))
            result["soak"] = soak
    result["requests_total"] = sum(c["requests"] for c in cells) + result.get("soak", {}).get("requests", 0)
    result["errors_total"] = sum(c["errors"] for c in cells) + result.get("soak", {}).get("errors", 0)
    return result


def serve_markdown(result: dict) -> str:
    """The run as Markdown tables."""
    ref = result["reference"]["answers_per_s"]
    ref_cpu = result["reference"].get("cpu_s_per_answer")
    cold = result["reference"].get("cold_answers_per_s")
    lines = [f"In-process `Index.ask` on one core: **{ref} answers/s** ({result['reference']['questions']} questions"
             + (f", {ref_cpu} CPU s an answer" if ref_cpu is not None else "")
             + (f"; asked again, as the server's cells after the first ask them; the first time {cold} answers/s, "
                f"{result['reference'].get('cold_cpu_s_per_answer')} CPU s an answer" if cold is not None else "") + "). "
             f"Server: {result['plan']['workers']} worker processes, {result['questions']} distinct questions, "
             f"{result['cpus']} CPUs, load average at the start {', '.join(f'{x:.1f}' for x in result['load_average'])}.",
             "", "| clients | route | requests | answers/s | × in-process | × in-process, first time | p50 s | p95 s | p99 s | first event p50 s "
             "| errors | peak RSS MB | server CPU s an answer | worker CPU shares |",
             "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for c in result["cells"]:
        ratio = f"{c['answers_per_s'] / ref:.2f}" if c["answers_per_s"] and ref else "-"
        ratio_cold = f"{c['answers_per_s'] / cold:.2f}" if c["answers_per_s"] and cold else "-"
        lines.append(f"| {c['clients']} | `{c['route']}` | {c['requests']} | {c['answers_per_s']} | {ratio} | {ratio_cold} | {c['p50']} "
                     f"| {c['p95']} | {c['p99']} | {c['first_event_p50'] if c['first_event_p50'] is not None else '-'} "
                     f"| {c['errors']} | {c['peak_rss_mb']} | {c.get('cpu_s_per_answer', '-')} "
                     f"| {' / '.join(str(x) for x in c.get('worker_cpu_shares', []))} |")
    lines += ["", "| malformed request | status | expected | ok |", "| --- | --- | --- | --- |"]
    lines += [f"| {m['case']} | {m['status']} | {m['expected']} | {'yes' if m['ok'] else 'NO'} |"
              for m in result["malformed"]]
    s = result.get("soak")
    if s:
        lines += ["", f"Soak: {s['requests']} requests in {s['seconds']} s by 16 clients ({s['answers_per_s']} answers/s, "
                      f"p95 {s['p95']} s, first event p50 {s['first_event_p50']} s, {s.get('cpu_s_per_answer')} server CPU s an answer, "
                      f"{s['errors']} errors); server RSS {s['rss_mb_at_tenth']} MB after a tenth, "
                      f"{s['rss_mb_end']} MB at the end: **{s['growth_pct']}% growth** (peak {s['peak_rss_mb']} MB)."]
    lines += ["", f"All requests: {result['requests_total']}, errors: {result['errors_total']}."]
    return "\n".join(lines)
