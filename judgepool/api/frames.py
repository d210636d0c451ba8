"""polars DataFrames as inputs: checked exactly like files, with the same errors and atomicity.

A DataFrame is written to a private temporary file in the format whose reader checks the same
columns (Parquet for a run, so its types are checked column by column as a Parquet run's are;
JSONL for queries, docs and qrels, one object per row, checked as a JSONL file's lines are) and
ingested from there in one transaction. Errors name the DataFrame and its 1-based row, never the
temporary file, which is gone when the call returns. The database records the source as
`DataFrame`.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from judgepool.errors import Call, InputError, Param, UsageError, remedy
from judgepool.host import naming

ORIGIN = "DataFrame"
T = TypeVar("T")
#: A file the library reads, as a path or a string (the other kind of input is a DataFrame).
Source = str | os.PathLike[str]


def frame_of(value: object) -> Any:
    """`value` if it is a polars DataFrame; else the refusal (a path is handled before this)."""
    import polars as pl

    if isinstance(value, pl.DataFrame):
        return value
    raise UsageError(
        f"cannot ingest a {type(value).__module__}.{type(value).__name__}",
        "give a file path or a polars DataFrame (pandas: polars.from_pandas(df))",
    )


@contextmanager
def _written(frame: Any, suffix: str) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="judgepool-frame-") as folder:
        path = Path(folder) / f"dataframe{suffix}"
        if frame.height == 0:
            raise InputError(ORIGIN, "the DataFrame has no rows", hint="give at least one row")
        with naming(path):  # polars' errors name no file: a full disk must say which
            if suffix == ".parquet":
                frame.write_parquet(path)
            else:
                frame.write_ndjson(path)
        yield path


def from_frame(frame: Any, suffix: str, ingest: Callable[[Path], T]) -> T:
    """Ingest `frame` through a temporary `suffix` file with `ingest(path)`; file errors become
    errors about the DataFrame's rows."""
    with _written(frame, suffix) as path:
        try:
            return ingest(path)
        except InputError as err:
            problem = err.problem.replace(str(path), ORIGIN)
            raise InputError(ORIGIN, problem, err.line, err.remedy, unit="row") from None


def needs(value: str | None, what: str, param: Param, example: Call) -> str:
    """A name a DataFrame cannot supply itself (a file has its name; a frame has none). The
    message itself says which parameter gives it: a traceback shows the message, not the hint."""
    if value is None:
        raise UsageError(
            remedy(
                f"a DataFrame has no file name to take the {what} from: give it with {{}}",
                param,
            ),
            remedy("e.g. {}", example),
        )
    return value
