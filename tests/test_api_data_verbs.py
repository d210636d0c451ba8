"""The data verbs answer the same through `jp.Database` and through the `judgepool` command: both
call one service per verb (judgepool/api/), so the figures, files and counts are the same.

The collection is tests/judge_fixtures.py's, with two judges that disagree (as in
tests/test_judges_rank.py), so the level, judge and averaging options all change something.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import judgepool as jp
from judgepool.pooling.store.judgments import Judgment, write_judgments
from judgepool.ui.commands.judges import by_judge_json
from tests.conftest import CliResult
from tests.judge_fixtures import collection_copy
from tests.test_judges_rank import A_HOLES, B_HOLES

Cli = Callable[..., CliResult]


@pytest.fixture
def db(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> jp.Database:
    """The CLI's database ($JUDGEPOOL_DB) opened from Python: judge X grades run A's holes 3 and
    run B's 0, judge Y (written last: its labels count) the other way round."""
    store = collection_copy(tmp_path_factory, tmp_path / "test.duckdb")
    labels = [Judgment(q, d, 3, "judge", "judge-x") for q, d in A_HOLES]
    labels += [Judgment(q, d, 0, "judge", "judge-x") for q, d in B_HOLES]
    labels += [Judgment(q, d, 0, "judge", "judge-y") for q, d in A_HOLES]
    labels += [Judgment(q, d, 3, "judge", "judge-y") for q, d in B_HOLES]
    write_judgments(store, labels)
    return jp.open(store.path)


def _json(done: CliResult) -> object:
    assert done.code == 0, done.err
    return json.loads(done.out)


def test_evaluate_averages_as_trec_eval_in_both(db: jp.Database, cli: Cli) -> None:
    """Issue 21.7: `average="trec_eval"` is an option of the library as of the command."""
    args = ("eval", "--format", "json", "--resamples", "50")
    as_trec_eval = db.evaluate(average="trec_eval", resamples=50)
    assert as_trec_eval.to_json() == _json(cli(*args, "--average", "trec_eval"))
    defined = db.evaluate(resamples=50)
    assert defined.to_json() == _json(cli(*args))
    # R(rel=3)@10: only q1 has a grade-3 doc (judge Y's), so the two averages differ.
    assert as_trec_eval.result.n("R(rel=3)@10") == 3 and defined.result.n("R(rel=3)@10") == 1


def test_compare_and_options_in_both(db: jp.Database, cli: Cli) -> None:
    """Level, judge, measures and gate options reach the same comparison."""
    found = db.compare(
        "A", "B", labeller="judge-x", measures=["nDCG@10", "P@5"], force=True, resamples=200
    )
    options = ("--judge", "judge-x", "--measure", "nDCG@10", "--measure", "P@5", "--force")
    done = cli("compare", "A", "B", *options, "--resamples", "200", "--format", "json")
    assert found.to_json() == _json(done)
    assert found.deltas["measure"].to_list() == ["nDCG@10", "P@5"]


def test_report_files_are_the_same_bytes(db: jp.Database, cli: Cli, tmp_path: Path) -> None:
    written = db.report("A", "B", markdown=tmp_path / "lib.md", force=True, resamples=200)
    assert written.markdown == tmp_path / "lib.md" and written.html is None
    assert written.comparison.exit_code == 0  # forced past the gate, no rule: exit 0
    done = cli("report", "A", "B", "--markdown", tmp_path / "cli.md", "--force", "--resamples", 200)
    assert done.code == 0, done.err
    assert (tmp_path / "lib.md").read_bytes() == (tmp_path / "cli.md").read_bytes()
    with pytest.raises(jp.errors.UsageError, match="nothing to write"):
        db.report("A", "B")


def test_inventory_and_pool_in_both(db: jp.Database, cli: Cli) -> None:
    runs = _json(cli("runs", "--format", "json"))
    assert isinstance(runs, list)
    assert [(r["run"], r["rows"], r["queries"]) for r in runs] == db.runs().select(
        "name", "rows", "queries"
    ).rows()
    queries = _json(cli("queries", "--format", "json"))
    assert isinstance(queries, list)
    frame = db.queries()
    assert [(q["qid"], q["human_labels"], q["judge_labels"]) for q in queries] == frame.select(
        "qid", "human_labels", "judge_labels"
    ).rows()
    assert frame["judge_labels"].sum() == 2 * (len(A_HOLES) + len(B_HOLES))
    status = _json(cli("status", "--format", "json"))
    assert isinstance(status, dict)
    assert status.pop("db") == str(db.path) and status == db.status()
    holes = [
        json.loads(line) for line in cli("pool", "--list", "--format", "jsonl").out.splitlines()
    ]
    pool = db.pool(depth=10)
    assert [(h["qid"], h["doc_id"]) for h in holes] == pool.holes.select("qid", "doc_id").rows()
    assert [(h["qid"], h["doc_id"]) for h in holes] == [("q2", "c9")]  # no text: no judge label


def test_judges_and_lift_in_both(db: jp.Database, cli: Cli) -> None:
    ranked = db.rank_by_judge(["A", "B"], baseline="A", resamples=300)
    done = cli(
        "judges", "rank", "--run", "B", "--baseline", "A", "--resamples", 300, "--format", "json"
    )
    assert by_judge_json(ranked) == _json(done)
    assert not ranked.same_order
    agreement = db.judges_agreement()
    assert agreement.labellers == ("judge-x", "judge-y") and agreement.units == 7
    assert (
        f"2 judges, {agreement.units} pairs labelled by at least two"
        in cli("judges", "agreement").out
    )
    lifted = db.lift_labels(labeller="judge-x")
    line = cli("labels", "lift", "--to", "doc", "--judge", "judge-x").out
    assert line.startswith(f"lifted {lifted.from_chunks} chunk labels to {lifted.labels} doc-level")
    doc_labels = db.labels(level="doc", labeller="lift:max")
    assert doc_labels.height == lifted.labels  # lifting again replaced the first lift's labels
