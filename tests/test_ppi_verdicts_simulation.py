"""The verdict simulation on DL19, small: bench/bench_ppi_verdicts.py's protocol (same code) at
n = 10 audited queries, 40 simulated judges per setting and 500 bootstrap resamples (the bench
runs 200 judges, DL19 and DL20, n = 10/15/20). Seeded, so the figures are fixed. Checked: the
issue's bar (issue 21): a plain interval that misses the truth is never called robust, the
corrected interval covers the truth, a perfect judge's corrected width stays within 1.3x of the
plain width and inside [-1, 1].
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import SHARED_DATA
from tests.scripts import script

BENCH = Path(__file__).resolve().parent.parent / "bench" / "bench_ppi_verdicts.py"

pytestmark = [pytest.mark.slow, pytest.mark.shared]


def _bench() -> ModuleType:
    return script(BENCH)


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    if not (SHARED_DATA / "trec-dl").is_dir():
        pytest.skip(f"shared data absent: {SHARED_DATA} (set JUDGEPOOL_SHARED_DATA to its path)")
    simulated: dict[str, Any] = _bench().simulate(
        SHARED_DATA / "trec-dl", reps=40, seed=7, resamples=500, years=("dl19",), sizes=(10,)
    )
    found: list[dict[str, Any]] = simulated["rows"]
    return found


def test_every_setting_was_simulated(rows: list[dict[str, Any]]) -> None:
    assert {(r["judge"], r["design"]) for r in rows} == {
        (j, d) for j in ("perfect", "lenient", "harsh", "noisy") for d in ("uniform", "weighted")
    }
    assert all(sum(r["verdicts"].values()) == 40 for r in rows)


def test_a_plain_miss_is_never_called_robust(rows: list[dict[str, Any]]) -> None:
    harsh = [r for r in rows if r["judge"] == "harsh" and "nDCG" in r["comparison"]]
    assert sum(r["plain_misses"] for r in harsh) > 40  # the harsh judge misleads the plain one
    assert sum(r["robust_when_plain_misses"] for r in rows) == 0


def test_the_corrected_interval_covers_the_truth(rows: list[dict[str, Any]]) -> None:
    covered = sum(r["coverage"] for r in rows) / len(rows)
    assert covered >= 0.95
    assert min(r["coverage"] for r in rows) >= 0.85  # 40 draws per cell: a loose floor


def test_a_perfect_judge_is_as_narrow_as_the_plain_interval(rows: list[dict[str, Any]]) -> None:
    perfect = [r for r in rows if r["judge"] == "perfect"]
    assert all(r["width"] <= 1.3 * r["plain_width"] for r in perfect), perfect
    assert all(r["verdicts"]["judge-biased"] == 0 for r in perfect)
