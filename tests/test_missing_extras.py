"""A feature whose extra is not installed says in one line what to install, and writes nothing.

The extra's modules are hidden by a ``None`` entry in ``sys.modules`` (``import`` then raises ImportError), so
these run in the full test environment.
"""

import sys

import numpy as np
import pytest

from ppkit.cli import main
from ppkit.core.errors import MissingDependency

from serve_support import make_pdf


def test_layout_backend_without_the_pdf_extra_says_how_to_add_it(tmp_path, monkeypatch, capsys):
    pdf = make_pdf(tmp_path / "initech.pdf")
    monkeypatch.setitem(sys.modules, "pymupdf4llm", None)
    status = main(["extract", str(pdf), "--out", str(tmp_path / "out"), "--backend", "layout", "--quiet"])
    err = capsys.readouterr().err.strip()
    assert status == 2
    assert len(err.splitlines()) == 1
    assert "pip install 'ppkit[pdf]'" in err and "AGPL" in err and "--backend offline" in err
    assert not (tmp_path / "out" / "initech.md").exists()


def test_whole_document_comparison_without_scipy_names_the_compare_extra(monkeypatch):
    from collections import Counter

    from ppkit.compare.signals import tfidf_vectors

    monkeypatch.setitem(sys.modules, "scipy", None)
    with pytest.raises(MissingDependency, match=r"pip install 'ppkit\[compare\]'") as e:
        tfidf_vectors([Counter(a=1), Counter(b=2)])
    assert "\n" not in str(e.value)
