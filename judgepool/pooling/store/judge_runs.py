"""The record of judge runs: one row per labeller per `judge` (or `calibrate`) run, and its canary
check, so that every report that uses a labeller's labels can say when that judge was fooled.

A run of one judge writes one row (role `judge`); a jury run writes one per member (`member`)
and one for the jury (`jury`), under one `session` token. A row keeps what the run was told
(`settings`), what it did (`outcome`: pairs by outcome, calls, cost) and its canary figures:
planted pairs of true grade 0 (judge/canaries.py), how many got a grade, and per kind the share
graded >= 2. `fooled` is set when some kind's share is above the run's threshold.

**Which check counts** for a labeller: the latest row of that labeller whose canaries got at
least one grade (a run with `--no-canaries`, or whose canaries all failed, neither clears nor
sets the mark). A labeller names a judge (model and prompt), so the check of one run speaks for
every label that judge wrote; labels are linked to it by labeller, at any level.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from judgepool.pooling.store.connection import Store, utcnow
from judgepool.pooling.store.judgments import check_level, effective_labels_sql, quote

ROLES: tuple[str, ...] = ("judge", "member", "jury")
COMMANDS: tuple[str, ...] = ("judge", "calibrate")


@dataclass(frozen=True)
class KindRate:
    """One kind of canary in one run: pairs planted, pairs graded, graded >= 2, their share."""

    kind: str
    pairs: int
    graded: int
    fooled: int

    @property
    def rate(self) -> float | None:
        """Share of the graded canaries graded >= 2 (None: none was graded)."""
        return self.fooled / self.graded if self.graded else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The rate's 95 % Wilson interval (None: none was graded)."""
        from judgepool.stats.proportion import wilson_interval

        return wilson_interval(self.fooled, self.graded) if self.graded else None

    def above(self, threshold: float) -> bool:
        """Fooled beyond doubt: the interval's lower end is above `threshold`."""
        interval = self.interval
        return interval is not None and interval[0] > threshold

    def undecided(self, threshold: float) -> bool:
        """The rate is above `threshold` but its interval reaches below it: too few to tell."""
        return self.rate is not None and self.rate > threshold and not self.above(threshold)


@dataclass(frozen=True)
class JudgeRunRow:
    """One labeller's part in one run (see the module docstring)."""

    session: str
    command: str
    labeller: str
    role: str
    level: str
    started_at: datetime
    finished_at: datetime | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    outcome: dict[str, Any] = field(default_factory=dict)
    kinds: tuple[KindRate, ...] = ()
    canary_threshold: float | None = None
    id: int | None = None

    @property
    def canaries(self) -> int:
        return sum(k.pairs for k in self.kinds)

    @property
    def canaries_graded(self) -> int:
        return sum(k.graded for k in self.kinds)

    @property
    def fooled(self) -> bool:
        """Some kind's share graded >= 2 is above the threshold beyond doubt: the lower end of
        its 95 % Wilson interval is (a rate above it on too few canaries is `undecided`)."""
        if self.canary_threshold is None:
            return False
        return any(k.above(self.canary_threshold) for k in self.kinds)

    @property
    def undecided(self) -> bool:
        """Not fooled, but some kind's rate is above the threshold on too few canaries to tell."""
        threshold = self.canary_threshold
        return (
            threshold is not None
            and not self.fooled
            and any(k.undecided(threshold) for k in self.kinds)
        )

    def rates(self) -> dict[str, float | None]:
        return {k.kind: k.rate for k in self.kinds}


def record_judge_run(store: Store, row: JudgeRunRow) -> int:
    """Append one row; returns its id."""
    check_level(row.level)
    if row.role not in ROLES or row.command not in COMMANDS:
        raise ValueError(f"judge run role {row.role!r} / command {row.command!r} is unknown")
    kinds = {
        k.kind: {"pairs": k.pairs, "graded": k.graded, "fooled": k.fooled, "rate": k.rate}
        for k in row.kinds
    }
    with store.write() as con:
        found = con.execute(
            "INSERT INTO judge_runs (session, command, labeller, role, level, started_at, "
            "finished_at, settings, outcome, canaries, canaries_graded, canary_threshold, "
            "canary_rates, fooled) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            [
                row.session,
                row.command,
                row.labeller,
                row.role,
                row.level,
                row.started_at,
                row.finished_at or utcnow(),
                json.dumps(row.settings, sort_keys=True, default=str),
                json.dumps(row.outcome, sort_keys=True, default=str),
                row.canaries,
                row.canaries_graded,
                row.canary_threshold,
                json.dumps(kinds, sort_keys=True) if row.kinds else None,
                row.fooled,
            ],
        ).fetchone()
    return int(found[0]) if found else 0


_SELECT = (
    "SELECT id, session, command, labeller, role, level, started_at, finished_at, settings, "
    "outcome, canary_threshold, canary_rates FROM judge_runs"
)


def _row(values: tuple[Any, ...]) -> JudgeRunRow:
    (
        id_,
        session,
        command,
        labeller,
        role,
        level,
        started,
        finished,
        settings,
        outcome,
        threshold,
        rates,
    ) = values
    kinds = (
        tuple(
            KindRate(kind, int(v["pairs"]), int(v["graded"]), int(v["fooled"]))
            for kind, v in sorted(json.loads(rates).items())
        )
        if rates
        else ()
    )
    return JudgeRunRow(
        session=str(session),
        command=str(command),
        labeller=str(labeller),
        role=str(role),
        level=str(level),
        started_at=started,
        finished_at=finished,
        settings=json.loads(settings) if settings else {},
        outcome=json.loads(outcome) if outcome else {},
        kinds=kinds,
        canary_threshold=None if threshold is None else float(threshold),
        id=int(id_),
    )


def judge_runs(
    store: Store, labeller: str | None = None, session: str | None = None
) -> list[JudgeRunRow]:
    """The recorded rows, oldest first (of one labeller, or of one run's session, when named)."""
    clauses = []
    if labeller is not None:
        clauses.append(f"labeller = {quote(labeller)}")
    if session is not None:
        clauses.append(f"session = {quote(session)}")
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    with store.read() as con:
        return [_row(r) for r in con.execute(f"{_SELECT}{where} ORDER BY id").fetchall()]


def canary_checks(store: Store, labellers: list[str] | None = None) -> dict[str, JudgeRunRow]:
    """labeller -> the check that counts for it (its latest row with a graded canary)."""
    who = ""
    if labellers is not None:
        if not labellers:
            return {}
        who = f" AND labeller IN ({', '.join(quote(x) for x in labellers)})"
    with store.read() as con:
        rows = con.execute(
            f"{_SELECT} WHERE id IN (SELECT max(id) FROM judge_runs WHERE canaries_graded > 0"
            f"{who} GROUP BY labeller) ORDER BY labeller"
        ).fetchall()
    return {str(r[3]): _row(r) for r in rows}


def effective_judges(store: Store, level: str, labeller: str | None = None) -> list[str]:
    """The judge labellers with at least one effective label at `level` (of `labeller` only when
    named): whose labels a report at that level uses."""
    with store.read() as con:
        rows = con.execute(
            f"SELECT DISTINCT labeller FROM ({effective_labels_sql(level, labeller)}) "
            "WHERE source = 'judge' ORDER BY labeller"
        ).fetchall()
    return [str(r[0]) for r in rows]


def fooled_judges(store: Store, level: str, labeller: str | None = None) -> list[JudgeRunRow]:
    """The canary checks that mark a report at `level`: of every judge whose labels it uses,
    the check that counts, when it was fooled."""
    if not store.exists():
        return []
    used = effective_judges(store, level, labeller)
    return [row for row in canary_checks(store, used).values() if row.fooled]
