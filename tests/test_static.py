"""ppkit.indexing.static: the static embedding distilled from MiniLM, on a tiny hand-built BERT."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ppkit.indexing.embed import EmbedderMismatch, get_embedder
from ppkit.indexing.minilm import NumpyMiniLM
from ppkit.indexing.static import StaticEmbedder, distill_table, post_process, table_path

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "quick", "ratio", "cash", "debt", "revenue", "##s", "of"]
HIDDEN, HEADS, LAYERS, FFN, POSITIONS = 8, 2, 2, 16, 32


def _write_safetensors(path, arrays: dict[str, np.ndarray]) -> None:
    header, blobs, at = {}, [], 0
    for name, a in arrays.items():
        raw = np.ascontiguousarray(a, dtype=np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    head = json.dumps(header).encode()
    path.write_bytes(len(head).to_bytes(8, "little") + head + b"".join(blobs))


@pytest.fixture
def tiny_bert(tmp_path):
    """A 2-layer, 8-wide BERT with seeded random weights and a 12-piece WordPiece tokenizer."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    tok = Tokenizer(models.WordPiece({t: i for i, t in enumerate(VOCAB)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]",
                                                       special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tok.save(str(tmp_path / "tokenizer.json"))
    (tmp_path / "config.json").write_text(json.dumps(
        {"num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "layer_norm_eps": 1e-12}))
    rng = np.random.default_rng(7)
    w = {"embeddings.word_embeddings.weight": rng.normal(size=(len(VOCAB), HIDDEN)),
         "embeddings.position_embeddings.weight": rng.normal(size=(POSITIONS, HIDDEN)),
         "embeddings.token_type_embeddings.weight": rng.normal(size=(2, HIDDEN)),
         "embeddings.LayerNorm.weight": np.ones(HIDDEN), "embeddings.LayerNorm.bias": np.zeros(HIDDEN)}
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        shapes = {"attention.self.query": (HIDDEN, HIDDEN), "attention.self.key": (HIDDEN, HIDDEN),
                  "attention.self.value": (HIDDEN, HIDDEN), "attention.output.dense": (HIDDEN, HIDDEN),
                  "intermediate.dense": (FFN, HIDDEN), "output.dense": (HIDDEN, FFN)}
        for name, shape in shapes.items():
            w[p + name + ".weight"] = rng.normal(size=shape) / np.sqrt(shape[1])
            w[p + name + ".bias"] = rng.normal(size=shape[0]) * 0.1
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[p + ln + ".weight"], w[p + ln + ".bias"] = np.ones(HIDDEN), np.zeros(HIDDEN)
    _write_safetensors(tmp_path / "model.safetensors", w)
    return tmp_path


def test_a_row_is_minilm_of_the_token_alone(tiny_bert):
    model = NumpyMiniLM(tiny_bert)
    table = distill_table(model, np.arange(len(VOCAB)), cls=2, sep=3, batch_size=5)  # 3 batches: 5 + 5 + 2
    assert table.shape == (len(VOCAB), HIDDEN)
    for word in ("the", "quick", "ratio", "revenue"):  # one word piece each: embed(word) reads [CLS] word [SEP]
        assert model.token_ids(word) == [2, VOCAB.index(word), 3]
        np.testing.assert_allclose(table[VOCAB.index(word)], model.embed(word), rtol=0, atol=1e-6)
    again = distill_table(NumpyMiniLM(tiny_bert), np.arange(len(VOCAB)), cls=2, sep=3, batch_size=5)
    assert again.tobytes() == table.tobytes()  # deterministic, bit for bit


def test_post_process_is_pca_then_sif_by_rank():
    # three points on a line through (1, 1): one principal axis, sign fixed positive
    raw = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    out = post_process(raw, dims=1, sif=0.5)
    p = np.array([1 / 2, 1 / 3, 1 / 4]) / (1 / 2 + 1 / 3 + 1 / 4)
    proj = np.array([-np.sqrt(2), 0.0, np.sqrt(2)])  # centred coordinates along (1, 1) / sqrt(2)
    np.testing.assert_allclose(out[:, 0], proj * 0.5 / (0.5 + p), atol=1e-6)
    assert post_process(-raw, dims=1, sif=0.5).tobytes() != out.tobytes()  # the data's sign, not the SVD's
    np.testing.assert_allclose(post_process(-raw, dims=1, sif=0.5)[:, 0], -proj * 0.5 / (0.5 + p), atol=1e-6)


def test_static_embedder_builds_once_and_averages_pieces(tiny_bert, tmp_path, monkeypatch):
    monkeypatch.setenv("PPKIT_CACHE_DIR", str(tmp_path / "cache"))
    e = StaticEmbedder(dims=4, model_dir=tiny_bert)
    v = e.embed_query("The quick ratios")  # pieces: the, quick, ratio, ##s
    path = table_path(tiny_bert, 4)
    assert path.is_file() and path.parent == tmp_path / "cache" / "static"
    table = np.load(path)
    want = table[[4, 5, 6, 10]].mean(0)
    np.testing.assert_allclose(v, want / np.linalg.norm(want), atol=1e-6)
    docs = e.embed_documents(["The quick ratios", "", "cash of debt"])
    np.testing.assert_allclose(docs[0], v, atol=1e-7)
    assert docs[1].tolist() == [0.0] * 4  # no pieces: the zero vector, not NaN
    path.write_bytes(path.read_bytes())  # a second embedder reads the cached table, bit for bit
    assert StaticEmbedder(dims=4, model_dir=tiny_bert).embed_query("The quick ratios").tobytes() == v.tobytes()
    assert table_path(tiny_bert, 3) != path  # the dims are in the key


def test_an_index_records_the_static_embedder_and_refuses_another(tiny_bert, tmp_path, monkeypatch):
    from ppkit.indexing.build import build_index
    from ppkit.indexing.index import load_index

    monkeypatch.setenv("PPKIT_CACHE_DIR", str(tmp_path / "cache"))
    doc = tmp_path / "a.md"
    doc.write_text("# A\n\n## Liquidity\n\nCash and the quick ratio.\n\n## Debt\n\nThe debt of the revenue.\n",
                   encoding="utf-8")
    static = StaticEmbedder(dims=4, model_dir=tiny_bert)
    build_index([doc], tmp_path / "ix", embedder=static)
    manifest = json.loads((tmp_path / "ix" / "manifest.json").read_text())
    assert manifest["embedder"] == {"name": "static:all-MiniLM-L6-v2-distilled@4", "dim": 4, "kind": "static",
                                    "kwargs": {"dims": 4}}
    assert load_index(tmp_path / "ix", embedder=static).embedder is static
    with pytest.raises(EmbedderMismatch, match="built with 'static:all-MiniLM-L6-v2-distilled@4'"):
        load_index(tmp_path / "ix", embedder=get_embedder("hash", dim=4))
    assert isinstance(get_embedder("static", dims=16), StaticEmbedder)
