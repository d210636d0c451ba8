"""`ingest queries` with groups: a `qid<TAB>group` file (--groups), a TSV group column, a JSONL
`group` key (string or list); replacing a query's groups; refusals that name the file, the line
and what to do, and leave the database exactly as it was."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import judgepool as jp
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.query_groups import group_members, membership_rows
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]
TOPICS = "q1\tfirst question\nq2\tsecond question\nq3\tthird question\n"


def _memberships() -> list[tuple[str, str]]:
    return membership_rows(Store())


def test_a_groups_file_gives_each_query_one_or_more_groups(cli: Cli, write: Writer) -> None:
    topics = write("topics.tsv", TOPICS)
    groups = write("groups.tsv", "qid\tgroup\nq1\tfactoid\nq1\ten\nq2\thowto\n\nq2\ten\n")
    done = cli("ingest", "queries", topics, "--groups", groups)
    assert done.code == 0, done.err
    assert "3 queries (0 replaced) [tsv]; 4 group memberships in 3 groups from" in done.out
    assert group_members(Store()) == {"en": ("q1", "q2"), "factoid": ("q1",), "howto": ("q2",)}
    # Again, with another file: the queries it names get its groups; q2 keeps its own.
    again = write("groups2.tsv", "q1\tlist\nq3\tlist\n")
    assert cli("ingest", "queries", topics, "--groups", again).code == 0
    assert _memberships() == [("q1", "list"), ("q2", "en"), ("q2", "howto"), ("q3", "list")]


def test_a_tsv_group_column_and_a_jsonl_group_key(cli: Cli, write: Writer) -> None:
    tsv = write(
        "topics.tsv", "qid\ttext\tgroup\nq1\tfirst\tfactoid,en\nq2\tsecond\t\nq3\tthird\thowto\n"
    )
    assert cli("ingest", "queries", tsv).code == 0
    assert _memberships() == [("q1", "en"), ("q1", "factoid"), ("q3", "howto")]
    jsonl = write(
        "topics.jsonl",
        '{"qid": "q1", "text": "first", "group": "list"}\n'
        '{"qid": "q3", "text": "third", "group": ["a", "b"]}\n'
        '{"qid": "q4", "text": "fourth", "group": null}\n',
    )
    assert cli("ingest", "queries", jsonl).code == 0
    # The file's queries got exactly its groups (q4 none); q2, not in it, is untouched.
    assert _memberships() == [("q1", "list"), ("q3", "a"), ("q3", "b")]
    texts = jp.open(Store().path).query_groups()
    assert texts.columns == ["qid", "group"] and texts.height == 3


def test_a_header_row_is_read_as_one(cli: Cli, write: Writer) -> None:
    """`qid<TAB>text` as a first line names the columns: it is not a query called 'qid'."""
    topics = write("topics.tsv", "query_id\tquery\nq1\tfirst\n")
    assert cli("ingest", "queries", topics).code == 0
    with Store().read() as con:
        assert con.execute("SELECT qid, text FROM queries").fetchall() == [("q1", "first")]


@pytest.mark.parametrize(
    ("groups", "said"),
    [
        ("q1\tfactoid\nq1 factoid\n", "groups.tsv, line 2: expected `qid<TAB>group`, found 1"),
        ("q1\tfactoid\nq2\t  \n", "groups.tsv, line 2: empty group name"),
        ("q1\ta,b\n", "groups.tsv, line 1: group 'a,b' contains a comma"),
        ("q1\tfac\x07toid\n", "contains a control character (U+0007)"),
        (
            "q1\tfactoid\nq2\tx\nq1\tfactoid\n",
            "line 3: query 'q1' is put in group 'factoid' twice (first on line 1)",
        ),
        ("q1\tfactoid\nq9\tfactoid\n", "groups.tsv, line 2: qid 'q9' is not a query"),
        ("q 1\tfactoid\n", "qid 'q 1' contains whitespace"),
        ("\n\n", "the file has no entries"),
    ],
)
def test_a_bad_groups_file_is_refused_and_nothing_is_written(
    cli: Cli, write: Writer, groups: str, said: str
) -> None:
    assert (
        cli(
            "ingest",
            "queries",
            write("old.tsv", "q1\told text\n"),
            "--groups",
            write("old-groups.tsv", "q1\told\n"),
        ).code
        == 0
    )
    topics = write("topics.tsv", TOPICS)
    done = cli("ingest", "queries", topics, "--groups", write("groups.tsv", groups))
    assert done.code == 2 and said in done.err and " — " in done.err, done.err
    with Store().read() as con:  # neither the texts nor the groups of the call were written
        assert con.execute("SELECT qid, text FROM queries").fetchall() == [("q1", "old text")]
    assert _memberships() == [("q1", "old")]


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [
        ("t.tsv", "qid\ttext\tgroup\nq1\tfirst\n", "line 2: expected 3 tab-separated columns"),
        ("t.tsv", "qid\ttext\tgroup\nq1\tfirst\ta,,b\n", "line 2: empty group name"),
        ("t.tsv", "qid\ttext\tgroup\nq1\tfirst\ta,a\n", "group 'a' is listed twice on this line"),
        ("t.tsv", "qid\ttext\tgroup\n", "the file has no entries (only a header row)"),
        (
            "t.tsv",
            "qid\ttext\tlang\nq1\tfirst\ten\n",
            "line 1: the first line looks like a header row, but its columns (qid, text, lang)",
        ),
        (
            "t.jsonl",
            '{"qid": "q1", "text": "x", "group": 3}\n',
            "'group' must be a string or a list of strings, found int 3",
        ),
        ("t.jsonl", '{"qid": "q1", "text": "x", "group": ["a", 1]}\n', "found list"),
    ],
)
def test_a_bad_group_column_is_refused(
    cli: Cli, write: Writer, name: str, content: str, said: str
) -> None:
    done = cli("ingest", "queries", write(name, content))
    assert done.code == 2 and said in done.err and " — " in done.err, done.err
    assert not Store().exists() or _memberships() == []


def test_groups_given_twice_or_for_several_files_are_refused(cli: Cli, write: Writer) -> None:
    grouped = write("t.tsv", "qid\ttext\tgroup\nq1\tfirst\ta\n")
    groups = write("g.tsv", "q1\tb\n")
    done = cli("ingest", "queries", grouped, "--groups", groups)
    assert done.code == 2 and "give the groups once" in done.err
    done = cli("ingest", "queries", grouped, write("u.tsv", TOPICS), "--groups", groups)
    assert done.code == 2 and "--groups goes with one queries file" in done.err
    assert not Store().exists()


def test_a_dataframe_group_column_and_a_groups_file_with_a_dataframe(
    tmp_path: Path, write: Writer
) -> None:
    """The library's DataFrame path keeps groups (a list or one name per row, or a groups file)
    and records them as the DataFrame's, never as the temporary file's."""
    import polars as pl

    db = jp.open(tmp_path / "g.duckdb")
    done = db.ingest_queries(
        pl.DataFrame({"qid": ["1", "2"], "text": ["a", "b"], "group": [["x", "y"], ["x"]]})
    )
    assert (done.memberships, done.groups, done.groups_from) == (3, 2, "DataFrame")
    assert sorted(db.query_groups().rows()) == [("1", "x"), ("1", "y"), ("2", "x")]
    groups = write("g.tsv", "1\tz\n")
    done = db.ingest_queries(pl.DataFrame({"qid": ["1", "2"], "text": ["a", "b"]}), groups=groups)
    assert done.groups_from == str(groups)
    assert sorted(db.query_groups().rows()) == [("1", "z"), ("2", "x")]
