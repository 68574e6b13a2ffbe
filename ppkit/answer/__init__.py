"""ppkit.answer."""
