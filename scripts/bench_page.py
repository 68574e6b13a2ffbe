"""The ``ppkit serve`` page's first-text time in headless Chromium: from Enter to the answer's first words.

    python scripts/bench_page.py [--index DIR] [--questions FILE] [--n 40] [--json OUT]

Starts ``ppkit serve`` (one worker, offline) on a free loopback port over a temporary copy of ``--index``
(default: the cached reference index of the four 10-Ks; the copy keeps the server's upload folder out of the
shared cache), opens its page in Debian's Chromium (``/usr/bin/chromium``, or ``PPKIT_CHROMIUM``) at 1280x900,
and asks each question the way a person does: the page loaded fresh (no conversation carried over), the
question typed into the question box, Enter. For each it records, with the page's own clock
(``performance.now()``): ``first_text`` (Enter to the first text in the answer block ``#answer-block``) and
``done`` (Enter to "Done in" in the status line). Prints p50, p95 and max in seconds, and the JSON with
``--json``. The questions come from ``--questions`` (default the Comprehensive set), the first ``--n``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

import ppkit
from ppkit.bench.data.loaders import load_questions
from ppkit.core.data import data_dir

CHROMIUM = os.environ.get("PPKIT_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

# the instants (page clock) of Enter, the answer block's first text and the status's "Done in"
_WATCH = """() => {
  const t = window.__t = {enter: null, first: null, done: null};
  const q = document.getElementById("question");
  q.addEventListener("keydown", (e) => { if (e.key === "Enter") t.enter = performance.now(); }, true);
  new MutationObserver(() => {
    if (t.enter === null) return;
    const block = document.getElementById("answer-block");
    if (t.first === null && block && !block.hidden && block.textContent.trim()) t.first = performance.now();
    if (t.done === null && /Done in|Error/.test(document.getElementById("ask-status").textContent))
      t.done = performance.now();
  }).observe(document.body, {childList: true, subtree: true, characterData: true, attributes: true});
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stats(xs: list[float]) -> dict:
    return {"n": len(xs), "p50_s": round(float(np.percentile(xs, 50)), 3),
            "p95_s": round(float(np.percentile(xs, 95)), 3), "max_s": round(max(xs), 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", help="index folder (default: the cached reference 10-K index)")
    ap.add_argument("--questions", help="question file (default: the Comprehensive set)")
    ap.add_argument("--n", type=int, default=40, help="questions asked (the first n)")
    ap.add_argument("--json", help="write the numbers here")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    source = Path(args.index) if args.index else ppkit.reference_index("10k", progress=False).folder
    source_questions = args.questions or data_dir() / "benchmarks/comprehensive_questions.xlsx"
    questions = [q["text"] for q in load_questions(source_questions)[1]][: args.n]
    tmp = Path(tempfile.mkdtemp(prefix="ppkit-page-"))
    folder = tmp / "index"
    shutil.copytree(source, folder)
    port = _free_port()
    env = {**os.environ, "PPKIT_OFFLINE": "1", "PPKIT_QUIET": "1", "NO_PROXY": "127.0.0.1,localhost"}
    env.pop("PPKIT_API_TOKEN", None)
    log = open(tmp / "serve.log", "wb")
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from ppkit.cli import main; sys.exit(main())",
                             "serve", "--index", str(folder), "--port", str(port), "--trust-index"],
                            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    first, done = [], []
    try:
        for _ in range(600):  # the index loaded and warmed: at most about 5 minutes
            if proc.poll() is not None:
                raise SystemExit((tmp / "serve.log").read_text(errors="replace")[-2000:])
            try:
                urllib.request.urlopen(url + "healthz", timeout=2).read()
                break
            except OSError:
                time.sleep(0.5)
        else:
            raise SystemExit("ppkit serve did not answer /healthz")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            for q in questions:
                page.goto(url)
                page.wait_for_function("() => document.querySelectorAll('#documents tbody tr').length > 0")
                page.evaluate(_WATCH)
                page.fill("#question", q)
                page.press("#question", "Enter")
                page.wait_for_function("() => window.__t.done !== null", timeout=60_000)
                t = page.evaluate("() => window.__t")
                if t["first"] is not None:
                    first.append((t["first"] - t["enter"]) / 1000)
                done.append((t["done"] - t["enter"]) / 1000)
            browser.close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
    out = {"questions": len(questions), "first_text": _stats(first), "done": _stats(done),
           "load_average": [round(x, 2) for x in os.getloadavg()]}
    print(json.dumps(out, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
