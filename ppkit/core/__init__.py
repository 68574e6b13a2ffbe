"""ppkit.core."""
