"""The fast scan never reads a file differently from the exact reader.

Random TREC runs and qrels built from the characters that trip parsers (tabs, doubled spaces,
carriage returns, `#`, no-break spaces, control characters, underscores in numbers, a BOM):
whenever the fast scan accepts a file, the exact reader accepts it too, with the same rows, or
refuses a pair listed twice that the fast path's own check (the ranking's hash for a run, a hash
aggregate for qrels) finds too.
"""

from __future__ import annotations

import gzip
import math
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgepool.errors import InputError
from judgepool.pooling.ingest_labels import in_pair_order
from judgepool.pooling.io.fastscan import scan_qrels, scan_run
from judgepool.pooling.io.readers import read_trec_qrels, read_trec_run
from judgepool.pooling.run_order import rank_runs

_CLEAN_ID = st.text(alphabet="ab1:/_.#\u00e9", min_size=1, max_size=3)
_HOSTILE_ID = st.text(alphabet="a#\u00a0\x07\x1c\ufeff\x85\x00", max_size=3)
_SCORE = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(-(2**40), 2**40).map(str),
)
_HOSTILE_NUMBER = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(alphabet="0123456789.+-eE_x", min_size=1, max_size=6),
    st.integers(-(2**40), 2**40).map(str),
)
_SEP = st.sampled_from([" ", "\t", "  ", " \t", "\r", "\x0b", "\x0c"])
_EXTRA_LINE = st.sampled_from(["", "\n", "   \n", "# note\n", " # note\n", "\r\n"])


@st.composite
def _trec(draw: st.DrawFn, columns: int) -> bytes:
    """A clean TREC file (one separator), then at most one hostile change to it."""
    sep = draw(st.sampled_from([" ", "\t"]))
    rows = []
    for i in range(draw(st.integers(1, 5))):
        # The line number in the doc id keeps the pairs distinct (a duplicate is refused).
        qid, doc = draw(_CLEAN_ID).lstrip("#") or "q", f"{draw(_CLEAN_ID)}{i}"
        if columns == 6:
            rows.append([qid, "Q0", doc, "1", draw(_SCORE), draw(st.sampled_from(["t", "u"]))])
        else:
            rows.append([qid, "0", doc, str(draw(st.integers(-3, 5)))])
    seps = [sep] * len(rows)
    extra: tuple[int, str] | None = None
    change = draw(st.sampled_from(["none", "id", "value", "sep", "line", "dup", "bom", "crlf"]))
    at = draw(st.integers(0, len(rows) - 1))
    if change == "id":
        rows[at][draw(st.sampled_from([0, 2]))] = draw(_HOSTILE_ID)
    elif change == "value":
        rows[at][-2 if columns == 6 else -1] = draw(_HOSTILE_NUMBER)
    elif change == "sep":
        seps[at] = draw(_SEP)
    elif change == "line":
        extra = (at, draw(_EXTRA_LINE))
    elif change == "dup":
        rows.append(list(rows[at]))
        seps.append(sep)
    lines = [s.join(r) + "\n" for s, r in zip(seps, rows, strict=True)]
    if extra is not None:
        lines.insert(extra[0], extra[1])
    text = "".join(lines)
    if change == "bom":
        text = "\ufeff" + text
    if change == "crlf":
        text = text.replace("\n", "\r\n")
    data = text.encode()
    return gzip.compress(data) if draw(st.booleans()) else data


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_trec(6))
def test_a_run_the_fast_scan_accepts_reads_the_same_exactly(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "r.trec"
        path.write_bytes(data)
        found = scan_run(path)
        if found is None:
            return
        table, tag = found
        fast = sorted(zip(*(table.column(c).to_pylist() for c in table.column_names), strict=True))
        twice = rank_runs([table])[1] == [0]  # the ranking's hash finds a pair listed twice
        try:
            exact = read_trec_run(path)
        except InputError as err:
            assert twice, f"fast scan accepted what the reader refuses: {err}"
            return
    assert not twice
    rows = sorted(zip(exact.qids, exact.doc_ids, exact.scores, strict=True))
    assert [(q, d) for q, d, _ in fast] == [(q, d) for q, d, _ in rows]
    assert all(_same(a[2], b[2]) for a, b in zip(fast, rows, strict=True))
    assert tag == (exact.tags[0] if len(exact.tags) == 1 else None)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_trec(4))
def test_qrels_the_fast_scan_accepts_read_the_same_exactly(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "q.qrels"
        path.write_bytes(data)
        table = scan_qrels(path)
        if table is None:
            return
        fast = sorted(zip(*(table.column(c).to_pylist() for c in table.column_names), strict=True))
        twice = in_pair_order(table) is None  # ingest_labels' check of a pair listed twice
        try:
            exact = read_trec_qrels(path)
        except InputError as err:
            assert twice, f"fast scan accepted what the reader refuses: {err}"
            return
    assert not twice
    assert fast == sorted(zip(exact.qids, exact.doc_ids, exact.grades, strict=True))


def test_a_byte_order_mark_then_a_separator_is_an_empty_qid_for_both_readers(
    tmp_path: Path,
) -> None:
    # Arrow's reader skips the mark, so the first line would read with qid ''; the exact
    # reader (as trec_eval) sees five columns on line 1 and refuses the file.
    path = tmp_path / "r.trec"
    path.write_bytes(b"\xef\xbb\xbf Q0 d0 1 0.5 t\nq1 Q0 d1 1 0.5 t\n")
    assert scan_run(path) is None
    with pytest.raises(InputError, match="line 1: expected 6"):
        read_trec_run(path)


_SCORES = [
    "1",
    "+1",
    "-1",
    ".5",
    "5.",
    "+.5",
    "-.5e3",
    "1e400",
    "-1e400",
    "1e-400",
    "inf",
    "-inf",
    "Infinity",
    "INF",
    "nan",
    "NaN",
    "-nan",
    "NA",
    "null",
    "0x1p3",
    "1_000",
    "1,5",
    "1e",
    "e5",
    ".",
    "-",
    "+",
    "1.5e+",
    "1e+5",
    "0.1",
    "00012",
    "1.#IND",
    "N/A",
    "true",
    "1d",
    "1f",
    "0X10",
    "1E5",
    "-0",
    "-0.0",
    "4.9406564584124654e-324",
    "2.4703282292062328e-324",
    "1.7976931348623158e308",
    "1.7976931348623159e308",
]


@pytest.mark.parametrize("score", _SCORES)
def test_a_score_the_csv_reader_reads_is_the_exact_readers_double(
    score: str, tmp_path: Path
) -> None:
    # Scores are read by Arrow's CSV reader: whatever it reads must be what strtod reads (the
    # exact reader), bit for bit; NaN and words it takes for null go to the exact reader.
    path = tmp_path / "r.trec"
    path.write_text(f"q1 Q0 d1 1 {score} t\nq1 Q0 d2 2 1.0 t\n")
    found = scan_run(path)
    if found is None:
        return
    fast = found[0].column("score").to_pylist()[0]
    exact = read_trec_run(path).scores[0]
    assert repr(fast) == repr(exact)


_RUN_LINES = b"q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\nq2 Q0 d1 1 0.5 t\n"


@pytest.mark.parametrize(
    ("framing", "readable"),
    [
        ("one member", True),
        ("two members", True),  # `cat a.gz b.gz`: gzip reads both, so must the scan
        ("zero padding", True),  # tape-style padding after the last member is ignored
        ("cut short", False),
        ("garbage after", False),
    ],
)
def test_the_scan_reads_a_gzip_file_as_the_gzip_module_does(
    tmp_path: Path, framing: str, readable: bool
) -> None:
    half = _RUN_LINES.index(b"q2")
    data = {
        "one member": gzip.compress(_RUN_LINES),
        "two members": gzip.compress(_RUN_LINES[:half]) + gzip.compress(_RUN_LINES[half:]),
        "zero padding": gzip.compress(_RUN_LINES) + b"\0" * 512,
        "cut short": gzip.compress(_RUN_LINES)[:-6],
        "garbage after": gzip.compress(_RUN_LINES) + b"PK\x03\x04 not gzip",
    }[framing]
    path = tmp_path / "r.trec.gz"
    path.write_bytes(data)
    found = scan_run(path)
    try:
        expected = gzip.decompress(data)
    except (OSError, EOFError):
        expected = None
    assert (expected is not None) == readable
    if not readable:
        assert found is None  # the exact reader then says what is wrong with the file
        return
    assert found is not None
    assert found[0].column("doc_id").to_pylist() == ["d1", "d2", "d1"]
    assert found[0].num_rows == expected.count(b"\n")
