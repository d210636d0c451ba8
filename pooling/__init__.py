"""Runs, queries, passages and labels in one DuckDB file; pools and their holes.

This package owns the database schema and knows nothing about LLMs or statistics. Its modules
import DuckDB and PyArrow only inside functions, so importing it stays cheap.
"""
