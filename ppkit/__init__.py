"""ppkit: Proxy-Pointer RAG, a retrieval toolkit that knows where every chunk lives.

    tree = ppkit.build_tree(path)
    index = ppkit.build_index(paths)
    hits = index.retrieve(question, k=5)
    answer = index.ask(question)
"""

from .chunking import Chunk, chunk_tree
from .config import Config
from .embed import Embedder, HashEmbedder, LocalEmbedder, get_embedder
from .index import Index, build_index, load_index, reference_index
from .noise import NoiseDecision, RuleNoiseFilter
from .retrieve import Candidate, Retrieval, Section, retrieve
from .rerank import StructuralReranker
from .synth import Answer, ExtractiveSynthesizer, ask
from .tree import Node, Tree, build_tree, parse_markdown

__version__ = "0.1.0"

__all__ = [
    "Answer", "Candidate", "Chunk", "Config", "Embedder", "ExtractiveSynthesizer", "HashEmbedder", "Index",
    "LocalEmbedder", "Node", "NoiseDecision", "Retrieval", "RuleNoiseFilter", "Section", "StructuralReranker",
    "Tree", "ask", "build_index", "build_tree", "chunk_tree", "get_embedder", "load_index", "parse_markdown",
    "reference_index", "retrieve",
]
