"""Cases 1, 6, 7, 10, 13: folders that are not indexes, crafted index folders, damaged ones, and
document names that collide. Each ends in a correct result or a one-line error naming the file."""

import hashlib
import json
import re
import socket
import threading

import pytest

import ppkit
from ppkit.documents.images import read_image_bytes
from ppkit.indexing.index import UntrustedIndex
from ppkit.pipeline import load_index

from .conftest import index_cli, indexed_docs, leftovers, run_cli


def _sha(p):
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _edit(folder, rel, text):
    """Edit one index file and fix its checksum, as a crafted folder would."""
    (folder / rel).write_text(text, encoding="utf-8")
    m = json.loads((folder / "manifest.json").read_text())
    if rel != "manifest.json":
        m["files"][rel] = _sha(folder / rel)
        (folder / "manifest.json").write_text(json.dumps(m), encoding="utf-8")


def _one_line_error(r, *parts):
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


def test_fresh_never_deletes_another_project(tmp_path, docs):
    """Case 1: a folder with someone's manifest.json and src/ is never replaced, with or without --fresh."""
    proj = tmp_path / "proj"
    (proj / "src").mkdir(parents=True)
    (proj / "manifest.json").write_text('{"name": "app"}')
    (proj / "src" / "app.js").write_text("precious()")
    for extra in ((), ("--fresh",)):
        line = _one_line_error(index_cli(proj, docs["acme"], extra=extra), f"{proj} is not a ppkit index",
                               "src/app.js")
        assert "--fresh" not in line
    assert (proj / "src" / "app.js").read_text() == "precious()"
    assert json.loads((proj / "manifest.json").read_text()) == {"name": "app"} and leftovers(proj) == []


def test_fresh_replaces_a_damaged_ppkit_index(tmp_path, docs):
    folder = tmp_path / "ix"
    ppkit.build_index([docs["acme"]], folder, embedder=ppkit.HashEmbedder(), progress=False)
    (folder / "manifest.json").write_text("{trunc")
    assert index_cli(folder, docs["globex"], extra=["--fresh"]).returncode == 0
    assert indexed_docs(folder) == ["globex"]


def test_a_crafted_qdrant_url_is_never_contacted(tmp_path, docs):
    """Case 6: the manifest's server URL is not used; QDRANT_API_KEY goes nowhere."""
    folder = tmp_path / "ix"
    ppkit.build_index([docs["acme"]], folder, embedder=ppkit.HashEmbedder(), progress=False)
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    srv.settimeout(0.2)
    hits = []

    def accept():
        for _ in range(50):  # bounded: at most 10 s
            try:
                conn, _ = srv.accept()
                hits.append(conn.recv(4096))
                conn.close()
            except OSError:
                pass

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    m = json.loads((folder / "manifest.json").read_text())
    url = f"http://127.0.0.1:{srv.getsockname()[1]}"
    m["store"] = {"name": "qdrant", "collection": "x", "dir": "qdrant", "mode": "server", "url": url}
    (folder / "manifest.json").write_text(json.dumps(m))
    r = run_cli("ask", "revenue?", "--index", folder, env={"QDRANT_API_KEY": "s3cret"})
    _one_line_error(r, "live on a Qdrant server", "--qdrant-url", "QDRANT_URL")
    srv.close()
    t.join(timeout=15)
    assert hits == []


def test_a_crafted_source_is_not_read(tmp_path, docs):
    """Case 7: a manifest whose source is another file (with its real sha256) is refused."""
    folder = tmp_path / "ix"
    ppkit.build_index([docs["acme"]], folder, embedder=ppkit.HashEmbedder(), progress=False)
    secret = tmp_path / "secret.txt"
    secret.write_text("the password is hunter2\n" * 44)
    m = json.loads((folder / "manifest.json").read_text())
    m["documents"][0]["source"], m["documents"][0]["sha256"] = str(secret), _sha(secret)
    (folder / "manifest.json").write_text(json.dumps(m))
    r = run_cli("ask", "password?", "--index", folder)
    _one_line_error(r, "was not written by ppkit on this account", "--trust-index")
    assert "hunter2" not in r.stderr
    with pytest.raises(UntrustedIndex):
        load_index(folder).lines("acme")
    assert load_index(folder, trust=True).lines("acme")[0] == "the password is hunter2"  # only when told
    # an untrusted folder is not updated in place either (its records would be stamped as ours)
    _one_line_error(index_cli(folder, docs["globex"]), "not updated in place", "--fresh")


def test_our_own_index_is_trusted_after_a_rebuild_and_a_copy(tmp_path, docs):
    folder = tmp_path / "ix"
    assert index_cli(folder, docs["acme"]).returncode == 0
    assert load_index(folder).trusted
    assert index_cli(folder, docs["globex"]).returncode == 0
    assert load_index(folder).lines("globex")[0] == "# GLOBEX CORPORATION"


def test_a_crafted_image_path_is_confined_to_the_document_folder(tmp_path):
    """Case 7: a tree whose image `resolved` points outside the document's folder is re-resolved."""
    doc = tmp_path / "paper" / "paper.md"
    (doc.parent / "figs").mkdir(parents=True)
    (doc.parent / "figs" / "f.png").write_bytes(b"\x89PNG own figure")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "f.png").write_bytes(b"\x89PNG someone else's file")
    doc.write_text("# Paper\n\n## Results\n\nFigure 1: growth.\n\n![growth](figs/f.png)\n\nGrowth was large.\n")
    folder = tmp_path / "ix"
    ppkit.build_index([doc], folder, embedder=ppkit.HashEmbedder(), progress=False)
    rel = "trees/" + json.loads((folder / "manifest.json").read_text())["trees"]["paper"]
    tree = json.loads((folder / rel).read_text())
    imgs = [im for n in tree["nodes"] for im in n["images"]]
    assert len(imgs) == 1
    imgs[0]["resolved"] = str(tmp_path / "outside" / "figs" / "f.png")
    (tmp_path / "outside" / "figs").mkdir()
    (tmp_path / "outside" / "figs" / "f.png").write_bytes(b"\x89PNG someone else's file")
    _edit(folder, rel, json.dumps(tree))
    idx = load_index(folder)
    im = next(i for n in idx.trees["paper"].nodes.values() for i in n.images)
    assert im.resolved == str((doc.parent / "figs" / "f.png").resolve())
    assert read_image_bytes({"path": im.path, "resolved": im.resolved})[0] == b"\x89PNG own figure"
    imgs[0]["path"] = "../outside/f.png"
    _edit(folder, rel, json.dumps(tree))
    im = next(i for n in load_index(folder).trees["paper"].nodes.values() for i in n.images)
    assert im.resolved is None and "not inside" in im.problem


def test_names_that_share_a_file_name_keep_their_own_trees(tmp_path):
    """Case 10: `my report.md` and `my_report.md` indexed together both answer."""
    a, b = tmp_path / "my report.md", tmp_path / "my_report.md"
    a.write_text("# Spaces\n\n## Body\n\nThe space report says 11.\n")
    b.write_text("# Underscores\n\n## Body\n\nThe underscore report says 22.\n")
    folder = tmp_path / "ix"
    assert index_cli(folder, a, b).returncode == 0
    idx = load_index(folder)
    assert idx.trees["my report"].nodes["0001"].title == "Spaces" and idx.trees["my_report"].nodes["0001"].title == "Underscores"
    assert idx.lines("my report")[0] == "# Spaces" and idx.lines("my_report")[0] == "# Underscores"
    r = run_cli("ask", "what does the report say?", "--index", folder, "--k", "2")
    assert r.returncode == 0 and "[my report#" in r.stdout and "[my_report#" in r.stdout, r.stdout + r.stderr


def test_a_same_named_document_from_elsewhere_needs_replace(tmp_path):
    """Case 10: `b/AMD.md` after `a/AMD.md` is refused without --replace, and said when replaced."""
    for sub, text in (("a", "# AMD one\n\nFirst.\n"), ("b", "# AMD two\n\nSecond.\n")):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "AMD.md").write_text(text)
    folder = tmp_path / "ix"
    assert index_cli(folder, tmp_path / "a" / "AMD.md").returncode == 0
    _one_line_error(index_cli(folder, tmp_path / "b" / "AMD.md"), "'AMD' is already indexed from",
                    str(tmp_path / "a" / "AMD.md"), "--replace")
    assert load_index(folder).lines("AMD")[0] == "# AMD one"
    r = index_cli(folder, tmp_path / "b" / "AMD.md", extra=["--replace"])
    assert r.returncode == 0 and f"AMD: replaced the document indexed from {tmp_path / 'a' / 'AMD.md'}" in r.stdout
    assert load_index(folder).lines("AMD")[0] == "# AMD two"


@pytest.mark.parametrize("damage, expect", [
    (lambda f: (f / "manifest.json").write_text("[1, 2, 3]"), "manifest.json is not a ppkit manifest"),
    (lambda f: (f / "manifest.json").write_text(json.dumps(
        {k: v for k, v in json.loads((f / "manifest.json").read_text()).items() if k != "embedder"})),
     "manifest.json has no valid 'embedder' entry"),
    (lambda f: _edit(f, "chunks.jsonl", re.sub(r'"node_id": "\d+"', '"node_id": "9999"',
                                               (f / "chunks.jsonl").read_text(), count=1)),
     "chunks.jsonl: chunk 0 points at node '9999'"),
    (lambda f: _edit(f, "noise.json", (f / "noise.json").read_text().replace('"node_id"', '"nodeid"', 1)),
     "noise.json cannot be read"),
    (lambda f: (f / "sections.json").write_text((f / "sections.json").read_text()[:20]),
     "sections.json does not match its checksum"),
    (lambda f: (f / "chunks.jsonl").write_text((f / "chunks.jsonl").read_text()[:100]),
     "chunks.jsonl does not match its checksum"),
])
def test_damaged_index_files_are_named(tmp_path, docs, damage, expect):
    """Case 13: each damage is one line naming the file and saying to rebuild."""
    folder = tmp_path / "ix"
    ppkit.build_index([docs["acme"]], folder, embedder=ppkit.HashEmbedder(), progress=False)
    damage(folder)
    from ppkit.core.errors import PpkitError

    with pytest.raises(PpkitError) as e:
        load_index(folder)
    msg = str(e.value)
    assert expect in msg and f"--index {folder} --fresh" in msg and "\n" not in msg, msg


def test_an_index_path_that_is_a_file(tmp_path, docs):
    """Case 13: `--index somefile.txt` is one line, and no temporary folder is left."""
    f = tmp_path / "somefile.txt"
    f.write_text("notes")
    _one_line_error(index_cli(f, docs["acme"]), f"{f} is a file, not an index folder")
    _one_line_error(run_cli("ask", "q?", "--index", f), f"{f} is a file, not an index folder")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "config") == ["docs", "somefile.txt"] and f.read_text() == "notes"


def test_stale_source_and_embedder_mismatch_still_clear(tmp_path, docs):
    """Locked in: a changed source and another embedder are clear errors."""
    folder = tmp_path / "ix"
    ppkit.build_index([docs["acme"]], folder, embedder=ppkit.HashEmbedder(), progress=False)
    docs["acme"].write_text(docs["acme"].read_text() + "\nedited\n")
    _one_line_error(run_cli("ask", "q?", "--index", folder), "changed since it was indexed", "ppkit index")
    with pytest.raises(ValueError, match="cannot be queried"):
        load_index(folder, embedder=ppkit.HashEmbedder(dim=64))
