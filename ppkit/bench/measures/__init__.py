"""Metrics and judges: retrieval metrics, the strict numeric judge, cross-company contamination."""
