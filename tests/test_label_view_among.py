"""The label rule restricted to some pairs (`label_view_sql(among=...)`) gives those pairs the
labels the whole rule gives them: evaluation reads the top k's grades that way.

Mixed labels on one pair (a person, a jury, two judges, a failed call, old and new) are where a
restriction applied in the wrong place would change the winner.
"""

from __future__ import annotations

import random
from datetime import datetime

import pytest

from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import label_view_sql

LABELLERS = [
    ("human", "qrels"),
    ("judge", "gpt"),
    ("judge", "claude"),
    ("judge", "jury(gpt,claude)"),
]


def _fill(store: Store, rng: random.Random) -> None:
    with store.write(create=True) as con:
        for q in range(6):
            for d in range(8):
                for _ in range(rng.randint(0, 4)):
                    source, labeller = rng.choice(LABELLERS)
                    status = rng.choice(["ok", "ok", "ok", "error"])
                    grade = rng.randint(0, 3) if status == "ok" else None
                    con.execute(
                        "INSERT INTO judgments (qid, doc_id, level, grade, source, labeller, "
                        "status, created_at) VALUES (?, ?, 'chunk', ?, ?, ?, ?, ?)",
                        [f"q{q}", f"d{d}", grade, source, labeller, status, datetime(2026, 1, 1)],
                    )


@pytest.mark.parametrize("view", ["effective", "judge"])
@pytest.mark.parametrize("labeller", [None, "gpt"])
def test_the_rule_restricted_to_pairs_agrees_with_the_whole_rule(
    view: str, labeller: str | None
) -> None:
    store = Store()
    rng = random.Random(3)
    _fill(store, rng)
    chosen = [(f"q{rng.randrange(6)}", f"d{rng.randrange(8)}") for _ in range(20)]
    with store.read() as con:
        con.execute("CREATE TEMP TABLE picked (qid VARCHAR, doc_id VARCHAR)")
        con.executemany("INSERT INTO picked VALUES (?, ?)", chosen)
        whole = con.execute(
            f"SELECT w.* FROM ({label_view_sql(view, 'chunk', labeller)}) w "
            "SEMI JOIN picked p ON p.qid = w.qid AND p.doc_id = w.doc_id ORDER BY ALL"
        ).fetchall()
        among = con.execute(
            f"SELECT * FROM ({label_view_sql(view, 'chunk', labeller, among='picked')}) "
            "ORDER BY ALL"
        ).fetchall()
    assert whole  # the draw hits labelled pairs
    assert among == whole
