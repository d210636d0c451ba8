"""`judgepool judge --batch`: plan the holes' requests as the online judge would, then send them.

    found = plan(store, settings)                 # holes, cache hits, lines, files, costs
    forecast(store, found, settings)              # --dry-run: nothing written or sent
    await send_holes(store, settings, clients)    # cache hits and no_text labelled, rest sent

The requests are the online judge's (judge/batch/requests.py: same prompt, parameters and cache
key); pairs whose answer is in the cache are labelled from it at once (cost 0), pairs without
text get `no_text`, and pairs another judge or an open batch holds are left to it. The rest are
claimed and recorded as batches in one transaction (pooling/store/batches.py), then each file is
uploaded and its batch created (judge/batch/send.py). `--max-cost` and `--max-calls` keep the
requests, in order, whose worst case fits (every answer as long as --max-tokens allows, input
counts with a margin, at batch price): a batch is paid as a whole once it runs.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from judgepool.errors import BudgetExceededError, JudgeError, Param, Placeholder, UsageError, remedy
from judgepool.judge.batch.requests import BatchEntry, BatchFile, LineBuilder, split_files
from judgepool.judge.batch.send import Clients, Notify, orphaned, recover, send
from judgepool.judge.batch.settings import batch_judge, kept
from judgepool.judge.batch.support import BatchRates, BatchSupport, batch_rates, batch_support
from judgepool.judge.cache import JudgeCache, usable_entry
from judgepool.judge.llm import INPUT_MARGIN, TYPICAL_OUTPUT_TOKENS, LLMJudge
from judgepool.judge.provenance import LabelMaker
from judgepool.pooling.store import batches, claims
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import write_judgments

if TYPE_CHECKING:
    from judgepool.judge.base import JudgeRequest
    from judgepool.judge.options import JudgeOptions
    from judgepool.judge.run.plan import Plan
    from judgepool.pooling.pool import PoolSummary

Pair = tuple[str, str, str]  # qid, doc_id, level


@dataclass
class Submission:
    """What a batch submission did (or, as a dry run, would do); pairs unless said otherwise."""

    labeller: str
    model: str
    holes: int
    dry_run: bool = False
    no_text: int = 0
    cached_pairs: int = 0
    cached_unique: int = 0
    claimed: int = 0  # held by an open batch or a running judge: not sent again
    claimed_by: list[str] = field(default_factory=list)
    pairs: int = 0  # sent (or to send) in batches
    lines: int = 0  # requests: one per distinct text
    files: list[tuple[int, int]] = field(default_factory=list)  # (requests, bytes) per file
    not_sent: int = 0  # pairs a cap left out
    stopped: str | None = None  # max-cost or max-calls
    tokens_in: int = 0
    tokens_out: int = 0
    online_cost: float | None = 0.0
    batch_cost: float | None = 0.0
    worst_cost: float | None = 0.0  # at batch price
    price_basis: str | None = None
    limits: str = ""
    truncated: int = 0
    queries_truncated: int = 0
    readiness: JudgeError | None = None
    sent: list[batches.BatchRow] = field(default_factory=list)
    adopted: list[batches.BatchRow] = field(default_factory=list)  # found after a crash
    resumed: int = 0  # batches a killed process recorded but never sent: planned again

    def problem(self, settings: JudgeOptions) -> JudgeError | None:
        """The error the submission ended with: a cap that left pairs out (exit code 6)."""
        if self.stopped is None or self.dry_run:
            return None
        cap = (
            Param("max_cost", settings.max_cost)
            if self.stopped == "max-cost"
            else Param("max_calls", settings.max_calls)
        )
        return BudgetExceededError(
            f"{self.not_sent} pairs were not sent: "
            + remedy("their worst case would exceed {}", cap),
            "raise the cap and run the same command again (what was sent is not sent again)",
        )


@dataclass
class Planned:
    """The holes of a batch run and what becomes of each group of requests (one cache key)."""

    model: str
    judge: LLMJudge
    support: BatchSupport
    rates: BatchRates | None
    plan: Plan
    before: PoolSummary
    groups: dict[str, list[JudgeRequest]]
    hits: dict[str, dict[str, Any]]
    entries: list[BatchEntry]  # the misses, one line each, in plan order
    worst: list[float | None]  # each entry's worst case at batch price
    tokens: list[int]  # each entry's estimated input tokens


def plan(store: Store, settings: JudgeOptions, only: set[Pair] | None = None) -> Planned:
    """The model, the judge, the holes and their lines (no network; `only` keeps those pairs)."""
    from dataclasses import replace

    from judgepool.judge.registry import choose_model
    from judgepool.judge.requests import Built
    from judgepool.judge.run.plan import plan_holes
    from judgepool.pooling.pool import pool_summary

    s = settings
    model, _ = choose_model(s.model, s.api_base)
    judge = batch_judge(model, s)
    support = batch_support(model)
    before = pool_summary(store, s.pool_spec(s.labeller))
    found = plan_holes(
        store,
        s.depth,
        s.runs,
        s.level,
        s.labeller,
        s.all_queries,
        s.passage_tokens,
        s.max_chunks,
        s.query_tokens,
    )
    if only is not None:
        keep = [h for h in found.holes if (h.qid, h.doc_id, s.level) in only]
        built = Built(
            [r for r in found.built.requests if (r.qid, r.doc_id, r.level) in only],
            [k for k in found.built.skipped if (k.qid, k.doc_id, k.level) in only],
        )
        found = replace(found, holes=keep, built=built)
    groups: dict[str, list[JudgeRequest]] = {}
    for request in found.built.requests:
        groups.setdefault(judge.cache_key(request), []).append(request)
    with JudgeCache() as cache:
        hits = {k: v for k, v in cache.get_many(list(groups)).items() if usable_entry(v)}
    misses = [r for key, group in groups.items() if key not in hits for r in group]
    entries = LineBuilder(judge).entries(misses) if misses else []
    rates = batch_rates(model)
    tokens, worst = [], []
    max_out = judge.decoding.output_cap  # the cap sent (reasoning and answer together)
    for entry in entries:
        tokens_in = judge.input_tokens(entry.requests[0])
        tokens.append(tokens_in)
        worst.append(rates.cost(round(tokens_in * INPUT_MARGIN) + 16, max_out) if rates else None)
    return Planned(
        model, judge, support, rates, found, before, groups, hits, entries, worst, tokens
    )


def _cap(
    found: Planned,
    entries: list[BatchEntry],
    settings: JudgeOptions,
) -> tuple[list[BatchEntry], str | None]:
    """The entries, in order, whose worst cases fit the caps, and the cap that cut, if any."""
    if settings.max_cost is not None and found.rates is None:
        raise UsageError(
            remedy("{} cannot cap ", Param("max_cost", None))
            + f"{found.model}: its price is unknown (a local server or a model missing from "
            "litellm's price map)",
            remedy("cap it with {} instead", Param("max_calls", Placeholder("N"))),
            value=found.model,
        )
    worst = {e.custom_id: w for e, w in zip(found.entries, found.worst, strict=True)}
    kept_entries: list[BatchEntry] = []
    spent = 0.0
    for entry in entries:
        if settings.max_calls is not None and len(kept_entries) >= settings.max_calls:
            return kept_entries, "max-calls"
        cost = worst[entry.custom_id] or 0.0
        if settings.max_cost is not None and spent + cost > settings.max_cost:
            return kept_entries, "max-cost"
        spent += cost
        kept_entries.append(entry)
    return kept_entries, None


def _count(
    found: Planned, result: Submission, entries: list[BatchEntry], files: list[BatchFile]
) -> None:
    """Fill the submission's figures for the entries to send."""
    by_id = {e.custom_id: i for i, e in enumerate(found.entries)}
    chosen = [by_id[e.custom_id] for e in entries]
    result.lines = len(entries)
    result.pairs = sum(len(e.requests) for e in entries)
    result.files = [(len(f.entries), f.size) for f in files]
    result.tokens_in = sum(found.tokens[i] for i in chosen)
    result.tokens_out = TYPICAL_OUTPUT_TOKENS * len(chosen)
    result.online_cost = found.judge.price(result.tokens_in, result.tokens_out)
    rates = found.rates
    result.batch_cost = rates.cost(result.tokens_in, result.tokens_out) if rates else None
    result.worst_cost = sum(found.worst[i] or 0.0 for i in chosen) if rates else None
    result.price_basis = rates.basis if rates else None


def forecast(store: Store, found: Planned, settings: JudgeOptions) -> Submission:
    """A dry run: what a submission would send now, in how many files, at what price."""
    built = found.plan.built
    result = Submission(
        found.judge.labeller,
        found.model,
        len(found.plan.holes),
        dry_run=True,
        no_text=len(built.skipped),
        truncated=built.truncated,
        queries_truncated=built.queries_truncated,
        limits=found.support.limits.source if found.support.limits else "",
    )
    result.cached_unique = len(found.hits)
    result.cached_pairs = sum(len(found.groups[k]) for k in found.hits)
    held = claims.held_by(store, [e.key for e in found.entries])
    free = [e for e in found.entries if e.key not in held]
    result.claimed = sum(len(e.requests) for e in found.entries if e.key in held)
    result.claimed_by = sorted(set(held.values()))
    chosen, result.stopped = _cap(found, free, settings)
    result.not_sent = sum(len(e.requests) for e in free) - sum(len(e.requests) for e in chosen)
    _count(found, result, chosen, _split(found, chosen))
    result.readiness = found.judge.readiness() if chosen else None
    return result


def _split(found: Planned, entries: list[BatchEntry]) -> list[BatchFile]:
    limits = found.support.limits
    if limits is None:  # pragma: no cover - every supported provider has limits
        raise JudgeError(
            f"no batch file limits known for {found.support.provider}",
            remedy("run the same command without {}", Param("submit_batch", None)),
        )
    return split_files(entries, limits)


def label_now(store: Store, found: Planned, holder: str) -> tuple[int, int]:
    """Label what needs no request: `no_text` holes and cache hits (claimed first, so that two
    judges at once write them once); returns (no_text, cached pairs) written."""
    maker = LabelMaker(found.judge.labeller, found.judge.describe())
    skipped = found.plan.built.skipped
    no_text = write_judgments(store, maker.no_text(skipped), unless_marked=True) if skipped else 0
    cached = 0
    if found.hits:
        wanted = [
            claims.Wanted(
                k, tuple((r.qid, r.doc_id) for r in found.groups[k]), found.groups[k][0].level
            )
            for k in found.hits
        ]
        got = claims.claim(
            store,
            holder,
            wanted,
            found.judge.labeller,
            found.plan.label_mark,
            claims.lease_seconds(),
        )
        mine = got.mine + got.taken_over
        labels = [label for k in mine for label in maker.cached(found.groups[k], k, found.hits[k])]
        write_judgments(store, labels, release=(holder, mine))
        cached = len(labels)
    return no_text, cached


def new_batches(
    found: Planned, settings: JudgeOptions, submitter: str, files: list[BatchFile]
) -> list[batches.NewBatch]:
    """One batch record per input file."""
    stored = kept(settings, found.model)
    describe = found.judge.describe()
    made = []
    for file in files:
        pairs = [
            batches.BatchPair(
                e.custom_id,
                e.key,
                r.qid,
                r.doc_id,
                r.level,
                [{"doc_id": s.doc_id, "start": s.start, "end": s.end} for s in r.shown],
                r.truncated,
                r.query_truncated,
            )
            for e in file.entries
            for r in e.requests
        ]
        made.append(
            batches.NewBatch(
                local_id=f"jpb-{secrets.token_hex(8)}",
                provider=found.support.provider,
                model=found.model,
                labeller=found.judge.labeller,
                api_base_host=describe.get("api_base_host"),
                judge=describe,
                settings=stored,
                file_sha256=file.sha256,
                file_bytes=file.size,
                requests=len(file.entries),
                submitter=submitter,
                pairs=pairs,
            )
        )
    return made


async def send_holes(
    store: Store,
    settings: JudgeOptions,
    clients: Clients,
    notify: Notify | None = None,
    only: set[Pair] | None = None,
) -> Submission:
    """Finish or drop what a killed process left halfway, label what needs no request, then
    claim, record and send the rest as batches (`only`: just these pairs, if still holes)."""
    from judgepool.judge.registry import choose_model

    model, _ = choose_model(settings.model, settings.api_base)
    client = clients.get(model, settings.api_base)
    mine = [r for r in batches.list_batches(store, uncollected=True) if r.model == model]
    adopted, known = await recover(store, clients, mine, adopt_only=False)
    found = plan(store, settings, only)
    result = forecast(store, found, settings)  # the figures; replaced below by what was sent
    result.dry_run = False
    result.adopted = adopted
    result.resumed = sum(1 for r in mine if orphaned(r)) - len(adopted)
    holder = claims.new_holder()
    try:
        result.no_text, result.cached_pairs = label_now(store, found, holder)
        chosen: list[BatchFile] = []

        def make(keys: list[str]) -> list[batches.NewBatch]:
            free = set(keys)
            entries, result.stopped = _cap(
                found, [e for e in found.entries if e.key in free], settings
            )
            result.not_sent = sum(len(e.requests) for e in found.entries if e.key in free) - sum(
                len(e.requests) for e in entries
            )
            chosen[:] = _split(found, entries)
            _count(found, result, entries, chosen)
            return new_batches(found, settings, holder, chosen)

        wanted = [
            claims.Wanted(e.key, tuple((r.qid, r.doc_id) for r in e.requests), e.requests[0].level)
            for e in found.entries
        ]
        got, made = batches.open_batches(
            store, wanted, found.judge.labeller, found.plan.label_mark, make
        )
        by_key = {e.key: e for e in found.entries}
        result.claimed = sum(len(by_key[k].requests) for k in got.held)
        result.claimed_by = sorted({h for h, _ in got.held.values()})
        result.sent = await send(store, client, made, chosen, known, notify)
    finally:
        claims.retire(holder)
    return result
