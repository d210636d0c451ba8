"""Warnings an evaluation carries: a run that misses most of the evaluation set, and ids that
match the labels' only once normalised (see `pooling.idcheck`).

A run that returned nothing for a query scores 0 there, which is right for a run that found
nothing and wrong for a run whose ids are written differently ('q1101' against '1101'): the
numbers alone cannot tell the two apart, so every report says it when a run misses more than
half of the evaluation set, with a few of its query ids next to a few of the labels'.
"""

from __future__ import annotations

from collections.abc import Sequence

from judgepool.pooling.idcheck import SAMPLE, IdCheck, RunIdMatch


def _ids(ids: Sequence[str]) -> str:
    return ", ".join(ascii(i) for i in ids)


def _near(matches: Sequence[RunIdMatch], kind: str, run: str, k: int, limit: int) -> str:
    n = len(matches)
    count = f"{n} or more" if n >= limit else str(n)
    examples = "; ".join(
        (f"query {m.qid}: " if kind == "doc" else "")
        + f"{m.in_run!a} (run) ~ {m.in_labels!a} (labels), "
        + ("equal after Unicode NFC" if m.by_nfc else "equal once zero-width characters go")
        for m in matches[:SAMPLE]
    )
    ids = f"id{'s' * (n != 1)}"
    where = f"query {ids} of" if kind == "query" else f"doc {ids} in the top {k} of"
    verb = "matches" if n == 1 else "match"
    effect = "" if kind == "query" else "; they are counted as holes"
    return (
        f"{count} {where} run {run!r} {verb} the labels' only after Unicode NFC normalisation "
        f"or removing zero-width characters, e.g. {examples}{effect} — write the ids the same "
        "way in the run and the qrels (NFC, no zero-width characters) and ingest again"
    )


def id_warnings(
    check: IdCheck,
    runs: Sequence[str],
    qids: Sequence[str],
    missing: dict[str, Sequence[str]],
    k: int,
) -> tuple[str, ...]:
    """The warnings, in run order; `missing` maps a run to the evaluation-set queries it
    returned nothing for."""
    out = []
    n = len(qids)
    for run in runs:
        gone = missing.get(run, ())
        if 2 * len(gone) > n:
            count, theirs = check.run_only.get(run, (0, ()))
            head = (
                f"run {run!r} returned nothing for {len(gone)} of {n} evaluation-set queries "
                "(each scored 0)"
            )
            if count:
                out.append(
                    f"{head}: its query ids look like {_ids(theirs)}, the labels' like "
                    f"{_ids(list(gone)[:SAMPLE])} — check that the run and the qrels name "
                    "queries the same way, then ingest the run again"
                )
            else:
                out.append(
                    f"{head} and ranks no other query — check that it was run on these "
                    f"queries (the labels' ids look like {_ids(list(gone)[:SAMPLE])})"
                )
        for kind in ("query", "doc"):
            found = [m for m in check.near if m.run == run and m.kind == kind]
            if found:
                out.append(_near(found, kind, run, k, check.limit))
    return tuple(out)
