"""From the options to the judges of a run: a jury's members (and its labeller) and the canary
plan, with every wrong combination of options refused before anything is paid.

`--api-base` with several `--model`s: given once, it is every model's server; given as many
times as there are models, the i-th is the i-th model's (`-` for a model that needs none, such
as the offline judge). Any other count is refused.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from judgepool.errors import Param, Placeholder, UsageError, join, remedy
from judgepool.judge.jury import COMBINES, SampledJudge, jury_labeller
from judgepool.pooling.store.judgments import JURY_PREFIX

if TYPE_CHECKING:
    from judgepool.judge.base import Judge
    from judgepool.judge.canaries import CanaryPlan
    from judgepool.judge.options import JudgeOptions
    from judgepool.pooling.store.connection import Store

#: The temperature of `num_samples` when none is given (samples at 0 would repeat one answer).
SAMPLE_TEMPERATURE = 0.7
NO_API_BASE = "-"
# The parameters the refusals name.
_MODEL, _MODELS = Param("model", None), Param("models", None)
_API_BASES = Param("api_bases", None)
_NUM_SAMPLES = Param("num_samples", None)
_LABELLER = Param("labeller", None)


def _api_bases(options: JudgeOptions, models: tuple[str, ...]) -> list[str | None]:
    given = options.api_bases or ((options.api_base,) if options.api_base else ())
    if len(given) == 1:
        given = given * len(models)
    if given and len(given) != len(models):
        raise UsageError(
            remedy(f"{len(given)} {{}} for {len(models)} {{}}", _API_BASES, _MODELS),
            remedy(
                "give {} once (every model's server) or once per {}, in the same order",
                _API_BASES,
                _MODEL,
            )
            + f" ({NO_API_BASE!r} for a model that needs none)",
            value=given,
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
            remedy("{} needs {}", _NUM_SAMPLES, _MODEL),
            remedy(
                "name the model to ask, e.g. {} {}",
                Param("model", "openai/gpt-4o-mini"),
                Param("num_samples", 3),
            ),
        )
    if s.labeller is not None:
        raise UsageError(
            remedy(
                "{} does not apply to several judges: a jury fills the pairs that have no label "
                "of its own (and no human label)",
                _LABELLER,
            ),
            remedy(
                "leave out {} (compare and evaluate take {} afterwards)",
                _LABELLER,
                Param("labeller", "jury(...)@..."),
            ),
            value=s.labeller,
        )
    if s.combine not in COMBINES:
        raise UsageError(
            remedy("unknown {} ", Param("combine", None)) + repr(s.combine),
            "use one of " + join([remedy("{}", Param("combine", c)) for c in COMBINES]),
            value=s.combine,
        )
    if len(set(models)) != len(models):
        raise UsageError(
            remedy("the same {} is given twice", _MODEL),
            remedy("to ask one model several times use {}", Param("num_samples", Placeholder("K"))),
            value=models,
        )
    if samples < 1:
        raise UsageError(
            remedy("{} must be at least 1", Param("num_samples", samples)),
            "use 1 or more",
            value=samples,
        )
    temperature = s.temperature
    if samples > 1:
        offline = [m for m in models if is_offline(m)]
        if offline:
            raise UsageError(
                remedy("{} asks a model several times; ", _NUM_SAMPLES)
                + f"{offline[0]} answers the same every time",
                remedy("use {} with LLM models only", _NUM_SAMPLES),
                value=offline[0],
            )
        temperature = SAMPLE_TEMPERATURE if temperature is None else temperature
        if temperature <= 0:
            raise UsageError(
                remedy(
                    "{} at {}: every sample would repeat one answer (and be paid for)",
                    Param("num_samples", samples),
                    Param("temperature", temperature),
                ),
                remedy(
                    f"give a {{}} above 0 (default {SAMPLE_TEMPERATURE} with {{}})",
                    Param("temperature", None),
                    _NUM_SAMPLES,
                ),
                value=temperature,
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
    store: Store, options: JudgeOptions, judge: Judge, labeller: str | None, holes: int
) -> CanaryPlan | None:
    """The canaries of this run (None with `canaries=0`), drawn from the pool's queries: about
    a tenth of its `holes` (judge/canaries.py) at 2 per query, N / 2 times that at `canaries`
    N, or `canary_queries` x `canaries` when given."""
    from judgepool.judge.canaries import canaries_wanted, plan_canaries
    from judgepool.judge.prompt import DEFAULT_TEMPLATE, load_template
    from judgepool.pooling.pool import pool_queries

    s = options
    if s.canaries < 0 or (s.canary_queries is not None and s.canary_queries < 1):
        raise UsageError(
            remedy("{}", Param("canaries", s.canaries))
            + f" / {s.canary_queries} queries is not possible",
            remedy(
                "give {} or more per query (or {})",
                Param("canaries", 1),
                Param("canaries", 0),
            ),
            value=s.canaries,
        )
    if not 0 <= s.canary_threshold <= 1:
        raise UsageError(
            remedy(
                "{} is not a share between 0 and 1", Param("canary_threshold", s.canary_threshold)
            ),
            remedy("give e.g. {} (10 %)", Param("canary_threshold", 0.1)),
            value=s.canary_threshold,
        )
    if s.canaries == 0:
        return None
    inner = getattr(judge, "inner", judge)
    template = getattr(inner, "template", None) or load_template(s.template or DEFAULT_TEMPLATE)
    qids = pool_queries(store, s.pool_spec(labeller))
    total = None if s.canary_queries is not None else canaries_wanted(holes, s.canaries)
    queries = s.canary_queries or -(-(total or 0) // s.canaries)
    return plan_canaries(
        store,
        template,
        qids,
        s.level,
        s.canaries,
        queries,
        s.canary_seed,
        s.passage_tokens,
        s.query_tokens,
        total,
    )
