"""ppkit.retrieval."""
