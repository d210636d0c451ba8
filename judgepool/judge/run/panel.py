"""From the options to the judges of a run: a jury's members (and its labeller) and the canary
plan, with every wrong combination of options refused before anything is paid.

`--api-base` with several `--model`s: given once, it is every model's server; given as many
times as there are models, the i-th is the i-th model's (`-` for a model that needs none, such
as the offline judge). Any other count is refused.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from judgepool.errors import UsageError
from judgepool.judge.jury import COMBINES, SampledJudge, jury_labeller
from judgepool.pooling.store.judgments import JURY_PREFIX

if TYPE_CHECKING:
    from judgepool.judge.base import Judge
    from judgepool.judge.canaries import CanaryPlan
    from judgepool.judge.options import JudgeOptions
    from judgepool.pooling.store.connection import Store

#: The temperature of `--num-samples` when none is given (samples at 0 would repeat one answer).
SAMPLE_TEMPERATURE = 0.7
NO_API_BASE = "-"


def _api_bases(options: JudgeOptions, models: tuple[str, ...]) -> list[str | None]:
    given = options.api_bases or ((options.api_base,) if options.api_base else ())
    if len(given) == 1:
        given = given * len(models)
    if given and len(given) != len(models):
        raise UsageError(
            f"{len(given)} --api-base for {len(models)} --model",
            "give --api-base once (every model's server) or once per --model, in the same "
            f"order ({NO_API_BASE!r} for a model that needs none)",
        )
    return [None if b in (None, "", NO_API_BASE) else b for b in given] or [None] * len(models)


def jury_members(options: JudgeOptions) -> tuple[tuple[Judge, ...], str]:
    """The members of the jury the options ask for, and the jury's labeller."""
    from judgepool.judge.registry import constructor_options, is_offline, make_judge

    s = options
    models = s.models or ((s.model,) if s.model else ())
    samples = s.num_samples
    if not models:
        raise UsageError(
            "--num-samples needs --model",
            "name the model to ask, e.g. --model openai/gpt-4o-mini --num-samples 3",
        )
    if s.labeller is not None:
        raise UsageError(
            "--judge does not apply to several judges: a jury fills the pairs that have no label "
            "of its own (and no human label)",
            "leave out --judge (compare and eval take --judge 'jury(...)@...' afterwards)",
        )
    if s.combine not in COMBINES:
        raise UsageError(f"unknown --combine {s.combine!r}", f"use one of {', '.join(COMBINES)}")
    if len(set(models)) != len(models):
        raise UsageError(
            "the same --model is given twice", "to ask one model several times use --num-samples K"
        )
    if samples < 1:
        raise UsageError(f"--num-samples {samples} must be at least 1", "use 1 or more")
    temperature = s.temperature
    if samples > 1:
        offline = [m for m in models if is_offline(m)]
        if offline:
            raise UsageError(
                f"--num-samples asks a model several times; {offline[0]} answers the same every "
                "time",
                "use --num-samples with LLM models only",
            )
        temperature = SAMPLE_TEMPERATURE if temperature is None else temperature
        if temperature <= 0:
            raise UsageError(
                f"--num-samples {samples} at --temperature {temperature:g}: every sample would "
                "repeat one answer (and be paid for)",
                f"give a --temperature above 0 (default {SAMPLE_TEMPERATURE} with --num-samples)",
            )
    judges: list[Judge] = []
    for model, base in zip(models, _api_bases(s, models), strict=True):
        if model.startswith(JURY_PREFIX):
            raise UsageError(f"{model!r} is a jury's name, not a model", "name models only")
        own = replace(s, api_base=base, temperature=temperature)
        judges.append(make_judge(model, **constructor_options(model, own)))
    members: list[Judge] = judges
    if samples > 1:
        members = [SampledJudge(j, i, samples) for j in judges for i in range(1, samples + 1)]
    names = [m.labeller for m in members]
    if len(set(names)) != len(names):
        raise UsageError(
            f"two members of the jury have the same labeller ({', '.join(names)})",
            "give models that differ (the labeller is the model and the prompt's version)",
        )
    return tuple(members), jury_labeller(names, s.combine, samples)


def canaries_for(
    store: Store, options: JudgeOptions, judge: Judge, labeller: str | None
) -> CanaryPlan | None:
    """The canaries of this run (None with `canaries=0`), drawn from the pool's queries."""
    from judgepool.judge.canaries import plan_canaries
    from judgepool.judge.prompt import DEFAULT_TEMPLATE, load_template
    from judgepool.pooling.pool import pool_queries

    s = options
    if s.canaries < 0 or s.canary_queries < 1:
        raise UsageError(
            f"--canaries {s.canaries} / {s.canary_queries} queries is not possible",
            "give --canaries 1 or more per query (or --no-canaries)",
        )
    if not 0 <= s.canary_threshold <= 1:
        raise UsageError(
            f"--canary-threshold {s.canary_threshold} is not a share between 0 and 1",
            "give e.g. --canary-threshold 0.1 (10 %)",
        )
    if s.canaries == 0:
        return None
    inner = getattr(judge, "inner", judge)
    template = getattr(inner, "template", None) or load_template(s.template or DEFAULT_TEMPLATE)
    qids = pool_queries(store, s.pool_spec(labeller))
    return plan_canaries(
        store,
        template,
        qids,
        s.level,
        s.canaries,
        s.canary_queries,
        s.canary_seed,
        s.passage_tokens,
        s.query_tokens,
    )
