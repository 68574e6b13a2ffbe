"""`ppkit bench ...` end to end on a tiny hash-embedded index of the fixture filings (fast, offline)."""

import json

import pytest

from bench_support import FIX, build_fixture_index
from ppkit.cli import main


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("PPKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PPKIT_FIGURES_DIR", str(tmp_path / "figures"))
    monkeypatch.setenv("PPKIT_OFFLINE", "1")
    monkeypatch.setenv("PPKIT_QUIET", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    index = build_fixture_index(tmp_path / "index")
    return tmp_path, index


def _unit_chars(index, doc):
    lines = index.lines(doc)
    return sum(len("\n".join(lines[a - 1 : b])) for a, b in index.units(doc).values())


def test_retrieval_json_contract_financebench(env, capsys):
    tmp, index = env
    out = tmp / "fb.json"
    rc = main(["bench", "retrieval", "--questions", str(FIX / "bench_financebench.jsonl"), "--index", str(tmp / "index"),
               "--k", "3", "--k", "5", "--k", "10", "--json", str(out), "--quiet"])
    assert rc == 0
    res = json.loads(out.read_text())
    assert {"benchmark", "n", "results", "per_question"} <= set(res)
    assert res["benchmark"] == "financebench" and res["n"] == 2
    assert set(res["results"]) == {"3", "5", "10"}
    assert set(res["results"]["5"]) >= {"hit", "recall", "context_chars_mean"}
    assert [q["qid"] for q in res["per_question"]] == ["fb-acme-prose", "fb-acme-table"]
    assert set(res["skipped"]) == {"fb-globex-missing", "fb-initech"}
    assert res["gold"]["coverage"] == 0.5
    # at k=10 every one of Acme's sections is sent, so both gold sections are, and the context is all of Acme
    assert res["results"]["10"]["hit"] == 1.0 and res["results"]["10"]["recall"] == 1.0
    assert res["results"]["10"]["context_chars_mean"] == _unit_chars(index, "Acme")
    # ... so every gold section is, and every feature of the evidence the filing holds
    assert res["results"]["10"]["all_gold"] == 1.0 and res["results"]["10"]["evidence_recall"] == 1.0
    assert res["results"]["10"]["n_evidence"] == 2 and all(q["evidence_features"] > 0 for q in res["per_question"])
    assert res["modes"]["auto"]["filter"] == {"exact": 1.0, "filtered": 1.0}
    assert res["modes"]["gold"]["10"]["wrong_doc"] == 0.0
    assert (res["modes"]["gold"]["10"]["wrong_company"], res["modes"]["gold"]["10"]["wrong_period"]) == (0.0, 0.0)
    # at k=10 the own filter (Acme) sends only Acme: nothing from another company
    assert res["results"]["10"]["wrong_company"] == 0.0
    assert set(res["baselines"]["auto"]) == {"blind-dense", "blind-bm25", "header-path"}
    assert set(res["baselines"]["none"]["header-path"]) == {"3", "5", "10", "equal_context"}
    assert res["per_question"][0]["modes"]["auto"]["search_text"] == "What drove revenue change as of FY2022 for Acme?"
    printed = capsys.readouterr()
    assert "| ppkit | auto | 5 |" in printed.out
    assert "Misses at k=10" not in printed.out  # both questions hit at k=10
    assert (tmp / "figures" / "bench_retrieval_bench_financebench.png").is_file()
    assert list((tmp / "cache" / "bench").glob("blind-*.npy"))  # baseline embeddings are cached


def test_retrieval_comprehensive_xlsx_with_reference_logs(env):
    import openpyxl

    tmp, _ = env
    wb = openpyxl.Workbook()
    for r in [["Qno", "Company", "Question"], [1, "Acme_2022", "For Acme, what was the gross margin in FY2022?"],
              [2, "Acme_2022", "For Acme, is there any legal risk?"], [3, "Acme_2022", "For Acme, tea?"]]:
        wb.active.append(r)
    wb.save(tmp / "questions.xlsx")
    out = tmp / "c.json"
    rc = main(["bench", "retrieval", "--questions", str(tmp / "questions.xlsx"), "--index", str(tmp / "index"),
               "--reference-logs", str(FIX / "bench_reference" / "comprehensive_k5"), "--json", str(out),
               "--no-baselines", "--no-figure", "--modes", "auto,none", "--quiet"])
    assert rc == 0
    res = json.loads(out.read_text())
    assert res["benchmark"] == "comprehensive" and res["n"] == 2 and set(res["results"]) == {"3", "5"}
    assert res["per_question"][0]["gold"] == ["Acme#0005", "Acme#0003"]
    assert list(res["skipped"]) == ["Acme-3"]
    assert set(res["modes"]) == {"auto", "none"} and res["baselines"] == {}


def test_retrieval_bad_input_is_one_message(env, capsys, tmp_path):
    bad = tmp_path / "notes.json"
    bad.write_text("{}")
    assert main(["bench", "retrieval", "--questions", str(bad), "--index", str(env[0] / "index")]) == 2
    err = capsys.readouterr().err
    assert "not a supported question set" in err and "Traceback" not in err
    assert main(["bench", "retrieval", "--questions", str(FIX / "bench_financebench.jsonl"), "--index",
                 str(env[0] / "index"), "--modes", "auto,sideways"]) == 2
    assert "unknown mode(s) ['sideways']" in capsys.readouterr().err


def test_answers_offline_needs_a_key(env, capsys, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "set-but-offline")
    rc = main(["bench", "answers", "--questions", str(FIX / "bench_financebench.jsonl"), "--k", "5"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "needs a Gemini key" in err and "Traceback" not in err


def test_retrieval_modes_side_by_side(env):
    tmp, index = env
    out = tmp / "modes.json"
    rc = main(["bench", "retrieval", "--questions", str(FIX / "bench_financebench.jsonl"), "--index", str(tmp / "index"),
               "--k", "3", "--modes", "auto,none", "--retrieval", "dense", "--retrieval", "bm25",
               "--retrieval", "hybrid", "--no-baselines", "--no-figure", "--json", str(out), "--quiet"])
    assert rc == 0
    res = json.loads(out.read_text())
    assert list(res["modes"]) == ["auto", "none", "auto:bm25", "none:bm25", "auto:hybrid", "none:hybrid"]
    row = res["per_question"][0]["modes"]
    assert row["auto"]["filter"] == row["auto:bm25"]["filter"] == row["auto:hybrid"]["filter"] == ["Acme"]
    assert row["none:hybrid"]["filter"] is None


def test_question_browser_wears_the_inline_style(env):
    """In JupyterLab a widget's HTML inherits a 28 px line height unless it carries its own style."""
    pytest.importorskip("ipywidgets")
    from ppkit.bench.views.questions import question_browser
    from ppkit.core.style import BLOCK, NO_MATH

    tmp, _ = env
    out = tmp / "fb.json"
    assert main(["bench", "retrieval", "--questions", str(FIX / "bench_financebench.jsonl"), "--index",
                 str(tmp / "index"), "--k", "5", "--json", str(out), "--quiet", "--no-figure", "--no-baselines"]) == 0
    box = question_browser(json.loads(out.read_text()))
    pick, shown = box.children
    assert pick.value == "fb-acme-prose"
    assert shown.value.startswith(f"<div class='ppkit-block {NO_MATH}' style='{BLOCK}'>") and "fb-acme-prose" in shown.value


def test_every_subcommand_help_renders():
    """argparse formats help strings with %: a literal percent sign in one help text breaks `--help`
    for the whole command group."""
    import argparse

    from ppkit.cli import build_parser

    def walk(parser):
        parser.format_help()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    yield sub
                    yield from walk(sub)

    subs = list(walk(build_parser()))
    assert {"retrieval", "metrics", "abstain", "scale", "peers"} <= {s.prog.split()[-1] for s in subs}


def test_retrieval_refuses_a_second_question_file(capsys):
    """Several --questions used to score only the last file, silently."""
    with pytest.raises(SystemExit) as e:
        main(["bench", "retrieval", "--questions", "a.xlsx", "--questions", "b.jsonl"])
    assert e.value.code == 2
    assert "--questions given twice" in capsys.readouterr().err


def test_retrieval_runs_only_the_baselines_named(env, capsys):
    tmp, _ = env
    out = tmp / "fb-two.json"
    assert main(["bench", "retrieval", "--questions", str(FIX / "bench_financebench.jsonl"), "--index", str(tmp / "index"),
                 "--modes", "auto", "--baselines", "blind-bm25,header-path", "--json", str(out), "--quiet",
                 "--no-figure"]) == 0
    assert set(json.loads(out.read_text())["baselines"]["auto"]) == {"blind-bm25", "header-path"}
    assert main(["bench", "retrieval", "--questions", str(FIX / "bench_financebench.jsonl"), "--index", str(tmp / "index"),
                 "--baselines", "blind-sparse", "--quiet"]) == 2
    assert "choose from blind-dense, blind-bm25, header-path" in capsys.readouterr().err


def test_retrieval_with_the_fitted_reranker(env, monkeypatch):
    tmp, _ = env
    out = tmp / "fb-fitted.json"
    assert main(["bench", "retrieval", "--questions", str(FIX / "bench_financebench.jsonl"), "--index", str(tmp / "index"),
                 "--modes", "auto", "--no-baselines", "--reranker", "fitted", "--json", str(out), "--quiet",
                 "--no-figure"]) == 0
    assert json.loads(out.read_text())["reranker"] == "fitted"
    monkeypatch.setenv("PPKIT_RERANKER", "fitted")  # the environment chooses it too
    assert main(["bench", "retrieval", "--questions", str(FIX / "bench_financebench.jsonl"), "--index", str(tmp / "index"),
                 "--modes", "auto", "--no-baselines", "--json", str(out), "--quiet", "--no-figure"]) == 0
    assert json.loads(out.read_text())["reranker"] == "fitted"
