"""Every JSON report a test makes the CLI print is checked against its pydantic models.

The models of judgepool/reports/model.py define the report's shape, but the command does not run
them (importing pydantic and building the models was a third of `eval`'s start-up): the builders
in judgepool/reports/ write the final shape themselves. This check keeps the two the same: the
printed object, read back and passed through `Report`, must come out as the very same text (same
keys, same order, same types: a numpy integer printed as "3" or a Fraction as "3/4" would not).
The `cli` fixture calls it after every `eval` or `compare` with `--format json`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

REPORT_COMMANDS = ("eval", "compare")


def prints_a_report(args: Sequence[str]) -> bool:
    """Whether `judgepool ARGS` prints the JSON report (eval or compare with --format json)."""
    words = list(args)
    command = next((w for w in words if w in REPORT_COMMANDS), None)
    asked = any(
        w == "--format" and i + 1 < len(words) and words[i + 1] == "json"
        for i, w in enumerate(words)
    )
    return command is not None and (asked or "--format=json" in words)


def check_report_text(text: str) -> None:
    """Fail unless `text` (a printed report) is exactly what the model makes of it."""
    from judgepool.reports.model import Report

    printed = json.loads(text)
    made = Report.model_validate(printed).model_dump(mode="json")
    assert json.dumps(made, indent=1) == json.dumps(printed, indent=1), (
        "the printed JSON report differs from what judgepool/reports/model.py makes of it"
    )
