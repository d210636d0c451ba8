"""Floors under measures' means, in the database: set them (who, when), never lower one by accident.

A floor is the lowest mean a run may have on a measure at a level (`judgepool floors set
nR@10=0.75`); metrics/floors.py checks a run against them. Every setting is kept (the table is an
audit trail); the latest setting of a (level, measure) is its floor. A floor only rises: a value
under the current floor is refused, and nothing of the call is written, unless `lower=True`; the
setting is then marked `lowered`. A value equal to the floor changes nothing and writes nothing.

Measures are stored as the caller names them; metrics/floors.py hands in ir-measures' own
spelling (`R(rel=3)@10`), so one measure is one floor however it was typed.
"""

from __future__ import annotations

import getpass
import math
from collections.abc import Sequence
from dataclasses import dataclass

from judgepool.errors import Param, UsageError, remedy
from judgepool.pooling.store.connection import Store, utcnow
from judgepool.pooling.store.judgments import check_level

_COLUMNS = (
    "id, level, measure, value, from_run, lowered, set_by, "
    "strftime(set_at, '%Y-%m-%d %H:%M:%S'), note"
)


@dataclass(frozen=True)
class Floor:
    """One setting of a floor: `value` under `measure`'s mean at `level`, set by `set_by` at
    `set_at` (UTC); `from_run` is the run whose mean it was recorded from (None: given by hand)."""

    id: int
    level: str
    measure: str
    value: float
    from_run: str | None
    lowered: bool
    set_by: str
    set_at: str
    note: str | None


@dataclass(frozen=True)
class NewFloor:
    """A floor to set: a measure, its value, and the run it was taken from (None: by hand)."""

    measure: str
    value: float
    from_run: str | None = None


@dataclass(frozen=True)
class FloorChange:
    """What setting one floor did: `change` is new, raised, lowered or unchanged."""

    measure: str
    level: str
    value: float
    before: Floor | None
    change: str


def who() -> str:
    """The name a floor is recorded under when none is given: the login name."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name (a container without a passwd entry)
        return "unknown"


def _floor(row: tuple[object, ...]) -> Floor:
    fid, level, measure, value, from_run, lowered, set_by, set_at, note = row
    return Floor(
        int(str(fid)),
        str(level),
        str(measure),
        float(str(value)),
        None if from_run is None else str(from_run),
        bool(lowered),
        str(set_by),
        str(set_at),
        None if note is None else str(note),
    )


_LATEST = (
    f"SELECT {_COLUMNS} FROM floors WHERE id IN "
    "(SELECT max(id) FROM floors GROUP BY level, measure)"
)


def current_floors(store: Store, level: str | None = None) -> list[Floor]:
    """The floor of every (level, measure) that has one, by level then measure."""
    where = "" if level is None else " AND level = $level"
    params = {} if level is None else {"level": check_level(level)}
    with store.read() as con:
        rows = con.execute(f"{_LATEST}{where} ORDER BY level, measure", params).fetchall()
    return [_floor(tuple(r)) for r in rows]


def floor_history(store: Store, level: str | None = None) -> list[Floor]:
    """Every setting ever made, oldest first."""
    where = "" if level is None else " WHERE level = $level"
    params = {} if level is None else {"level": check_level(level)}
    with store.read() as con:
        rows = con.execute(f"SELECT {_COLUMNS} FROM floors{where} ORDER BY id", params).fetchall()
    return [_floor(tuple(r)) for r in rows]


def _check(new: Sequence[NewFloor]) -> None:
    if not new:
        raise UsageError("no floor to set", "give MEASURE=VALUE, e.g. nR@10=0.75")
    seen: set[str] = set()
    for f in new:
        if not f.measure:
            raise UsageError("a floor needs a measure", "give MEASURE=VALUE, e.g. nR@10=0.75")
        if not math.isfinite(f.value):
            raise UsageError(
                f"floor {f.measure}={f.value} is not a finite number", "give a number, e.g. 0.75"
            )
        if f.measure in seen:
            raise UsageError(f"{f.measure} is given twice", "give each measure's floor once")
        seen.add(f.measure)


def set_floors(
    store: Store,
    new: Sequence[NewFloor],
    level: str,
    *,
    lower: bool = False,
    by: str | None = None,
    note: str | None = None,
) -> list[FloorChange]:
    """Record floors at `level` in one transaction. A value under the current floor is refused
    (and nothing is written) unless `lower`."""
    level = check_level(level)
    _check(new)
    setter = by or who()
    changes: list[FloorChange] = []
    with store.write() as con:
        rows = con.execute(f"{_LATEST} AND level = $level", {"level": level}).fetchall()
        now = {f.measure: f for f in (_floor(tuple(r)) for r in rows)}
        lowering = [f for f in new if f.measure in now and f.value < now[f.measure].value]
        if lowering and not lower:
            said = "; ".join(
                f"{f.measure} is {now[f.measure].value:g} (set by {now[f.measure].set_by} on "
                f"{now[f.measure].set_at} UTC), {f.value:g} would lower it"
                for f in lowering
            )
            raise UsageError(
                f"refusing to lower a floor at the {level} level: {said}; nothing was changed",
                remedy(
                    "floors only rise; to lower one on purpose, pass {} (the setting is "
                    "recorded as lowered)",
                    Param("lower"),
                ),
            )
        for f in new:
            before = now.get(f.measure)
            if before is not None and f.value == before.value:
                changes.append(FloorChange(f.measure, level, f.value, before, "unchanged"))
                continue
            change = "new" if before is None else "raised" if f.value > before.value else "lowered"
            con.execute(
                "INSERT INTO floors (level, measure, value, from_run, lowered, set_by, set_at, "
                "note) VALUES ($level, $measure, $value, $run, $lowered, $by, $at, $note)",
                {
                    "level": level,
                    "measure": f.measure,
                    "value": f.value,
                    "run": f.from_run,
                    "lowered": change == "lowered",
                    "by": setter,
                    "at": utcnow(),
                    "note": note,
                },
            )
            changes.append(FloorChange(f.measure, level, f.value, before, change))
    return changes
