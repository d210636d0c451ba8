"""Runs, queries, passages and labels in one DuckDB file; pools and their holes.

This package owns the database schema and knows nothing about LLMs or statistics. Its modules
import DuckDB and PyArrow only inside functions, so importing it stays cheap.
"""

if __name__ != "judgepool.pooling":  # imported through the top-level link `pooling/`
    raise ImportError(
        f"the code lives in judgepool.pooling: write `import judgepool.pooling`, "
        f"not `import {__name__}` "
        "(the folder pooling/ at the repository's top is a link for reading, not a package)"
    )
