"""ppkit.compare: two documents section by section (alignment by function, no counterpart, differences, report)."""
