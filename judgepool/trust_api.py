"""The trust calls of `jp.Database`: calibrate the judge on the user's labels, draw an audit
sample, list what a person must label, and see how far the audit is (judgepool/trust.py; the
same functions as `judgepool calibrate` and `judgepool audit sample | status`).

    db = jp.open("eval.duckdb")
    db.calibrate("openai/gpt-4o-mini", sample=200)   # kappas, confusion, leniency, canaries
    db.audit_sample(queries=15, seed=1)              # a recorded uniform draw of queries
    db.audit_pairs()                                 # polars: the pairs a person must label
    db.audit_status()                                # queries fully audited so far
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from judgepool.names import names_of
from judgepool.pooling.errors import UsageError

if TYPE_CHECKING:
    import polars as pl

    from judgepool.pooling.audit_queries import AuditSample
    from judgepool.pooling.store import Store
    from judgepool.trust import AuditStatus, CalibrationReport


class TrustMethods:
    """Mixed into `jp.Database` (which provides `store`)."""

    store: Store

    def calibrate(
        self,
        model: str | None = "offline",
        sample: int = 200,
        seed: int = 1,
        depth: int = 10,
        level: str = "chunk",
        *,
        dry_run: bool = False,
        progress: bool = False,
        **limits: Any,
    ) -> CalibrationReport:
        """Re-judge a seeded sample of pooled human-labelled pairs (stratified by human grade)
        as `judgepool calibrate` does, store the figures, and return them (a dry run forecasts
        calls and cost). `limits`: api_base, concurrency, max_cost, max_calls, timeout,
        template ... as for `judge`, and canaries (per query, 0: none), canary_threshold (the
        report's `canaries` and `fooled` say how the judge did on them)."""
        from judgepool.judge.progress import ProgressBar
        from judgepool.judge.session import JudgeSettings
        from judgepool.trust import calibrate

        try:
            settings = JudgeSettings(model=model, depth=depth, level=level, **limits)
        except TypeError as err:
            raise UsageError(
                f"unknown judge option: {err}", "see help(jp.Database.calibrate) for the options"
            ) from None
        bar = None if dry_run else ProgressBar(sample, progress)
        return calibrate(self.store, settings, sample, seed, dry_run, bar,
                         lambda what, total: ProgressBar(total, progress, what))  # fmt: skip

    def audit_sample(
        self,
        queries: int,
        seed: int = 1,
        depth: int = 10,
        runs: str | Sequence[str] | None = None,
        level: str = "chunk",
        labeller: str | None = None,
        replace: bool = False,
    ) -> AuditSample:
        """Draw `queries` queries uniformly at random from the evaluation set for a person to
        audit (recorded; the same seed with more queries extends the sample)."""
        from judgepool.trust import draw_audit

        found = draw_audit(self.store, queries, seed, depth, tuple(names_of(runs)), level,
                           labeller, replace)  # fmt: skip
        return found.sample

    def audit_pairs(self, level: str = "chunk", everything: bool = False) -> pl.DataFrame:
        """What a person must label for the audit sample: qid, doc_id, query, passage,
        human_grade (every pair of the sample with `everything`, else those left)."""
        import polars as pl

        from judgepool.trust import audit_listing

        rows = [
            {"qid": p.qid, "doc_id": p.doc_id, "query": p.query, "passage": p.passage,
             "human_grade": p.human_grade}
            for p in audit_listing(self.store, level, everything)
        ]  # fmt: skip
        schema = {"qid": pl.String, "doc_id": pl.String, "query": pl.String,
                  "passage": pl.String, "human_grade": pl.Int64}  # fmt: skip
        return pl.DataFrame(rows, schema=schema, orient="row")

    def audit_status(self, level: str = "chunk") -> AuditStatus:
        """Queries fully audited and pairs labelled / left for the audit sample in use."""
        from judgepool.trust import audit_status

        return audit_status(self.store, level)
