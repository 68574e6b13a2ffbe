"""What a document is, said by the user (issue 47): ``company``/``period``/``form`` with an upload, ``PATCH
/v1/documents/{name}``, ``POST /v1/documents/cover``, ``ppkit.describe_documents`` and ``ppkit index FILE --company
--period --form``; the metadata and the filters follow without embedding again, and a document without metadata
is still searched when no filter applies to it. A small hash-embedder index through FastAPI's TestClient."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ppkit
from ppkit.core.errors import InvalidInput
from ppkit.documents.described import described, parse_period
from ppkit.retrieval.analyze import analyze_question

FIX = Path(__file__).parent / "fixtures"
REPORT = """# Quarry Lane Outfitters

Quarry Lane Outfitters sells hiking boots and tents through its own shops.

## Results

| Line item | 2024 | 2023 |
| --- | --- | --- |
| Net sales | 4,120 | 3,870 |
| Operating income | 515 | 470 |
"""


@pytest.fixture
def index(tmp_path):
    """acme and globex, said to be two companies' FY2022 10-Ks; initech with no metadata at all."""
    docs = []
    for name in ("acme.md", "globex.md", "initech.md"):
        (tmp_path / name).write_bytes((FIX / name).read_bytes())
        docs.append(tmp_path / name)
    said = {"acme": {"company": "Acme Corporation", "period": "FY2022", "form": "10-K"},
            "globex": {"company": "Globex Corporation", "period": "FY2022", "form": "10-K"}}
    return ppkit.build_index(docs, tmp_path / "index", embedder=ppkit.HashEmbedder(), described=said,
                             config=ppkit.Config(online=False), progress=False)


def test_described_sets_fields_with_their_source_and_keeps_what_was_said():
    meta = described({"company": "ACME", "fiscal_year": 2021, "quarter": None, "form_type": "8-K",
                      "period_end": "2021-12-31", "sources": {"company": "cover"}}, "acme",
                     company="Acme Corporation", period="Q2 2024", form="10q")
    assert (meta["company"], meta["fiscal_year"], meta["quarter"], meta["period"], meta["form_type"]) == \
        ("Acme Corporation", 2024, 2, "FY2024Q2", "10-Q")
    assert meta["aliases"] == ["acme", "Acme Corporation", "Acme"] and meta["period_end"] is None
    assert meta["sources"] == {"company": "user", "fiscal_year": "user", "quarter": "user", "form_type": "user"}
    again = described(meta, "acme", form="")  # a field cleared; what was said before stays said
    assert again["form_type"] is None and again["company"] == "Acme Corporation"
    assert parse_period("FY2024") == (2024, None) and parse_period("2023Q4") == (2023, 4)
    for bad in ({"period": "last year"}, {"form": "brochure"}):
        with pytest.raises(InvalidInput):
            described({}, "acme", **bad)


def test_a_document_without_metadata_is_searched_when_no_filter_applies_to_it(index):
    analysis = analyze_question(index, "What were the products sold in 2022?")
    # the year selects acme and globex (FY2022) and leaves initech in: nothing says it is another year
    assert analysis.filters.docs is None or "initech" in analysis.filters.docs
    answer = index.ask("What does Initech sell?")
    assert answer.sections[0].doc == "initech" and "initech" in answer.text


def test_describe_documents_changes_metadata_and_filters_without_embedding(index):
    before = analyze_question(index, "What did Initech Corporation sell in 2022?")
    assert before.filters.docs is None or "initech" in before.filters.docs
    new = ppkit.describe_documents(index.folder, {"initech": {"company": "Initech Corporation", "period": "FY2023",
                                                              "form": "10-K"}})
    assert new.manifest["build"]["chunks_embedded"] == 0 and new.manifest["build"]["described"] == ["initech"]
    meta = new.record("initech").metadata
    assert (meta["company"], meta["period"], meta["form_type"], meta["sources"]["company"]) == \
        ("Initech Corporation", "FY2023", "10-K", "user")
    assert analyze_question(new, "What did Initech sell?").filters.docs == ["initech"]
    # indexing the same file again keeps what was said
    again = ppkit.build_index([Path(new.record("initech").source)], index.folder, embedder=ppkit.HashEmbedder(),
                              config=ppkit.Config(online=False), progress=False)
    assert again.record("initech").metadata["company"] == "Initech Corporation"
    with pytest.raises(InvalidInput):
        ppkit.describe_documents(index.folder, {"initech": {"period": "next spring"}})
    assert ppkit.load_index(index.folder).record("initech").metadata["period"] == "FY2023"  # nothing changed


def test_cli_index_with_company_period_form(tmp_path, capsys):
    from ppkit.cli import main

    doc = tmp_path / "quarry.md"
    doc.write_text(REPORT, encoding="utf-8")
    code = main(["index", str(doc), "--index", str(tmp_path / "ix"), "--embedder", "hash", "--quiet",
                 "--company", "Quarry Lane Outfitters", "--period", "FY2024", "--form", "10-K"])
    assert code == 0
    meta = json.loads((tmp_path / "ix" / "manifest.json").read_text())["documents"][0]["metadata"]
    assert (meta["company"], meta["period"], meta["form_type"]) == ("Quarry Lane Outfitters", "FY2024", "10-K")
    assert main(["index", str(doc), str(FIX / "acme.md"), "--index", str(tmp_path / "ix"), "--embedder", "hash",
                 "--quiet", "--company", "X"]) == 2
    assert "one document" in capsys.readouterr().err


# ---- the HTTP routes ---------------------------------------------------------------------------------------------

def _client(index):
    pytest.importorskip("fastapi")
    pytest.importorskip("python_multipart")
    from fastapi.testclient import TestClient

    from ppkit.core.config import ServeSettings
    from ppkit.serve.app import create_app
    from ppkit.serve.engine import Engine

    return TestClient(create_app(Engine(index), ServeSettings()))


def _wait(client, job_id: str) -> dict:
    from test_serve_jobs import _wait as wait  # the jobs tests' poll of a job to its end

    return wait(client, job_id)


def _doc(client, name: str) -> dict:
    return next(d for d in client.get("/v1/documents").json()["documents"] if d["name"] == name)


def test_upload_with_company_period_form_and_patch(index):
    client = _client(index)
    data = REPORT.encode()
    cover = client.post("/v1/documents/cover", files={"file": ("QUARRY_2024_10K.md", data, "text/markdown")})
    assert cover.status_code == 200 and cover.json()["cover"] == {"company": "QUARRY", "period": None,
                                                                  "form": "10-K"}  # from the file name, but no period
    dated = "# Quarry Lane Outfitters\n\nFORM 10-K\n\nFor the fiscal year ended December 31, 2024\n".encode()
    cover = client.post("/v1/documents/cover", files={"file": ("scan_2000.md", dated, "text/markdown")})
    assert cover.json()["cover"]["period"] == "FY2024"  # the period from the text, never from a number in a name
    bad = client.post("/v1/documents", files={"file": ("quarry.md", data, "text/markdown")},
                      data={"period": "sometime"})
    assert bad.status_code == 400 and "FY2024" in bad.json()["error"]["message"]
    r = client.post("/v1/documents", files={"file": ("quarry.md", data, "text/markdown")},
                    data={"company": "Quarry Lane Outfitters", "period": "FY2024", "form": "10-K"})
    assert r.status_code == 202
    assert _wait(client, r.json()["job"]["id"])["state"] == "done"
    assert {k: _doc(client, "quarry")[k] for k in ("company", "period", "form")} == \
        {"company": "Quarry Lane Outfitters", "period": "FY2024", "form": "10-K"}
    ask = client.post("/v1/ask", json={"question": "What were Quarry Lane Outfitters' net sales?"}).json()
    assert {s["doc"] for s in ask["sections"]} == {"quarry"}

    p = client.patch("/v1/documents/initech", json={"company": "Initech Corporation", "period": "FY2022"})
    assert p.status_code == 200 and p.json()["document"]["company"] == "Initech Corporation"
    assert _doc(client, "initech")["period"] == "FY2022"
    ask = client.post("/v1/ask", json={"question": "What does Initech Corporation sell?"}).json()
    assert {s["doc"] for s in ask["sections"]} == {"initech"}
    assert client.patch("/v1/documents/initech", json={"form": "leaflet"}).status_code == 400
    assert client.patch("/v1/documents/initech", json={"colour": "red"}).status_code == 422
    assert client.patch("/v1/documents/initech", json={}).status_code == 400
    assert client.patch("/v1/documents/nobody", json={"company": "X"}).status_code == 404
    assert _doc(client, "initech")["form"] is None  # the refused edits changed nothing


def test_a_pdf_cover_is_read_in_a_process_of_its_own_under_the_pdf_caps(index, monkeypatch):
    """The cover of a PDF is read like an upload (issue 45): in a process of its own, its decompressed bytes
    counted first; a cap passed is a 400 naming the file by its name, and nothing is left in the upload folder."""
    from serve_support import make_pdf

    client = _client(index)
    pdf = make_pdf(Path(index.folder).parent / "Initech 2022 10K.pdf").read_bytes()
    cover = client.post("/v1/documents/cover", files={"file": ("Initech 2022 10K.pdf", pdf, "application/pdf")})
    assert cover.status_code == 200 and cover.json()["cover"] == {"company": "Initech", "period": "FY2022",
                                                                  "form": "10-K"}
    monkeypatch.setenv("PPKIT_PDF_MAX_INFLATED", "1024")  # the least it takes; the PDF is more
    refused = client.post("/v1/documents/cover", files={"file": ("Initech 2022 10K.pdf", pdf, "application/pdf")})
    message = refused.json()["error"]["message"]
    assert refused.status_code == 400 and message.startswith("Initech 2022 10K.pdf: its streams decompress to more")
    assert "PPKIT_PDF_MAX_INFLATED" in message
    assert list((Path(index.folder).parent / ".index.serve" / "uploads").glob("*")) == []
