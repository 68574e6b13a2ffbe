"""ppkit.llm."""
