"""Judging through the providers' batch APIs (about half the online price, answers within 24 h).

    support.py   which litellm providers can run a batch here, their limits, batch prices
    requests.py  holes' JudgeRequests -> JSONL request lines (same body and cache key as online)
    provider.py  the files/batches client over litellm (upload, create, retrieve, download ...)
    parse.py     output and error files -> one counted outcome per custom_id
    settings.py  what a batch keeps of the run that sent it; the judge and client made from it
    submit.py    plan a batch run: holes, cache hits, claimed pairs, lines, files, prices, caps
    send.py      upload, create and record; adopt or redo what a killed process left halfway
    collect.py   finished batches -> cache entries and labels, in one transaction per batch
    wait.py      --wait: poll open batches, telling the caller's WaitSink
    session.py   the entry points the services of api/batch.py call (dry_run, submit,
                 status, collect, cancel)

The database side (batch records, their pairs, claims) is pooling/store/batches.py.
"""
