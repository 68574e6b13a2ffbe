"""The metadata benchmark (ppkit.bench.runs.metadata) on the hand-written covers."""

import json
import shutil
from pathlib import Path

import pytest

from ppkit.bench.runs.metadata import gold_metadata, metadata_markdown, run_metadata_bench
from ppkit.cli import main

COVERS = Path(__file__).parent / "fixtures" / "covers"
NAMES = {"NORTHWIND_2023_10K": "northwind_10k.md", "CONTOSO_2023Q2_10Q": "contoso_10q.md",
         "TITAN_2022_8K_dated-2022-05-20": "titan_8k.md", "FABRIKAM_2023Q4_EARNINGS": "fabrikam_release_q4.md",
         "LEE_2023Q2_EARNINGS": "lee_release_q2.md", "GLOBEX_2016_10K": "globex_old_10k.md"}


@pytest.fixture
def md_dir(tmp_path):
    for doc, src in NAMES.items():
        shutil.copy(COVERS / src, tmp_path / f"{doc}.md")
    return tmp_path


def test_gold_metadata():
    row = {"doc_name": "X_2024Q2_10Q", "company": "X", "doc_type": "10q", "doc_period": 2024}
    assert gold_metadata(row) == {"company": "X", "fiscal_year": 2024, "quarter": 2, "form_type": "10-Q"}


def test_scores_and_misses_by_cause(md_dir):
    r = run_metadata_bench(COVERS / "documents.jsonl", md_dir, questions=COVERS / "questions.jsonl")
    # GLOBEX: the gold says another company and FY2016 (the cover's year ended January 3, 2016 is FY2015)
    assert (r["n"], r["missing"]) == (6, ["ABSENT_2020_10K"])
    assert r["right"] == {"company": round(5 / 6, 4), "period": round(5 / 6, 4), "form": 1.0, "all": round(5 / 6, 4)}
    assert r["misses_by_cause"] == {"company: the text names another company (e.g. a later rename)": ["GLOBEX_2016_10K"],
                                    "period: wrong fiscal year": ["GLOBEX_2016_10K"]}
    q = r["questions"]
    # q3 names no company: nothing is selected, so neither company nor filing is right
    assert (q["n"], q["skipped"], q["company"], q["filing"]) == (3, ["q4"], round(2 / 3, 4), round(2 / 3, 4))
    assert [m["id"] for m in q["misses"]] == ["q3"]
    assert "| 6 | 83.3% | 83.3% | 100.0% | 83.3% |" in metadata_markdown(r)


def test_bench_metadata_command(md_dir, tmp_path, capsys):
    out = tmp_path / "meta.json"
    assert main(["bench", "metadata", "--documents", str(COVERS / "documents.jsonl"), "--markdown-dir", str(md_dir),
                 "--json", str(out)]) == 0
    assert json.loads(out.read_text())["right"]["form"] == 1.0
    assert "| filings | company | period | form | all three |" in capsys.readouterr().out
    assert main(["bench", "metadata", "--documents", str(COVERS / "documents.jsonl"),
                 "--markdown-dir", str(tmp_path / "nowhere")]) == 2
