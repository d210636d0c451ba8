"""`judgepool demo`: the re-chunking story end to end on the bundled collection, offline.

Every step runs the real `judgepool` command it prints (in this process), so the demo is also a
transcript a newcomer can replay by hand: build a database from data/, evaluate the v1 runs, be
refused when comparing dense-v1 with the re-chunked dense-v2, fill the holes with the offline
judge (or --model), compare again, check the judge against the labels we hid from it, and end
with the command that opens the dashboard on the same database.
"""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path

import click

from judgepool.api.store import Store
from judgepool.defaults import Level
from judgepool.errors import JudgepoolError, UsageError
from judgepool.host import naming
from judgepool.reports.sentences import p_value

DEMO_DB = "judgepool-demo.duckdb"
DEMO_RUNS = ("bm25-v1", "dense-v1", "bm25-v2", "dense-v2")
BASELINE, CANDIDATE = "dense-v1", "dense-v2"
LEVEL: Level = "doc"
STEPS = 8


def default_data_dir() -> Path:
    """data/ of the checkout this package runs from (installed editable, as README says)."""
    return Path(__file__).parents[3] / "data"


def _check_data(data: Path) -> None:
    needed = [
        "topics.tsv",
        "chunks-v1.jsonl",
        "chunks-v2.jsonl",
        "qrels-doc.v1-pool.txt",
        "qrels-doc.v2-only.txt",
        *(f"runs/{run}.trec" for run in DEMO_RUNS),
    ]
    missing = [name for name in needed if not (data / name).is_file()]
    if missing:
        raise UsageError(
            f"the demo collection is incomplete in {data}: missing {', '.join(missing)}",
            "run the demo from a checkout of judgepool (pip install -e .), or pass --data DIR",
        )


def _fresh(db: Path) -> None:
    """Remove a previous demo database; refuse to touch any other database."""
    if not db.exists():
        return
    from judgepool.api.demo import run_names

    found = run_names(Store(db))
    if not found <= set(DEMO_RUNS):
        raise UsageError(
            f"{db} exists and is not a demo database (runs: {', '.join(sorted(found))})",
            "choose another --db for the demo",
        )
    for path in (db, Path(f"{db}.wal")):
        path.unlink(missing_ok=True)


def _shown(path: Path) -> str:
    """A path as short as it can be printed (relative to the working folder when inside it)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


class _Demo:
    """Runs and prints the steps, numbering them."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.step = 0

    def header(self, title: str) -> None:
        self.step += 1
        click.secho(f"\n[{self.step}/{STEPS}] {title}", bold=True)

    def run(self, *args: str | Path, show: bool = True) -> JudgepoolError | None:
        """Run `judgepool --db DB ARGS` as a user would; return the error it ended with."""
        from judgepool.ui.reporting import report_error

        root = click.get_current_context().find_root().command  # the `judgepool` group
        words = [_shown(a) if isinstance(a, Path) else a for a in args]
        argv = ["--db", _shown(self.db), *words]
        if show:
            click.secho(f"$ judgepool {shlex.join(argv)}", fg="cyan")
        try:
            root.main(args=argv, prog_name="judgepool", standalone_mode=False)
        except JudgepoolError as err:
            report_error(err, to_stderr=False)  # part of the transcript, in order
            return err
        return None


def _judge_args(db: Path, model: str, progress: bool | None) -> list[str]:
    """The refusal's own `judgepool judge ...` command, with the model filled in."""
    from judgepool.metrics.gate import judge_command
    from judgepool.reports.command_line import command_line

    argv = shlex.split(command_line(judge_command(Store(db), 10, [CANDIDATE], LEVEL)))
    flag = [] if progress is None else ["--progress" if progress else "--no-progress"]
    return [*argv[3:], "--model", model, *flag]  # without `judgepool --db DB`


def _agreement_report(db: Path, data: Path, labeller: str) -> None:
    from judgepool.api.demo import hidden_agreement

    found = hidden_agreement(Store(db), data / "qrels-doc.v2-only.txt", LEVEL, labeller)
    a = found.agreement
    click.echo(
        f"{found.compared} of the {found.judged} holes the judge labelled are pairs we had "
        f"labelled by reading and hid from it (data/qrels-doc.v2-only.txt):"
    )
    if not a.pairs:
        return
    click.echo(
        f"  exact agreement {a.exact:.3f}; Cohen's kappa 4-level {_num(a.kappa)}, "
        f"binary (grade >= 2) {_num(a.kappa_binary)}, quadratic-weighted {_num(a.kappa_quadratic)}"
    )
    click.echo(
        f"  the judge said >= 2 where we said < 2: {a.lenient} pairs; "
        f"< 2 where we said >= 2: {a.strict} pairs"
    )
    click.echo("  confusion (rows: our grade, columns: the judge's grade 0 1 2 3):")
    for grade, row in enumerate(a.confusion):
        click.echo(f"    {grade}: " + " ".join(f"{n:4d}" for n in row))


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _truth_report(db: Path, data: Path) -> None:
    from judgepool.api.demo import comparison_with_hidden_labels

    cmp = comparison_with_hidden_labels(
        Store(db), data / "qrels-doc.v2-only.txt", BASELINE, CANDIDATE, LEVEL
    )
    click.echo("the same comparison with our hidden labels in place of the judge's:")
    for d in cmp.deltas:
        ci = "–" if d.ci95 is None else f"[{d.ci95[0]:+.3f}, {d.ci95[1]:+.3f}]"
        verdict = "significant" if d.significant else "not significant"
        p = p_value(d.p_holm, cmp.evaluation.resamples, d.p, cmp.alpha)
        click.echo(f"  {d.measure}: {d.delta:+.3f} {ci}, p(Holm) {p}, {verdict}")


@click.command("demo")
@click.option(
    "--db",
    "demo_db",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help=f"The demo database to build (replaced if it is a demo database) [default: ./{DEMO_DB}].",
)
@click.option(
    "--model",
    default="offline",
    show_default=True,
    help="The judge that fills the holes (any `judgepool judge --model`).",
)
@click.option(
    "--data",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="The demo collection [default: data/ of this checkout].",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show the judge's progress: a bar on a terminal, a line every 5 s in a log.",
)
@click.pass_context
def demo(
    ctx: click.Context, demo_db: Path | None, model: str, data: Path | None, progress: bool | None
) -> None:
    """The re-chunking story end to end on the bundled collection (offline, about a minute).

    A RAG team re-chunks its corpus: the new chunking's runs reach documents nobody labelled.
    The demo builds a database from data/, is refused when comparing the runs, fills the holes
    with a judge, compares fairly, and checks the judge against labels it never saw.
    """
    started = time.perf_counter()
    parent_db = ctx.parent.params.get("db") if ctx.parent else None
    db = Path(demo_db or parent_db or DEMO_DB)
    data = data or default_data_dir()
    _check_data(data)
    _fresh(db)
    # The judge's cache lives beside the demo database: the demo reads nothing but data/.
    os.environ["JUDGEPOOL_CACHE_DIR"] = str(Path(f"{db}.cache").resolve())
    show = _Demo(db)

    show.header("Build a fresh database from data/ (Python Reference sections, two chunkings)")
    ingests: list[tuple[str | Path, ...]] = [
        ("ingest", "queries", data / "topics.tsv"),
        ("ingest", "docs", data / "chunks-v1.jsonl", data / "chunks-v2.jsonl"),
        ("ingest", "run", *(data / "runs" / f"{run}.trec" for run in DEMO_RUNS)),
        ("ingest", "qrels", data / "qrels-doc.v1-pool.txt", "--level", "doc"),
    ]
    for args in ingests:
        _fail_on(show.run(*args))

    show.header("Evaluate the v1 runs at the document level (our labels cover their pool)")
    _fail_on(show.run("eval", "--run", "bm25-v1", "--run", "dense-v1", "--level", LEVEL))

    show.header(f"Re-chunked: compare {BASELINE} with {CANDIDATE} (the v2 chunking)")
    refused = show.run("compare", BASELINE, CANDIDATE, "--level", LEVEL)
    if refused is None:
        raise UsageError("the demo expected the comparison to be refused; the data changed?")
    click.echo(
        f"-> refused (exit code {refused.exit_code}): {CANDIDATE} reaches documents nobody "
        "labelled; counting them as non-relevant would bias the comparison"
    )

    show.header(f"Fill the holes: the refusal's own command, with --model {model}")
    _fail_on(show.run(*_judge_args(db, model, progress)))
    _check_stored(db, _labeller(db))

    show.header("Compare again: paired differences with 95% intervals and the Holm verdict")
    _fail_on(show.run("compare", BASELINE, CANDIDATE, "--level", LEVEL))

    show.header("Check the judge against the labels we hid from it")
    _agreement_report(db, data, _labeller(db))
    _truth_report(db, data)

    show.header("Audit a seeded sample of queries (our hidden labels stand in for a person's)")
    _fail_on(show.run("audit", "sample", "--queries", "12", "--seed", "1", "--level", LEVEL))
    audit = _audit_file(db, data)
    click.echo(
        "our hand-written hidden labels of the sampled queries' judged pairs act as the "
        "human audit here (in real use a person grades them on the Audit page):"
    )
    _fail_on(show.run("ingest", "qrels", audit, "--level", LEVEL, "--labeller", "demo-audit"))
    _fail_on(show.run("compare", BASELINE, CANDIDATE, "--level", LEVEL))
    click.echo(
        "-> plain: trusts the judge; judge-corrected: checked against the audited "
        "queries. robust = the audit confirms the plain interval; judge-biased = the judge's "
        "errors moved the figure; too small to tell = the audit cannot confirm it yet"
    )

    show.header("Explore it in the dashboard (Runs, Compare, Audit, Export)")
    click.echo(f"$ judgepool --db {shlex.quote(_shown(db))} ui")
    click.echo(f"\ndemo finished in {time.perf_counter() - started:.0f} s")


def _audit_file(db: Path, data: Path) -> Path:
    """Our hidden labels of the audit sample's judge-labelled pairs, as a qrels file beside the
    database (the demo's stand-in for a person's audit)."""
    from judgepool.api.audit import pairs

    listed = pairs(Store(db), level=LEVEL, everything=True)
    wanted = {(p.qid, p.doc_id) for p in listed}
    lines = [
        line
        for line in (data / "qrels-doc.v2-only.txt").read_text().splitlines()
        if len(cols := line.split()) == 4 and (cols[0], cols[2]) in wanted
    ]
    path = Path(f"{db}.audit-qrels.txt")
    with naming(path):
        path.write_text("".join(f"{line}\n" for line in lines))
    return path


def _labeller(db: Path) -> str:
    """The judge that filled the holes (the latest judge labeller at the doc level)."""
    from judgepool.api.demo import newest_judge

    found = newest_judge(Store(db), LEVEL)
    if found is None:
        raise UsageError("the judge wrote no label", "see the judge's messages above")
    return found


def _check_stored(db: Path, labeller: str) -> None:
    """Stop, loudly, when the judge printed a count of labels the database does not hold (a
    paid answer lost would make every figure after it wrong without a word)."""
    from judgepool.api.demo import printed_and_stored
    from judgepool.errors import DatabaseError

    found = printed_and_stored(Store(db), LEVEL, labeller)
    if found.printed != found.stored:
        raise DatabaseError(
            f"the judge {labeller} reported {found.printed} pairs labelled ok, but the database "
            f"{db} holds {found.stored} of its ok labels: labels were lost between the two",
            "this is a bug: please report it with the output above; running the demo again "
            "takes the answers already paid for from the judge cache",
        )
    click.echo(f"-> checked: the database holds the {found.stored} labels the judge reported")


def _fail_on(err: JudgepoolError | None) -> None:
    if err is not None:
        raise SystemExit(err.exit_code)
