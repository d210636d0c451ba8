"""Write docs/report.schema.json, the JSON Schema of `judgepool eval|compare --format json`.

    .venv/bin/python docs/make_report_schema.py

tests/test_report_schema.py fails when the file differs from what the models say.
"""

from __future__ import annotations

import json
from pathlib import Path

from judgepool.reports.model import Report

SCHEMA = Path(__file__).resolve().parent / "report.schema.json"


def schema_text() -> str:
    """The schema as the file holds it (sorted keys, two-space indent, final newline)."""
    return json.dumps(Report.model_json_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    SCHEMA.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {SCHEMA}")
