"""The product's defaults and closed choices, each defined once (the library, the CLI's option
defaults and the dashboard all read them from here).

The bottom of the house with errors.py: it imports nothing of judgepool.
"""

from __future__ import annotations

from typing import Literal, get_args

#: What a label is about: a retrieved unit (`chunk`, as the run ranked it) or its document (`doc`).
Level = Literal["chunk", "doc"]
LEVELS: tuple[str, ...] = get_args(Level)
LEVEL: Level = "chunk"

#: A comparison is refused while a compared run's judged@k is under this fraction.
GATE = 0.9
#: The pool's depth (top-k of each run) and the measures' cut-off.
DEPTH = 10
K = 10
#: The lowest grade counted relevant by nR@k, and the lowest grade of a key doc for R(rel=3)@k.
REL = 2
KEY_REL = 3
#: Which queries a mean is over: those with a doc at the measure's threshold (`defined`), or
#: every evaluation-set query, those counting 0 (`trec_eval`, as `trec_eval -c`).
Average = Literal["defined", "trec_eval"]
AVERAGES: tuple[str, ...] = get_args(Average)
AVERAGE: Average = "defined"
#: What figures can be broken down by: the query groups.
By = Literal["group"]
BY: tuple[str, ...] = get_args(By)
#: Bootstrap resamples and randomisation-test flips over queries, and their seed.
RESAMPLES = 10_000
SEED = 20_240_611
#: How an audit sample draws its queries: at random (`uniform`), or with probability rising with
#: the judge's uncertainty about each query (`weighted`, pooling/audit/design.py).
Design = Literal["uniform", "weighted"]
DESIGNS: tuple[str, ...] = get_args(Design)
DESIGN: Design = "uniform"
#: The seed of a calibration sample or an audit draw, and the calibration sample's size.
DRAW_SEED = 1
CALIBRATION_SAMPLE = 200
#: The judge a library call uses when none is named: offline, no key and no network.
JUDGE_MODEL = "offline"
