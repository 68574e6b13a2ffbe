"""ppkit: Proxy-Pointer RAG, a retrieval toolkit that knows where every chunk lives.

    tree = ppkit.build_tree(path)
    index = ppkit.build_index(paths)
    hits = index.retrieve(question, k=5)
    answer = index.ask(question)
"""

from .answer.synth import Answer, ExtractiveSynthesizer
from .core.config import Config
from .core.errors import PpkitError
from .documents.chunking import Chunk, chunk_tree
from .documents.noise import NoiseDecision, RuleNoiseFilter
from .documents.tree import Node, Tree, build_tree, parse_markdown
from .indexing.embed import Embedder, HashEmbedder, LocalEmbedder, get_embedder
from .pipeline import (
    AskOptions,
    Index,
    RetrieveOptions,
    ask,
    build_index,
    cached_index,
    compare,
    describe_documents,
    load_index,
    reference_index,
    remove_documents,
    retrieve,
    stream,
)
from .retrieval.rerank import StructuralReranker
from .retrieval.types import Candidate, Retrieval, Section

__version__ = "0.1.0"

__all__ = [
    "Answer", "AskOptions", "Candidate", "Chunk", "Config", "Embedder", "ExtractiveSynthesizer", "HashEmbedder", "Index",
    "LocalEmbedder", "Node", "NoiseDecision", "PpkitError", "Retrieval", "RetrieveOptions", "RuleNoiseFilter", "Section", "StructuralReranker",
    "Tree", "ask", "build_index", "build_tree", "chunk_tree", "get_embedder", "load_index", "parse_markdown",
    "reference_index", "cached_index", "remove_documents", "describe_documents", "compare", "retrieve", "stream",
]
