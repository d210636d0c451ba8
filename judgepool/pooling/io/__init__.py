"""Reading and writing files: formats, line-exact readers, ids and values, atomic writes.

No database here: the store (judgepool.pooling.store) and ingest sit above it."""
