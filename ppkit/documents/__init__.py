"""ppkit.documents."""
