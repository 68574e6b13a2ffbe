"""The typed contracts type-check: mypy over the modules whose types cross a stage, and the pipeline.

The stage types (``Trace``, ``Candidate``, ``Section``, ``Answer``...), the protocols
(``Reranker``, ``Synthesizer``, ``VectorStore``), the configuration and errors, and the pipeline
that wires them. Third-party packages without type information are not checked.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ppkit.core.config import cache_dir

ROOT = Path(__file__).resolve().parent.parent
CHECKED = ["ppkit/core", "ppkit/retrieval/types.py", "ppkit/retrieval/rerank.py", "ppkit/indexing/stores/base.py",
           "ppkit/answer/synth.py", "ppkit/answer/images.py", "ppkit/pipeline.py"]


def test_contract_modules_and_the_pipeline_type_check():
    if shutil.which("mypy") is None and subprocess.run([sys.executable, "-m", "mypy", "--version"],
                                                       capture_output=True).returncode != 0:
        pytest.skip("mypy is not installed (pip install 'ppkit[test]')")
    res = subprocess.run([sys.executable, "-m", "mypy", "--ignore-missing-imports", "--follow-imports=silent",
                          "--cache-dir", str(cache_dir() / "mypy"), *CHECKED], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_config_reranker_is_checked():
    import pytest

    from ppkit.core.config import Config
    from ppkit.core.errors import ConfigError

    assert Config().reranker == "structural" and Config(reranker="fitted").reranker == "fitted"
    with pytest.raises(ConfigError, match="reranker='neural': use one of structural, fitted"):
        Config(reranker="neural")
