"""Figures and per-question views of benchmark results."""
