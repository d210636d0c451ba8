"""What `judgepool calibrate` and `judgepool audit` print of what their services report."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from judgepool.api.progress import cost_text, money
from judgepool.ui.format import echo_table, fmt_float, note

if TYPE_CHECKING:
    from judgepool.api.audit import AuditDraw, AuditStatus, ListedPair
    from judgepool.api.calibrate import CalibrationReport
    from judgepool.api.store import Store
    from judgepool.metrics.calibration import Figures

GRADES = (0, 1, 2, 3)


def _split(counts: list[int]) -> str:
    return " / ".join(f"{n:,}" for n in counts)


def _rows(sample: Figures, pool: Figures) -> list[tuple[str, str, str]]:
    def pair(a: float | None, b: float | None) -> tuple[str, str]:
        return fmt_float(a), fmt_float(b)

    rows = [
        ("pairs", f"{sample.pairs:.0f}", f"{pool.pairs:.0f}"),
        ("exact agreement", *pair(sample.exact, pool.exact)),
        ("Cohen's kappa (grades 0-3)", *pair(sample.kappa, pool.kappa)),
    ]
    for t in (1, 2, 3):
        rows.append(
            (
                f"Cohen's kappa (grade >= {t})",
                *pair(sample.kappa_at_least[t], pool.kappa_at_least[t]),
            )
        )
    rows += [
        ("quadratic-weighted kappa", *pair(sample.kappa_quadratic, pool.kappa_quadratic)),
        ("Krippendorff's alpha (ordinal)", *pair(sample.alpha_ordinal, pool.alpha_ordinal)),
        ("lenient: P(judge >= 2 | human < 2)", *pair(sample.lenient_rate, pool.lenient_rate)),
        ("strict: P(judge < 2 | human >= 2)", *pair(sample.strict_rate, pool.strict_rate)),
    ]
    rows += [
        (f"hit rate, human grade {g}", *pair(sample.hit_rate[g], pool.hit_rate[g])) for g in GRADES
    ]
    return rows


def print_calibration(report: CalibrationReport) -> None:
    """The sample, what it cost, the figures as sampled and re-weighted, the confusion."""
    prompt = f", prompt {report.prompt_hash[:19]}" if report.prompt_hash else ""
    click.echo(
        f"calibrate {report.labeller}{prompt}: {report.pairs} of "
        f"{sum(report.pool_counts):,} pooled human-labelled pairs at depth {report.depth} "
        f"({report.level} level), seed {report.seed}, stratified by human grade 0 / 1 / 2 / 3: "
        f"{_split(report.sample_counts)} (pool: {_split(report.pool_counts)})"
    )
    if report.excluded:
        note(f"note: {report.excluded} pooled human labels have a grade outside 0-3: left out")
    if report.forecast is not None:
        f = report.forecast
        cost = "unknown" if f.estimate.cost is None else f"${f.estimate.cost:.4f}"
        click.echo(
            f"dry run: {f.requests} pairs to re-judge, {f.cached_pairs} already in the cache, "
            f"{f.calls} calls, {f.no_text} without text; estimated cost {cost}"
        )
        if (c := report.canary_forecast) is not None:
            click.echo(
                f"canaries for {report.labeller}: {c.requests} pairs, {c.calls} calls "
                f"({c.cached_pairs} in the cache), estimated cost "
                f"{money(c.estimate.cost)}"
            )
        return
    unpriced = report.stats.unpriced_calls if report.stats is not None else 0
    click.echo(
        f"{report.calls} calls, {report.cached} pairs from the cache (cost nothing); "
        f"cost {cost_text(report.cost, unpriced)}"
    )
    failed = sum(report.failures.values())
    why = ", ".join(f"{k} {v}" for k, v in sorted(report.failures.items()))
    click.echo(
        f"parse failures and errors: {failed}"
        + (f" ({why})" if why else "")
        + (f"; not attempted: {report.not_attempted}" if report.not_attempted else "")
    )
    figures = report.figures
    if figures is None:
        click.echo("no pair was graded: no figure to report")
        _canaries(report)
        return
    echo_table(
        ("figure", "sample", "pool mix"), _rows(figures.sample, figures.population), right=(1, 2)
    )
    click.echo(
        "pool mix: each human grade's row re-weighted by (pool pairs of that grade) / (graded "
        "sample pairs of it), as if the whole pool had been re-judged"
    )
    if figures.missing_grades:
        listed = ", ".join(map(str, figures.missing_grades))
        click.echo(f"grades with no graded pair, left out of the pool mix: {listed}")
    click.echo("confusion, sample (rows: human grade, columns: the judge's grade 0 1 2 3):")
    for grade, row in enumerate(figures.sample.confusion):
        click.echo(f"  {grade}: " + " ".join(f"{n:5.0f}" for n in row))
    _canaries(report)
    if report.run_id is not None:
        click.echo(
            f"stored as calibration run #{report.run_id} (shown on the dashboard's Audit page)"
        )


def _canaries(report: CalibrationReport) -> None:
    """The canary check, printed as `judge` prints it."""
    from judgepool.ui.commands.judge_checks import print_canaries

    if report.check is not None:
        print_canaries(report.check)


def print_drawn(store: Store, drawn: AuditDraw, to_stderr: bool = False) -> None:
    """The sample drawn (or kept), and what it takes to audit it."""
    s = drawn.sample
    where = ", ".join(s.runs) if s.runs else "every run"
    who = s.labeller or "any judge"
    pairs, labelled = drawn.status.pairs, drawn.status.labelled
    if s.design == "weighted":
        drawn_pi = [s.frame[q][1] for q in s.qids if q in s.frame]
        low, high = min(drawn_pi, default=0.0), max(drawn_pi, default=0.0)
        chance = f"weighted design, inclusion probabilities {low:.3f} to {high:.3f}"
    else:
        chance = f"inclusion probability {s.inclusion_probability:.3f}"
    lines = [
        f"{drawn.note}: audit sample #{s.id} of {len(s.qids)} of {s.evaluation_set} queries "
        f"({chance}), seed {s.seed}, {s.level} level, listed by rank at depth {s.depth} in "
        f"{where}, {who}",
        "queries: " + " ".join(s.qids),
        f"to label: {pairs} judge-labelled pairs of theirs (every judge label their measures "
        f"read), {labelled} with a human label already, {pairs - labelled} left",
    ]
    for line in lines:
        click.echo(line, err=to_stderr)
    if not to_stderr:
        import shlex

        command = [
            "judgepool",
            "--db",
            str(store.path),
            "audit",
            "sample",
            "--list",
            "--format",
            "tsv",
            *([] if s.level == "chunk" else ["--level", s.level]),
        ]
        click.echo("list them with: " + shlex.join(command))


def _tsv(text: str | None) -> str:
    if text is None:
        return ""
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def print_listing(pairs: list[ListedPair], fmt: str) -> None:
    """The pairs a person must label, on stdout (the judge's grade is not shown)."""
    if fmt == "jsonl":
        for p in pairs:
            row = {
                "qid": p.qid,
                "doc_id": p.doc_id,
                "query": p.query,
                "passage": p.passage,
                "human_grade": p.human_grade,
            }
            click.echo(json.dumps(row))
    else:
        click.echo("qid\tdoc_id\tquery\tpassage\thuman_grade")
        for p in pairs:
            grade = "" if p.human_grade is None else str(p.human_grade)
            click.echo(f"{p.qid}\t{p.doc_id}\t{_tsv(p.query)}\t{_tsv(p.passage)}\t{grade}")
    note(
        f"{len(pairs)} pairs listed; give them back as TREC qrels (`qid 0 doc_id grade`, grades "
        "0-3) with: judgepool ingest qrels FILE --labeller NAME (add --level doc at the doc "
        "level), or label them in the dashboard's Audit queue"
    )


def print_status(status: AuditStatus) -> None:
    """Queries audited, pairs labelled and left, per query."""
    s = status.sample
    click.echo(
        f"audit sample #{s.id} ({s.level} level, seed {s.seed}, {len(s.qids)} of "
        f"{s.evaluation_set} queries): {status.audited} of {len(s.qids)} queries fully audited; "
        f"{status.labelled} of {status.pairs} pairs labelled, {status.pairs - status.labelled} "
        "left"
    )
    rows = [
        (q.qid, q.pairs, q.labelled, q.pairs - q.labelled, "yes" if q.audited else "no")
        for q in status.queries
    ]
    echo_table(("qid", "pairs", "labelled", "left", "audited"), rows, right=(1, 2, 3))
