"""Indexing functions (placeholder)."""
