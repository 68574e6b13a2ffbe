"""ppkit.indexing."""
