"""ppkit.ui."""
