"""Query groups in the database: replace a query's groups, read who is in which group.

A query may be in any number of groups (a query class, a language, a source); the table
`query_groups` holds one row per membership. Groups come with the queries (`ingest queries`
with `--groups FILE` or a group column, pooling/io/query_files.py): the queries a file gives groups
for get exactly those groups, replacing what they had, in the same transaction as their texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from judgepool.errors import InputError
from judgepool.pooling.store.connection import Store, utcnow
from judgepool.pooling.store.sql import registered

if TYPE_CHECKING:
    import duckdb

    from judgepool.pooling.io.query_files import Membership  # the readers: not for reading groups


@dataclass(frozen=True)
class GroupsWritten:
    """What one write of memberships did."""

    memberships: int
    groups: int
    queries: int


def check_known(
    con: duckdb.DuckDBPyConnection, path: Path, memberships: Sequence[Membership]
) -> None:
    """Refuse a membership of a query the database does not have (usually a mistyped id)."""
    import pyarrow as pa

    table = pa.table({"qid": [m.qid for m in memberships], "line": [m.line for m in memberships]})
    with registered(con, "_group_qids", table):
        found = con.execute(
            "SELECT g.qid, g.line FROM _group_qids g ANTI JOIN queries q USING (qid) "
            "ORDER BY g.line LIMIT 1"
        ).fetchall()
    if found:
        row = found[0]
        raise InputError(
            path,
            f"qid {row[0]!r} is not a query (neither in this call's queries nor in the database)",
            int(row[1]),
            hint="ingest its query first, or fix the id (as the queries file spells it)",
        )


def replace_groups(
    con: duckdb.DuckDBPyConnection,
    qids: Sequence[str],
    memberships: Sequence[Membership],
    source: str,
) -> GroupsWritten:
    """Inside a write transaction: `qids` lose their groups and get `memberships` instead;
    `source` is what the database records as where they came from."""
    import pyarrow as pa

    gone = pa.table({"qid": pa.array(list(dict.fromkeys(qids)), pa.string())})
    new = pa.table(
        {
            "qid": pa.array([m.qid for m in memberships], pa.string()),
            "group_name": pa.array([m.group for m in memberships], pa.string()),
        }
    )
    with registered(con, "_groups_gone", gone), registered(con, "_groups_new", new):
        con.execute("DELETE FROM query_groups WHERE qid IN (SELECT qid FROM _groups_gone)")
        con.execute(
            "INSERT INTO query_groups SELECT qid, group_name, $src, $now FROM _groups_new",
            {"src": source, "now": utcnow()},
        )
    return GroupsWritten(
        len(memberships),
        len({m.group for m in memberships}),
        len({m.qid for m in memberships}),
    )


def group_members(store: Store) -> dict[str, tuple[str, ...]]:
    """group -> its qids (sorted), for every group, groups in name order."""
    with store.read() as con:
        rows = con.execute(
            "SELECT group_name, list(qid ORDER BY qid) FROM query_groups "
            "GROUP BY group_name ORDER BY group_name"
        ).fetchall()
    return {str(name): tuple(str(q) for q in qids) for name, qids in rows}


def membership_rows(store: Store) -> list[tuple[str, str]]:
    """(qid, group) for every membership, by qid then group."""
    with store.read() as con:
        rows = con.execute(
            "SELECT qid, group_name FROM query_groups ORDER BY qid, group_name"
        ).fetchall()
    return [(str(q), str(g)) for q, g in rows]
