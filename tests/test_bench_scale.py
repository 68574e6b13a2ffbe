"""ppkit bench scale's pure parts: replica names and texts, the replayed vectors, the capacity line.
(The benchmark itself is a budgeted run, not a test: see the README.)"""

from pathlib import Path

import numpy as np

from ppkit import HashEmbedder
from ppkit.bench.runs.scale import _ReplayEmbedder, capacity, replica_name, write_replicas

FIX = Path(__file__).parent / "fixtures" / "peers"


def test_replica_names_shift_letters_and_keep_years():
    assert replica_name("3M_2018_10K", 1) == "4N_2018_21L"
    assert replica_name("AMD_2022_10K", 2) == "COF_2022_32M"
    assert len({replica_name("Acme", j) for j in range(1, 26)}) == 25


def test_replicas_rename_the_company_and_keep_the_length(tmp_path):
    paths = write_replicas([FIX / "Acme.md", FIX / "Zenith.md"], 5, tmp_path)
    assert [p.name for p in paths] == ["Acme.md", "Zenith.md", "Bdnf.md", "Afojui.md", "Ceog.md"]
    original = (FIX / "Acme.md").read_text()
    copy = (tmp_path / "Bdnf.md").read_text()
    assert len(copy) == len(original) and copy.startswith("# Bdnf Corp Annual Report") and "Acme" not in copy


def test_replayed_vectors_come_in_order_and_queries_are_real():
    inner = HashEmbedder(8)
    vecs = np.arange(24, dtype=np.float32).reshape(3, 8)
    rp = _ReplayEmbedder(inner, ["aa", "bbb", "c"], vecs)
    out = rp.embed_documents(["xx", "yyy", "z", "ww", "q"])
    assert out.tolist() == vecs[[0, 1, 2, 0, 1]].tolist()
    assert (rp.n, rp.aligned) == (5, 4)  # "q" is not as long as "bbb"
    assert np.allclose(rp.embed_query("revenue"), inner.embed_query("revenue"))


def test_capacity_solves_the_memory_line_for_24_gb():
    def point(label, docs, chunks, peak, real=True):
        return {"label": label, "documents": docs, "real": real, "build": {"chunks": chunks, "peak_rss_bytes": peak}}

    cap = capacity([point("4", 4, 1000, 2 * 10 ** 9), point("74", 74, 11000, 3 * 10 ** 9),
                    point("400", 400, 60000, 0, real=False)])  # a point without a measured peak is left out
    assert cap["bytes_per_chunk"] == 100000.0 and cap["intercept_bytes"] == 1_900_000_000
    assert cap["max_chunks"] == 221000 and cap["chunks_per_filing"] == 148.6 and cap["max_filings"] == 1486
    assert capacity([point("4", 4, 1000, 2 * 10 ** 9)]) is None


def test_markdown_dir_and_child_env_come_from_the_config(tmp_path, monkeypatch):
    """scale reads the environment only through ppkit.core.config."""
    from ppkit.bench.runs.scale import default_markdown_dir
    from ppkit.core.config import child_env, financebench_markdown_dir

    (tmp_path / "A.md").write_text("# A\n", encoding="utf-8")
    monkeypatch.setenv("PPKIT_FINANCEBENCH_MD", str(tmp_path))
    assert financebench_markdown_dir() == tmp_path
    assert default_markdown_dir() == tmp_path
    monkeypatch.setenv("PPKIT_FINANCEBENCH_MD", "")
    assert financebench_markdown_dir() is None
    env = child_env(PPKIT_QUIET="1")
    assert env["PPKIT_QUIET"] == "1" and env["PPKIT_FINANCEBENCH_MD"] == ""
