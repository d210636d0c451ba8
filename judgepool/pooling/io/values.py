"""What an id, a score and a grade may be, and how a TREC line splits: one rule for every reader.

trec_eval is the reference. Columns are separated by runs of C whitespace (space, tab, \\v, \\f,
\\r); a line whose first non-blank character is `#` is a comment. A score is what C's strtod
reads in full: a decimal (`12.5`, `.5`, `5.`, `-3e-2`), a hex float (`0x1.8p1`) or an infinity
(`inf`, `-Infinity`); NaN is refused (it cannot be ranked), and so is anything strtod would read
only in part (`1_000`, which Python's float() reads as 1000 and trec_eval as 1). A grade is an
integer in the 32-bit range. An id is a non-empty string without whitespace (a TREC file could
not represent it) and without control characters (C0, DEL, C1: invisible in every report, and
usually the sign of a corrupt or binary field).

The fast scan (pooling/io/fastscan.py) uses the regex forms of grades and ids below, and Arrow's
CSV reader for scores; each accepts a subset of what these functions accept, with the same
values, so the readers stay the authority.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from judgepool.errors import InputError

#: C's isspace() without the newline: what separates TREC columns.
C_SPACE = " \t\v\f\r"
_SPLIT = re.compile(r"[ \t\v\f\r]+")

DECIMAL = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_HEX = r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
_INF = r"[+-]?[iI][nN][fF](?:[iI][nN][iI][tT][yY])?"
_NAN = r"[+-]?[nN][aA][nN](?:\([0-9A-Za-z_]*\))?"
_DECIMAL_OR_INF = re.compile(f"{DECIMAL}|{_INF}")
_HEX_RE = re.compile(_HEX)
_NAN_RE = re.compile(_NAN)
# What strtod (trec_eval's atof) reads at the start of a string: hex before decimal ("0x1").
_C_PREFIX = re.compile(f"{_HEX}|{DECIMAL}|{_INF}|{_NAN}")
INTEGER = r"[+-]?[0-9]+"
_INTEGER_RE = re.compile(INTEGER)
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

# Whitespace (Python's str.isspace) and control characters (C0, DEL, C1): never in an id.
_BAD_ID_CHARS = "\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_BAD_ID = re.compile(f"[{_BAD_ID_CHARS}]")
#: The same class for Arrow's RE2, plus U+FEFF: the fast scan leaves a mid-file byte order mark
#: to the exact reader rather than reason about where a reader strips one.
SQL_BAD_ID = (
    r"[\x{00}-\x{20}\x{7f}-\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}"
    r"\x{3000}\x{feff}]"
)

ID_HINT = "ids are strings (integers are read as their decimal form): fix the field"


def split_columns(line: str) -> list[str]:
    """The columns of a TREC line, split on runs of C whitespace as trec_eval splits them."""
    stripped = line.strip(C_SPACE)
    return _SPLIT.split(stripped) if stripped else []


def is_blank_or_comment(line: str) -> bool:
    """Whether trec_eval skips this line: only whitespace, or `#` as its first visible char."""
    stripped = line.lstrip(C_SPACE)
    return not stripped or stripped.startswith("#")


def check_id(path: Path, line: int, what: str, value: str) -> str:
    """Ids are non-empty strings without whitespace or control characters."""
    if value == "":
        raise InputError(
            path, f"empty {what}", line=line, hint=f"give every line its {what}, or drop the line"
        )
    bad = _BAD_ID.search(value)
    if bad is None:
        return value
    char = bad.group()
    code = f"U+{ord(char):04X}"
    if unicodedata.category(char) == "Cc":
        raise InputError(
            path,
            f"{what} {value!r} contains a control character ({code})",
            line=line,
            hint="ids may not contain control characters (invisible in every report, usually "
            "a corrupt or binary field): fix the line",
        )
    raise InputError(
        path,
        f"{what} {value!r} contains whitespace ({code})",
        line=line,
        hint="ids may not contain spaces, tabs or other whitespace (a TREC file could not "
        "represent them): fix the id",
    )


def c_float_prefix(raw: str) -> str:
    """What C's atof reads of `raw` (as text): its longest leading float, else 0."""
    found = _C_PREFIX.match(raw)
    return found.group() if found else "0"


def parse_score(path: Path, line: int, raw: str) -> float:
    """A score as strtod reads it in full; NaN and partial reads are refused."""
    if _DECIMAL_OR_INF.fullmatch(raw):
        return float(raw)
    if _HEX_RE.fullmatch(raw):
        try:
            return float.fromhex(raw)
        except OverflowError:  # strtod gives an infinity, as for 1e400
            return float("-inf") if raw.startswith("-") else float("inf")
    if _NAN_RE.fullmatch(raw):
        raise InputError(
            path,
            f"score {raw!r} is NaN, which cannot be ranked",
            line=line,
            hint="give the line a real score, or drop it",
        )
    raise InputError(
        path,
        f"score {raw!r} is not a C float (trec_eval would read it as {c_float_prefix(raw)})",
        line=line,
        hint="write scores as C reads them: 12.5, -3e-2, 0x1.8p1 or inf",
    )


def parse_grade(path: Path, line: int, raw: str) -> int:
    """Grades are integers in the 32-bit range (negative ones are kept, as trec_eval keeps them)."""
    if not _INTEGER_RE.fullmatch(raw):
        raise InputError(
            path, f"grade {raw!r} is not an integer", line=line, hint="grades are whole numbers"
        )
    return check_grade(path, line, int(raw))


def check_grade(path: Path, line: int, grade: int) -> int:
    """Refuse a grade the database's 32-bit column cannot hold."""
    if not INT32_MIN <= grade <= INT32_MAX:
        raise InputError(
            path,
            f"grade {grade} is beyond the 32-bit integer range",
            line=line,
            hint="grades are small integers (TREC uses 0-3): fix the line",
        )
    return grade
