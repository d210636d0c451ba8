"""Judging through the providers' batch APIs (about half the online price, answers within 24 h).

    support.py   which litellm providers can run a batch here, their limits, batch prices
    requests.py  holes' JudgeRequests -> JSONL request lines (same body and cache key as online)
    provider.py  the files/batches client over litellm (upload, create, retrieve, download ...)
    parse.py     output and error files -> one counted outcome per custom_id

Nothing here writes to the database: recording batches, claims and labels is the caller's.
"""
