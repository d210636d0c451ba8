"""`jp.open(path)`: one judgepool database, and everything a notebook or a script does with it.

    import judgepool as jp
    db = jp.open("eval.duckdb")              # the file is created by the first ingest
    db.ingest_queries("topics.tsv"); db.ingest_docs("passages.jsonl")
    db.ingest_qrels("qrels.txt"); db.ingest_run("bm25.trec"); db.ingest_run("splade.trec")
    db.pool(depth=10).summary                # polars: judged@10 and holes per run
    db.judge("offline", depth=10)            # fill the holes (any litellm model string works)
    db.submit_batch("openai/gpt-4o-mini")    # ... or at half price within 24 h
    db.compare("bm25", ["splade"]).deltas    # polars: paired differences, CIs, Holm p
    db.compare("bm25", "splade", fail_on="regression").failed_rules   # a CI gate
    db.set_floors({"nR@10": 0.75}); db.check_floors("splade").ok     # floors that only rise

The command line and the dashboard call these same functions. Reads and writes are short (see
pooling/store/connection.py): a notebook may keep `db` open while `judgepool judge` writes
from a shell.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Unpack

from judgepool.api.batch_results import BatchCollection, BatchSubmission, batch_frame
from judgepool.api.frames import Source
from judgepool.api.names import names_of
from judgepool.api.options import (
    BATCH_POLL,
    BatchKeywords,
    CalibrateKeywords,
    JudgeKeywords,
    PromptKeywords,
    judge_options,
)
from judgepool.api.results import Comparison, Evaluation, JudgeReport, Pool
from judgepool.api.store import Store
from judgepool.api.threads import off_loop
from judgepool.defaults import (
    AVERAGE,
    CALIBRATION_SAMPLE,
    DEPTH,
    DESIGN,
    DRAW_SEED,
    GATE,
    JUDGE_MODEL,
    KEY_REL,
    LEVEL,
    REL,
    RESAMPLES,
    SEED,
    Average,
    By,
    Design,
    K,
    Level,
)
from judgepool.metrics.spec import CompareSpec, EvalSpec
from judgepool.pooling.pool import PoolSpec

if TYPE_CHECKING:
    import polars as pl

    from judgepool.api.audit import AuditSample, AuditStatus
    from judgepool.api.calibrate import CalibrationReport
    from judgepool.api.ci_results import FloorCheck
    from judgepool.api.export import ExportFormat, ExportSource
    from judgepool.api.floors import FloorChange
    from judgepool.api.ingest import QrelsIngested, RunIngested, TextsIngested
    from judgepool.api.inventory import Activity
    from judgepool.api.judges import JudgesAgreement, RankingsByJudge
    from judgepool.api.lift import Lifted, LiftRule
    from judgepool.api.prompt import RenderedPrompt
    from judgepool.api.report import ReportFiles
    from judgepool.metrics.measures import Measure
    from judgepool.metrics.regression import Rule


class Database:
    """A judgepool database file (see `judgepool.open`): every verb of the command line as a
    method that calls the verb's service function."""

    def __init__(self, path: Source | None = None) -> None:
        self.store = Store(path)

    @property
    def path(self) -> Path:
        """Where the database file is (or will be, before the first ingest)."""
        return self.store.path

    def __repr__(self) -> str:
        return f"judgepool.open({str(self.path)!r})"

    # -- ingest ---------------------------------------------------------------------------

    def ingest_queries(
        self,
        src: Source | pl.DataFrame,
        *,
        format: str | None = None,
        groups: Source | None = None,
    ) -> TextsIngested:
        """Queries from a TSV `qid<TAB>text` or JSONL file, or a DataFrame with columns qid and
        text (README: Formats), with their groups from a `group` column/key (a DataFrame's
        `group` column holds a list of names or one name) or from `groups`, a `qid<TAB>group`
        file (README: Query groups)."""
        from judgepool.api.ingest import ingest_queries

        return ingest_queries(self.store, src, format=format, groups=groups)

    def query_groups(self) -> pl.DataFrame:
        """Every query-group membership: qid, group."""
        from judgepool.api.inventory import query_groups

        return query_groups(self.store)

    def ingest_docs(
        self, src: Source | pl.DataFrame, *, format: str | None = None
    ) -> TextsIngested:
        """Passages or chunks from JSONL or TSV, or a DataFrame with columns doc_id, text and
        optionally title and parent_id."""
        from judgepool.api.ingest import ingest_docs

        return ingest_docs(self.store, src, format=format)

    def ingest_qrels(
        self,
        src: Source | pl.DataFrame,
        *,
        labeller: str | None = None,
        level: Level = LEVEL,
        format: str | None = None,
    ) -> QrelsIngested:
        """Human labels from a TREC qrels or JSONL file (`labeller` defaults to the file's
        name), or a DataFrame with columns qid, doc_id and grade (then `labeller` is needed)."""
        from judgepool.api.ingest import ingest_qrels

        return ingest_qrels(self.store, src, labeller=labeller, level=level, format=format)

    def ingest_run(
        self, src: Source | pl.DataFrame, *, name: str | None = None, format: str | None = None
    ) -> RunIngested:
        """A run from a TREC, JSONL or Parquet file (named by its tag, else its file name), or a
        DataFrame with columns qid, doc_id and score (then `name` is needed). A run ingested
        again under its name replaces it."""
        from judgepool.api.ingest import ingest_run

        return ingest_run(self.store, src, name=name, format=format)

    # -- what is there ----------------------------------------------------------------------

    def runs(self) -> pl.DataFrame:
        """Every run: name, rows, queries, format, source_file, ingested_at."""
        from judgepool.api.inventory import runs, runs_frame

        return runs_frame(runs(self.store))

    def queries(self) -> pl.DataFrame:
        """Every query (from a topics file, a run or a label): qid, text (null: no topics file
        gave one), runs, human_labels, judge_labels."""
        from judgepool.api.inventory import queries, queries_frame

        return queries_frame(queries(self.store))

    def status(self) -> dict[str, Any]:
        """Counts of queries, docs, runs and labels (by level, source, labeller and status),
        as `judgepool status --format json` prints them."""
        from judgepool.api.inventory import status

        return status(self.store)

    def labels(
        self,
        *,
        level: Level = LEVEL,
        source: str | None = None,
        labeller: str | None = None,
        status: str | None = None,
        effective: bool = False,
    ) -> pl.DataFrame:
        """Labels at `level` with their provenance, oldest first; `effective=True` keeps the one
        label per pair that the measures use (`labeller` then names the judge whose labels
        count, as `--judge` does)."""
        from judgepool.api.inventory import labels

        return labels(
            self.store,
            level=level,
            source=source,
            labeller=labeller,
            status=status,
            effective=effective,
        )

    def lift_labels(
        self, *, to: Literal["doc"] = "doc", rule: LiftRule = "max", labeller: str | None = None
    ) -> Lifted:
        """Write doc-level labels from the effective chunk-level labels (a document is as
        relevant as its best labelled chunk), with their provenance, as `judgepool labels
        lift` does."""
        from judgepool.api.lift import lift_labels

        return lift_labels(self.store, to=to, rule=rule, labeller=labeller)

    def activity(self) -> Activity:
        """Who is writing labels now: live judges (from their claims), open batches, and the
        age of the newest judge label. While `.writing`, every figure read is provisional."""
        from judgepool.api.inventory import activity

        return activity(self.store)

    def export_qrels(
        self,
        path: Source,
        *,
        level: Level = LEVEL,
        source: ExportSource = "effective",
        labeller: str | None = None,
        format: ExportFormat = "trec",
    ) -> Path:
        """Write labels as TREC qrels or JSONL (the bytes `judgepool export qrels` writes), never
        over the database, a DuckDB file or anything but a regular file; an export of nothing is
        refused."""
        from judgepool.api.export import export_qrels

        return export_qrels(
            self.store, path, level=level, source=source, labeller=labeller, format=format
        ).path

    # -- pool and judge ---------------------------------------------------------------------

    def pool(
        self,
        runs: str | Sequence[str] | None = None,
        *,
        depth: int = DEPTH,
        level: Level = LEVEL,
        labeller: str | None = None,
        all_queries: bool = False,
    ) -> Pool:
        """The pool of `runs` (default: all) at `depth`: judged@depth and holes per run."""
        from judgepool.api.pool import pool

        spec = PoolSpec(
            depth=depth,
            runs=tuple(names_of(runs)),
            level=level,
            labeller=labeller,
            all_queries=all_queries,
        )
        return pool(self.store, spec)

    def judge(
        self,
        model: str | None = JUDGE_MODEL,
        *,
        progress: bool = False,
        **options: Unpack[JudgeKeywords],
    ) -> JudgeReport:
        """Label the holes of the pool with a judge (`offline`, or any litellm model string);
        resumable and cached by content, exactly as `judgepool judge` (the same service,
        api/judge.py). `progress`: a bar on stderr.

        `options` are `judgepool judge`'s, as keywords (api/options.py's JudgeKeywords): the pool
        (depth, runs, level, labeller, all_queries), the requests (api_base, temperature,
        max_tokens, reasoning_effort, template, passage_tokens, query_tokens, max_chunks), the
        caps (max_cost, max_calls), the loop (concurrency, timeout, retries), canaries (per
        query, 0: none; canary_threshold ...), several judges (models=(...), api_bases, combine,
        num_samples); the report's `canaries`, `fooled` and `run` say how they did. A judge that
        cannot run (no key, no quota, an unknown model) raises; holes that failed or a cap that
        stopped the run are in the report's `problem` (the error the CLI exits with), never
        silent.

        Works inside a running event loop (Jupyter): the labelling then runs on a thread of its
        own and this call waits for it. In async code, `await db.ajudge(...)` does not block.
        """
        from judgepool.api.judge import JudgeProgress, judge

        spec = judge_options("judge", JudgeKeywords, options, model)
        report = off_loop(lambda: judge(self.store, spec, progress=JudgeProgress(progress)))
        if report.fatal is not None:
            raise report.fatal
        return report

    async def ajudge(
        self,
        model: str | None = JUDGE_MODEL,
        *,
        progress: bool = False,
        **options: Unpack[JudgeKeywords],
    ) -> JudgeReport:
        """`judge` for async code: the labelling runs on a worker thread, the loop stays free."""
        import asyncio

        return await asyncio.to_thread(lambda: self.judge(model, progress=progress, **options))

    def render_prompt(
        self,
        qid: str,
        doc_id: str,
        level: Level = LEVEL,
        *,
        model: str | None = None,
        **options: Unpack[PromptKeywords],
    ) -> RenderedPrompt:
        """The exact prompt a judge sends for (qid, doc_id): its messages after normalisation,
        truncation and fencing, and with `model` the cache key and the request body litellm
        sends (`judgepool prompt render`; api/prompt.py). `options` as for `judge`: template,
        runs, passage_tokens, max_chunks, query_tokens, temperature, max_tokens,
        reasoning_effort. No call is made."""
        from judgepool.api.prompt import render

        spec = judge_options("prompt", PromptKeywords, options, model, level=level)
        return render(self.store, qid, doc_id, spec)

    # -- measures ---------------------------------------------------------------------------

    def evaluate(
        self,
        runs: str | Sequence[str] | None = None,
        *,
        measures: Sequence[str | Measure] | None = None,
        level: Level = LEVEL,
        k: int = K,
        rel: int = REL,
        key_rel: int = KEY_REL,
        labeller: str | None = None,
        average: Average = AVERAGE,
        resamples: int = RESAMPLES,
        seed: int = SEED,
        by: By | None = None,
    ) -> Evaluation:
        """Measures (any ir-measures string; default nDCG@k, R(rel=key_rel)@k, nR(rel=rel)@k,
        Judged@k) of `runs` (default: all) with 95% bootstrap intervals over the evaluation set.
        `average="trec_eval"` averages every query, those with no doc at a measure's threshold
        counting 0, as `trec_eval -c` does; `by="group"` adds each query group's figures
        (`.groups`)."""
        from judgepool.api.evaluate import evaluate

        spec = EvalSpec(
            level=level,
            labeller=labeller,
            k=k,
            rel=rel,
            key_rel=key_rel,
            measures=tuple(measures or ()),
            resamples=resamples,
            seed=seed,
            average=average,
        )
        return evaluate(self.store, names_of(runs), spec, by=by)

    def compare(
        self,
        baseline: str,
        candidates: str | Sequence[str],
        *,
        measures: Sequence[str | Measure] | None = None,
        level: Level = LEVEL,
        k: int = K,
        rel: int = REL,
        key_rel: int = KEY_REL,
        labeller: str | None = None,
        average: Average = AVERAGE,
        gate: float = GATE,
        force: bool = False,
        resamples: int = RESAMPLES,
        seed: int = SEED,
        fail_on: str | Rule | Sequence[str | Rule] | None = None,
        by: By | None = None,
    ) -> Comparison:
        """Paired differences of `candidates` from `baseline` with 95% intervals, randomisation
        p-values and Holm's correction. Raises `GateRefusedError` (the CLI's exit code 3) when a
        compared run's judged@k is under `gate`, unless `force` (then marked unreliable).

        `fail_on`: CI rules, as `--fail-on` takes them ("regression", "regression=nDCG@10",
        "any-change"): the result's `failed_rules`, `exit_code` and `raise_for_rules()` say
        what they found. `by="group"`: the differences per query group (`.groups`). The
        result's `to_markdown()` and `to_html()` are the CLI's reports."""
        from judgepool.api.compare import compare

        spec = CompareSpec(
            level=level,
            labeller=labeller,
            k=k,
            rel=rel,
            key_rel=key_rel,
            measures=tuple(measures or ()),
            resamples=resamples,
            seed=seed,
            average=average,
            gate=gate,
            force=force,
        )
        return compare(self.store, baseline, names_of(candidates), spec, fail_on=fail_on, by=by)

    def report(
        self,
        baseline: str,
        candidates: str | Sequence[str],
        *,
        html: Source | None = None,
        markdown: Source | None = None,
        measures: Sequence[str | Measure] | None = None,
        level: Level = LEVEL,
        k: int = K,
        rel: int = REL,
        key_rel: int = KEY_REL,
        labeller: str | None = None,
        average: Average = AVERAGE,
        gate: float = GATE,
        force: bool = False,
        resamples: int = RESAMPLES,
        seed: int = SEED,
        fail_on: str | Rule | Sequence[str | Rule] | None = None,
        by: By | None = None,
    ) -> ReportFiles:
        """The comparison `compare` computes, written as a self-contained HTML file (`html`)
        and/or a markdown file (`markdown`), atomically and never over the database, as
        `judgepool report` does. The files are written whatever the verdict (a refusal by the
        gate included): the result's `.comparison` says it (`exit_code`, `raise_for_rules()`)."""
        from judgepool.api.report import write_report

        spec = CompareSpec(
            level=level,
            labeller=labeller,
            k=k,
            rel=rel,
            key_rel=key_rel,
            measures=tuple(measures or ()),
            resamples=resamples,
            seed=seed,
            average=average,
            gate=gate,
            force=force,
        )
        return write_report(
            self.store,
            baseline,
            names_of(candidates),
            spec,
            html=html,
            markdown=markdown,
            fail_on=fail_on,
            by=by,
        )

    def rank_by_judge(
        self,
        runs: str | Sequence[str] | None = None,
        *,
        judges: Sequence[str] | None = None,
        measure: str | Measure | None = None,
        baseline: str | None = None,
        level: Level = LEVEL,
        k: int = K,
        gate: float = GATE,
        resamples: int = RESAMPLES,
        seed: int = SEED,
    ) -> RankingsByJudge:
        """The runs (default: all) ranked by `measure` (default nDCG@k) under each of `judges`
        (default: every judge at `level`; human labels always count), Kendall's tau between the
        judges' rankings, and with a `baseline` each run's difference from it under each judge,
        as `judgepool judges rank` does."""
        from judgepool.api.judges import rank_by_judge

        return rank_by_judge(
            self.store,
            names_of(runs),
            judges=judges,
            level=level,
            k=k,
            measure=measure,
            baseline=baseline,
            resamples=resamples,
            seed=seed,
            gate=gate,
        )

    def judges_agreement(
        self, *, judges: Sequence[str] | None = None, level: Level = LEVEL
    ) -> JudgesAgreement:
        """Agreement of `judges` (default: every judge at `level`) on the pairs they both
        labelled: Cohen's kappa for every two, Krippendorff's alpha over all."""
        from judgepool.api.judges import judges_agreement

        return judges_agreement(self.store, level=level, judges=judges)

    # -- batches ----------------------------------------------------------------------------

    def submit_batch(
        self,
        model: str | None = None,
        *,
        dry_run: bool = False,
        wait: bool = False,
        poll: float = BATCH_POLL,
        progress: bool = False,
        **options: Unpack[BatchKeywords],
    ) -> BatchSubmission:
        """Send the holes of the pool to `model`'s batch API (about half the online price,
        answered within 24 h), as `judgepool judge --batch`: the same requests and cache keys
        as `judge`; pairs in the cache are labelled at once, pairs an open batch or a running
        judge holds are left to it. Returns what was sent (`dry_run=True`: what would be, with
        batch and online prices, and nothing sent or written). With `wait=True` it waits for
        the batches and collects them (`.collection`).

        `options` are the judge options that apply to a batch (api/options.py's BatchKeywords):
        depth, runs, level, labeller, all_queries, api_base, temperature, max_tokens,
        reasoning_effort, template, passage_tokens, query_tokens, max_chunks, max_cost,
        max_calls. A provider with no batch API here (anthropic, bedrock, the offline judge)
        raises `JudgeError` / `UsageError` saying to call `judge` instead.
        """
        from judgepool.api.batch import BatchProgress, submit

        spec = judge_options("batch", BatchKeywords, options, model)
        shown = BatchProgress(progress)
        return off_loop(
            lambda: submit(self.store, spec, dry_run=dry_run, wait=wait, poll=poll, progress=shown)
        )

    def batches(self, *, refresh: bool = True, api_base: str | None = None) -> pl.DataFrame:
        """Every batch of this database, oldest first: batch_id, local_id, status, model,
        labeller, requests, completed, failed, pairs, created_at, due, collected_at,
        last_error. `refresh` asks the provider about the open ones first (needs the key)."""
        from judgepool.api.batch import status

        return batch_frame(off_loop(lambda: status(self.store, api_base=api_base, refresh=refresh)))

    def collect_batches(
        self,
        *,
        wait: bool = False,
        retry_failed: bool = False,
        poll: float = BATCH_POLL,
        api_base: str | None = None,
        progress: bool = False,
        max_cost: float | None = None,
        max_calls: int | None = None,
    ) -> BatchCollection:
        """Write the labels of every finished batch, as `judgepool judge --batch-collect`: a
        second call writes nothing; batches still running are left (`.open`, with when they
        are due), or waited for with `wait=True`. `retry_failed` sends the pairs that failed
        (error, expired, unparsed) again as new batches (`max_cost` / `max_calls` cap them).
        Pairs that failed are in `.problem` (never silently 0)."""
        from judgepool.api.batch import collect
        from judgepool.api.progress import Progress

        return off_loop(
            lambda: collect(
                self.store,
                api_base=api_base,
                retry_failed=retry_failed,
                wait=wait,
                poll=poll,
                max_cost=max_cost,
                max_calls=max_calls,
                progress=Progress(progress),
            )
        )

    def cancel_batch(self, batch_id: str, *, api_base: str | None = None) -> pl.DataFrame:
        """Ask the provider to stop a batch (its id, or judgepool's local id); what it answered
        first is collected by `collect_batches`. Returns its row (empty when it had never been
        created and was dropped: its pairs are holes again)."""
        from judgepool.api.batch import cancel

        row = off_loop(lambda: cancel(self.store, batch_id, api_base=api_base))
        return batch_frame([row] if row is not None else [])

    # -- the trust loop -----------------------------------------------------------------------

    def calibrate(
        self,
        model: str | None = JUDGE_MODEL,
        *,
        sample: int = CALIBRATION_SAMPLE,
        seed: int = DRAW_SEED,
        dry_run: bool = False,
        progress: bool = False,
        **options: Unpack[CalibrateKeywords],
    ) -> CalibrationReport:
        """Re-judge a seeded sample of pooled human-labelled pairs (stratified by human grade)
        as `judgepool calibrate` does, store the figures, and return them (a dry run forecasts
        calls and cost). `options` (api/options.py's CalibrateKeywords): depth and level of the
        pool, then as for `judge`: api_base, template, concurrency, timeout, max_cost,
        max_calls ..., and canaries (per query, 0: none), canary_threshold (the report's
        `canaries` and `fooled` say how the judge did on them)."""
        from judgepool.api.calibrate import calibrate
        from judgepool.api.progress import Progress

        spec = judge_options("calibration", CalibrateKeywords, options, model)
        return calibrate(
            self.store,
            spec,
            sample=sample,
            seed=seed,
            dry_run=dry_run,
            progress=Progress(progress),
        )

    def audit_sample(
        self,
        queries: int,
        *,
        seed: int = DRAW_SEED,
        depth: int = DEPTH,
        runs: str | Sequence[str] | None = None,
        level: Level = LEVEL,
        labeller: str | None = None,
        replace: bool = False,
        design: Design = DESIGN,
    ) -> AuditSample:
        """Draw `queries` queries from the evaluation set for a person to audit (recorded; the
        same seed with more queries extends the sample): `design="uniform"` at random, or
        `"weighted"` with probability rising with the judge's uncertainty (api/audit.py)."""
        from judgepool.api.audit import sample

        chosen = names_of(runs)
        return sample(
            self.store,
            queries,
            seed=seed,
            depth=depth,
            runs=chosen,
            level=level,
            labeller=labeller,
            replace=replace,
            design=design,
        ).sample

    def audit_pairs(self, *, level: Level = LEVEL, everything: bool = False) -> pl.DataFrame:
        """What a person must label for the audit sample: qid, doc_id, query, passage,
        human_grade (every pair of the sample with `everything`, else those left)."""
        from judgepool.api.audit import pairs, pairs_frame

        return pairs_frame(pairs(self.store, level=level, everything=everything))

    def audit_status(self, *, level: Level = LEVEL) -> AuditStatus:
        """Queries fully audited and pairs labelled / left for the audit sample in use."""
        from judgepool.api.audit import status

        return status(self.store, level=level)

    # -- floors -------------------------------------------------------------------------------

    def set_floors(
        self,
        floors: dict[str, float | None] | Sequence[str],
        *,
        level: Level = LEVEL,
        from_run: str | None = None,
        lower: bool = False,
        by: str | None = None,
        note: str | None = None,
        labeller: str | None = None,
        k: int = K,
        gate: float = GATE,
        force: bool = False,
    ) -> list[FloorChange]:
        """Record floors under measures' means: `{"nR@10": 0.75}`, or `["nR@10=0.75",
        "R(rel=3)@10"]` where a measure without a value takes `from_run`'s current mean (refused
        while that run is under `gate`, unless `force`). A floor only rises: lowering one raises
        `UsageError` (nothing written) unless `lower`."""
        from judgepool.api.floors import set_floors

        return set_floors(
            self.store,
            floors,
            level=level,
            from_run=from_run,
            lower=lower,
            by=by,
            note=note,
            labeller=labeller,
            k=k,
            gate=gate,
            force=force,
        )

    def floors(self, *, level: Level | None = None, history: bool = False) -> pl.DataFrame:
        """The floors in force (every setting ever made with `history`), with who and when."""
        from judgepool.api.ci_results import floors_frame
        from judgepool.api.floors import floors

        return floors_frame(floors(self.store, level=level, history=history))

    def check_floors(
        self,
        run: str,
        *,
        level: Level = LEVEL,
        lower_bound: bool = False,
        labeller: str | None = None,
        k: int = K,
        gate: float = GATE,
        force: bool = False,
        resamples: int = RESAMPLES,
        seed: int = SEED,
    ) -> FloorCheck:
        """`run` against every floor of `level`: its mean (or its 95% interval's lower end with
        `lower_bound`); `.ok`, `.broken`, `.table`, `.exit_code` and `raise_for_floors()`."""
        from judgepool.api.floors import check_floors

        return check_floors(
            self.store,
            run,
            level=level,
            lower_bound=lower_bound,
            labeller=labeller,
            k=k,
            gate=gate,
            force=force,
            resamples=resamples,
            seed=seed,
        )


def open(path: Source | None = None) -> Database:
    """The judgepool database at `path` (default: $JUDGEPOOL_DB, else ./judgepool.duckdb).

    Nothing is created until the first ingest, and nothing is kept open between calls.
    """
    return Database(path)
