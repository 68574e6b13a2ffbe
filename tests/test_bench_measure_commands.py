"""The measurements that were scripts/measure_*.py, now `ppkit bench` commands: argument checks and a tiny
real run of each on the fixture filings (fast, offline)."""

import json

import pytest

from bench_support import FIX, build_fixture_index
from ppkit.bench.data.gold import load_gold
from ppkit.bench.data.loaders import load_questions
from ppkit.bench.fit import stage2_rules, statement_weight
from ppkit.bench.fit.rerank import QuestionSet
from ppkit.cli import main


@pytest.fixture
def fixture_sets(tmp_path, monkeypatch):
    """load_sets of both commands answers the FinanceBench fixture questions on a hash-embedded fixture index."""
    monkeypatch.setenv("PPKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PPKIT_OFFLINE", "1")
    index = build_fixture_index(tmp_path / "index")
    path = FIX / "bench_financebench.jsonl"
    fmt, questions = load_questions(path)
    sets = [QuestionSet(path.stem, path, fmt, questions, load_gold(fmt, questions, path, index), index)]
    for module in (stage2_rules, statement_weight):
        monkeypatch.setattr(module, "load_sets", lambda paths, config, shelf_index=None: sets)
    return sets


def test_stage2_rules_refuses_a_set_without_none(capsys):
    assert main(["bench", "stage2-rules", "--rules", "mmr"]) == 2
    assert "must include none" in capsys.readouterr().err


def test_statement_weight_refuses_a_bad_grid(capsys):
    assert main(["bench", "statement-weight", "--grid", "0.8,heavy"]) == 2
    assert "--grid" in capsys.readouterr().err


def test_stage2_rules_runs(fixture_sets, capsys):
    assert main(["bench", "stage2-rules", "--rules", "none,short_down,same_title_down"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("rule chosen leave-one-company-out for each of 2 questions")
    assert "none: " in out and "hit@3" in out


def test_statement_weight_runs(fixture_sets, capsys):
    assert main(["bench", "statement-weight", "--grid", "0.8,1.6"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("weight chosen leave-one-company-out for each of 2 questions")
    assert "dense 0.8: " in out and "dense 1.6: " in out


@pytest.mark.corpus
def test_extraction_table_scores_each_backend_against_the_reference(tmp_path):
    """The table of `ppkit bench extraction` on a stand-in run whose "extraction" is the reference itself: the
    run's summary row, and every reference title found with nothing extra (the extractors run only in the bench)."""
    from ppkit.bench.runs.extraction import PAIRS, ExtractRun, extraction_table
    from ppkit.core.data import data_dir

    for stem, ref in PAIRS.items():
        (tmp_path / f"{stem}.md").write_text((data_dir() / ref).read_text(encoding="utf-8"), encoding="utf-8")
        (tmp_path / f"{stem}.pages.json").write_text(json.dumps({"pages": [{"page": 1}, {"page": 2}]}))
    run = ExtractRun("copy", tmp_path, {s: (1.0, 0.5, 100.0) for s in PAIRS}, 6.0, 2)
    lines = extraction_table([run])
    assert lines[2] == "| copy | 12 | 6 | 2.0 | 3 | 4.0 | 2 |"
    rows = [ln for ln in lines if "| copy | 2 |" in ln]
    assert len(rows) == len(PAIRS) and all("| 100.0% | 100.0% |" in r for r in rows), rows


def test_split_words_joins_a_letter_spaced_heading(tmp_path, capsys):
    text = "# Annual Report\n\n## R evenue\n\nRevenue grew. Revenue fell.\n\n## Costs\n\nCosts.\n"
    (tmp_path / "ACME.md").write_text(text, encoding="utf-8")
    (tmp_path / "ACME.pages.json").write_text(json.dumps({"pages": []}), encoding="utf-8")
    assert main(["bench", "split-words", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("before: heading words") and out[1].startswith("after: heading words")
    assert out[2] == "filings: 1; with < 3 headings: 0: []"
    assert out[4] == "lines kept: True"
