"""The measures as values, named and parsed by ir-measures: `nDCG@10`, `R(rel=3)@10`, `AP@100` ...

Any measure ir-measures can compute is accepted (`parse_measure` hands the text to ir-measures'
own parser, never to ours). Four of them are computed on judgepool's own vectorised path, which is
exactly trec_eval's (tests check it to 1e-9), fast enough for millions of run rows, and bounded
(holes counted 0 vs the top grade); every other measure is computed by ir-measures on the same
effective labels and the same rankings (`metrics/external.py`):

- ``nDCG@k``       gain = grade (grades <= 0 add nothing), discount log2(rank + 1), ideal from every
                   labelled doc of the query. trec_eval ``ndcg_cut.k``.
- ``R(rel=t)@k``   share of the query's docs with grade >= t found in the top k. trec_eval
                   ``recall.k`` at relevance level t. ``R@k`` when t = 1, as in ir-measures.
- ``nR@k``         docs with grade >= t in the top k / min(k, docs with grade >= t); t = 2 unless
                   written ``nR(rel=t)@k``. trec_eval ``relative_P.k`` with ``-l t``. ir-measures
                   has no such measure: judgepool registers ``nR`` with ir-measures' own
                   `register` so that its parser reads the name like every other.
- ``Judged@k``     share of the top min(k, returned) docs that have an effective label (any grade,
                   negative ones included). ir-measures ``Judged@k``.

Which queries a measure has a value for: a query with no doc at the measure's relevance level
(its ``rel`` parameter, 1 when it has none; grade >= 1 for nDCG) has no value and is left out of
that measure's mean, unless the evaluation averages as trec_eval -c does, where it counts 0
(`metrics.evaluate`, `average="trec_eval"`). Judged@k and ir-measures' counts (NumRet, NumQ ...)
are defined on every query.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from judgepool.defaults import KEY_REL, REL, K
from judgepool.errors import Param, UsageError, remedy

if TYPE_CHECKING:
    import ir_measures

NATIVE: tuple[str, ...] = ("nDCG", "R", "nR", "Judged")
# The threshold a native kind uses when its name carries none (ir-measures' R defaults to rel=1).
DEFAULT_REL: dict[str, int] = {"R": 1, "nR": 2}
# Measures defined on every query (no relevance level): coverage and counts.
_EVERY_QUERY = ("Judged", "NumQ", "NumRet")


@cache
def _ir_measures() -> Any:
    """ir-measures, with judgepool's `nR` registered (once) so that its parser knows the name."""
    import ir_measures
    from ir_measures import measures as irm_measures

    if "nR" not in irm_measures.registry:
        param: Any = irm_measures.ParamInfo
        # trec_eval's relative_P: relevant docs in the top k / min(k, relevant docs). Computed
        # by judgepool (no ir-measures provider has it); registered so the parser knows it.
        relative_p: Any = type(
            "nR",
            (irm_measures.Measure,),
            {
                "__name__": "nR",
                "NAME": "nR",
                "__doc__": "Relative precision at k (trec_eval relative_P), judgepool's.",
                "SUPPORTED_PARAMS": {
                    "cutoff": param(dtype=int, required=True, desc="ranking cutoff"),
                    "rel": param(dtype=int, default=2, desc="minimum relevance score"),
                },
            },
        )
        register: Any = irm_measures.register
        register(relative_p())
    return ir_measures


@dataclass(frozen=True, eq=False)
class Measure:
    """One measure: `kind` is ir-measures' name (nDCG, R, nR, Judged, RR, AP, P ...), `k` the
    cutoff (None: the whole ranking), `rel` the relevance level where the measure has one.

    `Measure("nDCG", 10)`, `Measure("R", 10, 3)` build the native ones; `parse_measure` builds any.
    Two measures are equal when they print the same (as in ir-measures).
    """

    kind: str
    k: int | None
    rel: int | None = None
    params: tuple[tuple[str, Any], ...] = ()  # other ir-measures parameters, sorted by name

    def __post_init__(self) -> None:
        if self.k is not None:
            check_k(self.k)
        elif self.kind == "nR":
            raise UsageError("nR needs a cutoff", "write e.g. nR@10")
        if self.kind in DEFAULT_REL:
            if self.rel is None:
                object.__setattr__(self, "rel", DEFAULT_REL[self.kind])
            check_rel(int(self.rel or 0))
        elif self.kind in ("nDCG", "Judged") and self.rel is not None:
            raise UsageError(
                f"{self.kind} takes no relevance threshold (rel={self.rel})",
                f"write it without one, e.g. {self.kind}@{self.k}",
            )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Measure) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    @property
    def native(self) -> bool:
        """Computed on judgepool's own path (the four measures with their default parameters)."""
        return self.kind in NATIVE and not self.params and self.k is not None

    @property
    def threshold(self) -> int | None:
        """The lowest grade that makes a query count for this measure (None: every query)."""
        if self.kind in _EVERY_QUERY:
            return None
        if self.kind == "nDCG" or self.rel is None:
            return 1
        return self.rel

    @property
    def depth(self) -> int | None:
        """How deep into each ranking the measure looks (None: all of it)."""
        return self.k

    def to_ir_measures(self) -> ir_measures.Measure:
        """The ir-measures object of this measure."""
        irm = _ir_measures()
        params: dict[str, Any] = dict(self.params)
        if self.k is not None:
            params["cutoff"] = self.k
        if self.rel is not None and self.rel != _default_rel(self.kind):
            params["rel"] = self.rel
        built: ir_measures.Measure = irm.measures.registry[self.kind](**params)
        return built

    def __str__(self) -> str:
        if self.native:  # formatted here: no need to import ir-measures to print a name
            shown_rel = self.rel is not None and self.rel != DEFAULT_REL.get(self.kind)
            return f"{self.kind}{f'(rel={self.rel})' if shown_rel else ''}@{self.k}"
        return str(self.to_ir_measures())

    def __repr__(self) -> str:
        return str(self)


def _default_rel(kind: str) -> int | None:
    """The rel an ir-measures measure assumes when none is given."""
    if kind in DEFAULT_REL:
        return DEFAULT_REL[kind]
    info = _ir_measures().measures.registry[kind].SUPPORTED_PARAMS.get("rel")
    default = getattr(info, "default", None)
    return default if isinstance(default, int) else None


def check_k(k: int) -> int:
    """Cutoffs are positive."""
    if k < 1:
        raise UsageError(
            f"cutoff k={k} is not positive", remedy("use e.g. {}", Param("k", 10)), value=k
        )
    return k


def check_rel(rel: int) -> int:
    """A relevance threshold below 1 would count non-relevant (grade 0) docs as relevant."""
    if rel < 1:
        raise UsageError(f"relevance threshold {rel} is below 1", "use a grade of 1 or more")
    return rel


def supported_names() -> list[str]:
    """Every measure name ir-measures (with judgepool's nR) knows, for error messages."""
    return sorted(_ir_measures().measures.registry, key=str.lower)


def _unknown(text: str, why: str) -> UsageError:
    return UsageError(
        f"cannot use measure {text!r}: {why}",
        "write an ir-measures measure such as nDCG@10, R(rel=3)@10, nR@10, Judged@10, RR@10, "
        f"P@5, AP@100; the names it knows: {', '.join(supported_names())}",
    )


def parse_measure(text: str) -> Measure:
    """An ir-measures measure string (``"nDCG@10"``, ``"RR(rel=2)@10"``) -> the Measure.

    Parsed by ir-measures; refused with the list of known names when it cannot be read, when its
    parameters are invalid, or when no installed ir-measures provider can compute it.
    """
    irm = _ir_measures()
    try:
        parsed = irm.parse_measure(text.strip())
        parsed.validate_params()
    except (NameError, ValueError, SyntaxError, AssertionError, TypeError) as err:
        raise _unknown(text, str(err) or type(err).__name__) from None
    params = dict(parsed.params)
    kind = str(parsed.NAME)
    k = params.pop("cutoff", None)
    rel = params.pop("rel", None)
    if kind in DEFAULT_REL and rel is None:
        rel = DEFAULT_REL[kind]
    if kind not in NATIVE and rel is None and _default_rel(kind) is not None:
        rel = _default_rel(kind)
    if k is not None and (not isinstance(k, int) or isinstance(k, bool)):
        raise _unknown(text, f"the cutoff {k!r} is not a whole number")
    if rel is not None and (not isinstance(rel, int) or isinstance(rel, bool)):
        raise _unknown(text, f"rel={rel!r} is not a whole number")
    measure = Measure(kind, k, rel, tuple(sorted(params.items())))
    if not measure.native and not irm.DefaultPipeline.supports(measure.to_ir_measures()):
        raise _unknown(text, "no installed ir-measures provider computes it")
    return measure


def parse_measures(texts: list[str] | tuple[str, ...]) -> tuple[Measure, ...]:
    """Several measures, in order, each once."""
    return tuple(dict.fromkeys(parse_measure(t) for t in texts))


def default_measures(k: int = K, rel: int = REL, key_rel: int = KEY_REL) -> tuple[Measure, ...]:
    """The four measures every report shows: nDCG, key-doc recall, nR, Judged, at cutoff k."""
    return (
        Measure("nDCG", k),
        Measure("R", k, key_rel),
        Measure("nR", k, rel),
        Measure("Judged", k),
    )
