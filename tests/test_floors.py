"""`judgepool floors set | list | check`: floors with who and when, floors that refuse to drop,
floors taken from a run's mean, and every exit code of `floors check` (0, 2, 3, 5).

Two queries labelled by hand, nR@10 (grade >= 2 relevant, two relevant docs per query):
run `good` finds both on q1 and one on q2 (nR 1.0 and 0.5: mean 0.75); `weak` one on q1 and
none on q2 (0.5, 0.0: mean 0.25); `holey` ranks docs nobody labelled (under the gate).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import judgepool as jp
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.floors import current_floors, floor_history
from tests.conftest import CliResult
from tests.fixtures_databases import Prebuilt

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]
QRELS = "q1 0 a 2\nq1 0 b 2\nq1 0 c 0\nq2 0 d 2\nq2 0 e 3\nq2 0 f 0\n"
RUNS = {
    "good": "q1 Q0 a 1 3 good\nq1 Q0 b 2 2 good\nq2 Q0 d 1 3 good\nq2 Q0 f 2 2 good\n",
    "weak": "q1 Q0 a 1 3 weak\nq1 Q0 c 2 2 weak\nq2 Q0 f 1 3 weak\n",
    "holey": "q1 Q0 x 1 3 holey\nq1 Q0 y 2 2 holey\nq2 Q0 z 1 3 holey\n",
}


@pytest.fixture
def db(cli: Cli, write: Writer, prebuilt: Prebuilt) -> None:
    def build() -> None:
        assert cli("ingest", "qrels", write("qrels.txt", QRELS)).code == 0
        for name, text in RUNS.items():
            assert cli("ingest", "run", write(f"{name}.trec", text)).code == 0

    prebuilt(build)


def _values() -> dict[str, float]:
    return {f.measure: f.value for f in current_floors(Store(), "chunk")}


def test_floors_are_recorded_with_who_and_when(db: None, cli: Cli) -> None:
    done = cli("floors", "set", "nR@10=0.75", "R(rel=3)@10=0.5", "--by", "ci-bot", "--note", "v1")
    assert done.code == 0, done.err
    assert "floor nR@10 at the chunk level: 0.75 [new]" in done.out
    assert _values() == {"R(rel=3)@10": 0.5, "nR@10": 0.75}
    (floor,) = [f for f in floor_history(Store()) if f.measure == "nR@10"]
    assert (floor.set_by, floor.note) == ("ci-bot", "v1")
    assert (floor.from_run, floor.lowered) == (None, False)
    assert len(floor.set_at) == 19  # YYYY-MM-DD HH:MM:SS, UTC
    listed = cli("floors", "list")
    assert "nR@10" in listed.out and "ci-bot" in listed.out


def test_a_floor_refuses_to_drop_unless_lower_is_given(db: None, cli: Cli) -> None:
    assert cli("floors", "set", "nR@10=0.75", "nDCG@10=0.5").code == 0
    done = cli("floors", "set", "nR@10=0.7", "nDCG@10=0.9")
    assert done.code == 2
    assert "refusing to lower a floor at the chunk level: nR@10 is 0.75" in done.err
    assert "0.7 would lower it; nothing was changed" in done.err and "--lower" in done.err
    assert _values() == {"nDCG@10": 0.5, "nR@10": 0.75}  # the raise of nDCG@10 is not kept
    assert len(floor_history(Store())) == 2
    assert cli("floors", "set", "nR@10=0.75").out.strip().endswith("[unchanged, was 0.75]")
    assert len(floor_history(Store())) == 2  # an equal value writes nothing
    lowered = cli("floors", "set", "nR@10=0.7", "--lower")
    assert lowered.code == 0 and "[lowered, was 0.75]" in lowered.out
    history = [f for f in floor_history(Store()) if f.measure == "nR@10"]
    assert [(f.value, f.lowered) for f in history] == [(0.75, False), (0.7, True)]
    assert "lowered" in cli("floors", "list", "--history").out


def test_a_floor_from_the_current_system(db: None, cli: Cli) -> None:
    done = cli("floors", "set", "--from", "good", "nR@10", "R(rel=3)@10=0.25")
    assert done.code == 0, done.err
    assert _values() == {"R(rel=3)@10": 0.25, "nR@10": 0.75}
    froms = {f.measure: f.from_run for f in current_floors(Store())}
    assert froms == {"R(rel=3)@10": None, "nR@10": "good"}
    # The spelling, --run, is the same option; weak's mean (0.25) would lower it.
    done = cli("floors", "set", "--run", "weak", "nR@10")
    assert done.code == 2 and "would lower it" in done.err
    assert cli("floors", "set", "nR@10").code == 2  # no value and no run to take it from
    refused = cli("floors", "set", "--from", "holey", "nR@10")
    assert refused.code == 3 and "under the judged@10 gate" in refused.err


def test_floors_check_exit_codes(db: None, cli: Cli) -> None:
    assert cli("floors", "check", "good").code == 2  # no floor yet: nothing passes silently
    assert cli("floors", "set", "nR@10=0.75").code == 0
    ok = cli("floors", "check", "good")
    assert ok.code == 0, ok.err  # 0.75 is not under 0.75
    assert "nR@10" in ok.out and "ok" in ok.out
    under = cli("floors", "check", "weak")
    assert under.code == 5
    assert "weak is under 1 floor at the chunk level (its mean): nR@10 0.2500 < floor 0.75" in (
        under.err
    )
    assert "UNDER" in under.out
    # --lower-bound: good's interval over its two queries is [0.5, 1.0]; 0.5 < 0.75.
    strict = cli("floors", "check", "good", "--lower-bound", "--format", "json")
    assert strict.code == 5
    report = json.loads(strict.out)
    assert report["floors"][0]["compared"] == 0.5 and report["floors"][0]["mean"] == 0.75
    assert report["exit_code"] == 5 and report["lower_bound"] is True
    gate = cli("floors", "check", "holey")
    assert gate.code == 3 and "comparison refused" in gate.err and gate.out == ""
    forced = cli("floors", "check", "holey", "--force")
    assert forced.code == 3 and "UNRELIABLE" in forced.out and "UNRELIABLE" in forced.err


def test_a_floor_on_any_measure_the_evaluation_computes(db: None, cli: Cli) -> None:
    assert cli("floors", "set", "RR@10=0.9").code == 0
    # RR@10 (rel >= 1): weak finds a relevant doc at rank 1 on q1, none on q2: mean 0.5.
    done = cli("floors", "check", "weak", "--format", "json")
    assert done.code == 5
    assert json.loads(done.out)["floors"][0]["mean"] == pytest.approx(0.5)
    assert cli("floors", "set", "nDCG@=1").code == 2  # not a measure


def test_the_library_sets_and_checks_floors(db: None) -> None:
    database = jp.open()
    changes = database.set_floors({"nR@10": 0.5}, by="notebook")
    assert [(c.measure, c.change) for c in changes] == [("nR@10", "new")]
    with pytest.raises(jp.errors.UsageError, match="refusing to lower"):
        database.set_floors(["nR@10=0.25"])
    database.set_floors(["nR@10"], from_run="good")
    assert database.floors()["value"].to_list() == [0.75]
    assert database.floors(history=True).height == 2
    good, weak = database.check_floors("good"), database.check_floors("weak")
    assert good.ok and good.exit_code == 0 and weak.broken == ["nR@10"]
    assert weak.table["mean"].to_list() == [0.25]
    with pytest.raises(jp.errors.UnderFloorError) as caught:
        weak.raise_for_floors()
    assert caught.value.exit_code == 5


def test_a_database_of_an_older_schema_gains_the_tables(tmp_path: Path) -> None:
    """Migrations query_groups and floors apply to a database written before them."""
    import duckdb

    from judgepool.pooling.store.connection import utcnow
    from judgepool.pooling.store.schema import MIGRATIONS, SCHEMA_VERSION

    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE schema_migrations (version INTEGER NOT NULL, name VARCHAR NOT NULL, "
        "applied_at TIMESTAMP NOT NULL)"
    )
    first = min(m.version for m in MIGRATIONS if m.name in ("query_groups", "floors"))
    for migration in MIGRATIONS:
        if migration.version < first:  # what a database had before them
            con.execute(migration.sql)
            con.execute(
                "INSERT INTO schema_migrations VALUES (?, ?, ?)",
                [migration.version, migration.name, utcnow()],
            )
    con.close()
    database = jp.open(path)
    assert database.floors().height == 0 and database.query_groups().height == 0
    assert Store(path).schema_version() == SCHEMA_VERSION
    database.set_floors({"nDCG@10": 0.5})
    assert database.floors()["measure"].to_list() == ["nDCG@10"]


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("nDCG@10=1.5", "would fail every run"),
        ("nDCG@10=-0.5", "would never fail"),
        ("R(rel=3)@10=1.01", "would fail every run"),
        ("P@5=2", "would fail every run"),
        ("AP=-0.1", "would never fail"),
        ("nR@10=1.5", "would fail every run"),
    ],
)
def test_a_floor_outside_the_measures_range_is_refused(
    db: None, cli: Cli, spec: str, said: str
) -> None:
    """Issue 22.5: a floor above the range fails every run for ever, one below never fails."""
    done = cli("floors", "set", spec)
    assert done.code == 2, done.out
    assert "outside the values it can take ([0, 1])" in done.err and said in done.err
    assert "give a value in [0, 1]" in done.err and "--from RUN" in done.err
    assert current_floors(Store()) == []


def test_a_floor_must_be_a_finite_number_in_range(db: None, cli: Cli) -> None:
    for spec in ("nDCG@10=nan", "nDCG@10=inf", "NumRet=-1"):
        done = cli("floors", "set", spec)
        assert done.code == 2, spec
    assert "not a finite number" in cli("floors", "set", "P@5=nan").err
    assert "(0 or more)" in cli("floors", "set", "NumRet=-1").err  # a count has no upper end
    # The ends of the range are floors a run can meet (1.0: only a perfect ranking passes).
    assert cli("floors", "set", "nDCG@10=1", "P@5=0", "NumRet=5").code == 0
    assert _values() == {"nDCG@10": 1.0, "P@5": 0.0, "NumRet": 5.0}
    database = jp.open()
    with pytest.raises(jp.errors.UsageError, match=r"outside the values it can take") as caught:
        database.set_floors({"MAP": 1.01})
    assert caught.value.hint is not None
    assert 'db.set_floors(["AP"], from_run=RUN)' in caught.value.hint
    assert _values() == {"nDCG@10": 1.0, "P@5": 0.0, "NumRet": 5.0}  # nothing was changed
