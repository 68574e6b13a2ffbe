"""JupyterLab on 127.0.0.1 and headless Chromium (Debian's ``/usr/bin/chromium``) for tests/browser.

* ``lab``: a JupyterLab server on a free port of 127.0.0.1 with a random token, its own
  runtime, config, data, settings and workspace folders in a temporary directory, serving
  *copies* of the notebooks (so nothing the browser runs is saved into ``notebooks/``).
  The reference indexes are loaded (built once, cached under ``.ppkit/``) before it starts,
  so the kernels only read them.
* ``browser``: a Playwright (sync API) persistent Chromium context with a fresh profile.

Without Chromium or Playwright the tests skip with the reason, except under ``CI=true``,
where they fail: CI (``.ci/run``) installs Chromium and must run them.
Every wait is bounded: the whole module has ``PPKIT_BROWSER_BUDGET`` seconds (default 900).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

import ppkit

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("PPKIT_CHROMIUM", "/usr/bin/chromium")
SCREENSHOTS = ROOT / ".ppkit" / "screenshots"  # .ppkit/ is git-ignored
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# JupyterLab settings for a quiet, fully rendered page: no news or update checks (no network here),
# every cell in the DOM (no windowing), no autosave
SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                         "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
}


def pytest_collection_modifyitems(config, items):
    """Run the browser tests last: after the rest of the suite and the notebooks have warmed the caches."""
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)


class Deadline:
    """A time budget shared by every wait of the module."""

    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds

    def left(self, cap: float | None = None) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            pytest.fail("the browser tests ran out of their time budget (PPKIT_BROWSER_BUDGET)")
        return min(left, cap) if cap is not None else left


def _missing(reason: str):
    if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
        pytest.fail(f"CI must run the browser tests: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def deadline():
    return Deadline(float(os.environ.get("PPKIT_BROWSER_BUDGET", "900")))


@pytest.fixture(scope="session")
def screenshots():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A running JupyterLab: ``url(path)`` opens a notebook, ``api(...)`` calls its REST API."""

    def __init__(self, port: int, token: str, workdir: Path, proc: subprocess.Popen, log: Path):
        self.port, self.token, self.workdir, self.proc, self.log = port, token, workdir, proc, log

    def url(self, notebook: str) -> str:
        return f"http://127.0.0.1:{self.port}/lab/tree/{notebook}?token={self.token}&reset"

    def api(self, path: str, method: str = "GET", timeout: float = 10):
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/api/{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            body = r.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """Stop every kernel (each holds an index and the embedding model in memory)."""
        for k in self.api("kernels"):
            self.api(f"kernels/{k['id']}", method="DELETE", timeout=30)


@pytest.fixture(scope="session")
def lab(tmp_path_factory, deadline):
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        _missing("JupyterLab is not installed: pip install -e '.[notebooks]'")
    # the notebooks' shared reference indexes: cached by content, built here at most once
    ppkit.reference_index("10k", progress=False)
    ppkit.reference_index("papers", progress=False)

    tmp = tmp_path_factory.mktemp("lab")
    work = tmp / "notebooks"
    shutil.copytree(ROOT / "notebooks", work)
    settings = tmp / "user-settings"
    for rel, value in SETTINGS.items():
        p = settings / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(value), encoding="utf-8")
    env = dict(os.environ)
    env.pop("MPLBACKEND", None)  # the kernels use the inline backend, as a user's do
    env.update({
        "PATH": str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),  # the kernel's python
        "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"), "JUPYTER_CONFIG_DIR": str(tmp / "config"),
        "JUPYTER_DATA_DIR": str(tmp / "data"), "IPYTHONDIR": str(tmp / "ipython"),
        "JUPYTER_PLATFORM_DIRS": "1", "PPKIT_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
        "NO_PROXY": "127.0.0.1,localhost",
    })
    port, token = _free_port(), uuid.uuid4().hex
    log = tmp / "lab.log"
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}",
           "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}",
           "--ServerApp.terminals_enabled=False", "--LabApp.expose_app_in_browser=True",
           f"--LabApp.user_settings_dir={settings}", f"--LabApp.workspaces_dir={tmp / 'workspaces'}",
           "--ServerApp.log_level=WARN"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    server = Lab(port, token, work, proc, log)
    try:
        end = time.monotonic() + deadline.left(90)
        while True:
            if proc.poll() is not None:
                pytest.fail(f"JupyterLab exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
            try:
                server.api("status", timeout=2)
                break
            except OSError:
                if time.monotonic() > end:
                    pytest.fail(f"JupyterLab did not answer within 90 s:\n{log.read_text(errors='replace')[-3000:]}")
                time.sleep(0.5)
        yield server
    finally:
        try:
            server.shutdown_kernels()
        except OSError:
            pass
        # the server and the kernels it started are one process group of ours
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed: pip install -e '.[test]'")
    if not Path(CHROMIUM).is_file():
        _missing(f"no Chromium at {CHROMIUM}: apt-get install chromium (or set PPKIT_CHROMIUM)")
    pw = sync_playwright().start()
    try:
        ctx = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=CHROMIUM, headless=True,
            args=CHROMIUM_ARGS, viewport={"width": 1400, "height": 1000}, timeout=60_000)
        try:
            yield ctx
        finally:
            ctx.close()
    finally:
        pw.stop()
