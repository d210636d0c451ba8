"""`judgepool prompt render | list | show` and `db.render_prompt`: what is shown is what is sent.

A judge run against the fake server records every request it receives; the prompt rendered for
each labelled pair, with the run's options, must be that request byte for byte (messages and
body) and carry the label's cache key.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import judgepool as jp
from judgepool.judge.prompt import load_template
from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult
from tests.fake_openai import FakeOpenAI
from tests.fake_reasoning import reasoned
from tests.judge_fixtures import collection_copy

Cli = Callable[..., CliResult]
PROMPTS = Path(jp.__file__).parent / "judge" / "prompts"


@pytest.fixture
def store(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Store:
    return collection_copy(tmp_path_factory, tmp_path / "test.duckdb", doc_qrels=True)


def labels(store: Store, level: str) -> list[tuple[str, str, dict[str, Any]]]:
    with store.read() as con:
        rows = con.execute(
            "SELECT qid, doc_id, provenance FROM judgments WHERE source = 'judge' AND "
            "status = 'ok' AND level = ? AND provenance NOT LIKE '%\"hit\": true%' ORDER BY id",
            [level],
        ).fetchall()
    return [(q, d, json.loads(p)) for q, d, p in rows]


def rendered(cli: Cli, qid: str, doc_id: str, *options: str) -> dict[str, Any]:
    result = cli("prompt", "render", "--qid", qid, "--doc", doc_id, "--json", *options)
    assert result.code == 0, result.err
    found: dict[str, Any] = json.loads(result.out)
    return found


@pytest.mark.parametrize(
    ("level", "options"),
    [("chunk", ("--passage-tokens", "16")), ("doc", ("--max-chunks", "2", "--run", "A"))],
)
def test_the_rendered_prompt_is_what_the_fake_received(
    store: Store, fake: FakeOpenAI, cli: Cli, level: str, options: tuple[str, ...]
) -> None:
    model = ("--model", "openai/fake-model")
    result = cli(
        "judge",
        *model,
        "--api-base",
        fake.api_base,
        "--no-progress",
        "--level",
        level,
        "--no-canaries",
        *options,
    )  # the holes' requests only
    assert result.code == 0, result.err
    received = [r.body for r in fake.requests]
    paid = labels(store, level)
    assert len(paid) == fake.calls == len(received) > 0
    for qid, doc_id, provenance in paid:
        found = rendered(cli, qid, doc_id, "--level", level, *model, *options)
        assert found["cache_key"] == provenance["cache_key"]
        assert found["shown"] == provenance["shown"]
        assert found["truncated"] == provenance["truncated"]
        assert (
            found["body"] == received[[r["messages"] for r in received].index(found["messages"])]
        )  # the very request the judge sent for it
        assert found["body"]["messages"] == found["messages"]
    if level == "chunk":
        assert any(p["truncated"] for _, _, p in paid)  # the budget of 16 cut some passages


def test_a_reasoning_model_shows_the_messages_as_litellm_sends_them(
    store: Store, fake: FakeOpenAI, cli: Cli
) -> None:
    fake.reply = reasoned
    options = ("--model", "openai/o3-mini", "--reasoning-effort", "high")
    result = cli("judge", *options, "--api-base", fake.api_base, "--no-progress")
    assert result.code == 0, result.err
    found = rendered(cli, "q1", "c1", *options)
    sent = next(r.body for r in fake.requests if "Water boils at 100" in json.dumps(r.body))
    assert found["body"] == sent
    assert [m["role"] for m in found["messages"]] == ["system", "user"]  # ours, before litellm
    text = cli("prompt", "render", "--qid", "q1", "--doc", "c1", *options)
    assert text.code == 0, text.err
    assert "litellm sends openai/o3-mini these messages as user + user" in text.err
    assert text.out.count("--- user ---") == 2 and "--- system ---" not in text.out
    assert f"cache key: {found['cache_key']}" in text.out
    assert '"reasoning_effort": "high"' in text.out


def test_the_text_output_shows_both_messages_fenced(store: Store, cli: Cli) -> None:
    result = cli("prompt", "render", "--qid", "q1", "--doc", "c1")
    assert result.code == 0, result.err
    template = load_template()
    assert f"template relevance-v1 (version relevance-v1, {template.hash})" in result.out
    assert "cache key: none without --model" in result.out
    system, user = result.out.split("--- system ---\n")[1].split("--- user ---\n")
    assert system.rstrip("\n") == template.system
    assert (
        "<<<PASSAGE\nWater boils at 100 degrees Celsius at sea level. [[grade=3]]\nPASSAGE>>>"
        in user
    )
    assert "<<<QUERY\nwhat is the boiling point of water\nQUERY>>>" in user


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--qid", "q9", "--doc", "c1"), "(q9, c1) at the chunk level: no query text"),
        (("--qid", "q2", "--doc", "c9"), "(q2, c9) at the chunk level: no passage text"),
        (("--qid", "q1", "--doc", "nope"), "no passage text"),
        (("--qid", "q1", "--doc", "P6", "--level", "doc"), "no retrieved chunk"),
        (("--qid", "q1", "--doc", "c1", "--model", "offline"), "offline sends no prompt"),
        (("--qid", "q1", "--doc", "c1", "--temperature", "0.5"), "need --model"),
        (("--qid", "q1", "--doc", "c1", "--template", "nope"), "unknown template 'nope'"),
    ],
)
def test_pairs_no_judge_is_asked_about_are_refused(
    store: Store, cli: Cli, args: tuple[str, ...], message: str
) -> None:
    result = cli("prompt", "render", *args)
    assert result.code == 2
    assert result.err.startswith("error: ") and message in result.err and " — " in result.err


def test_list_and_show(cli: Cli, tmp_path: Path) -> None:
    template = load_template("relevance-v1")
    listed = cli("prompt", "list")
    assert listed.code == 0
    assert listed.out.splitlines()[2].split() == [
        "relevance-v1",
        "relevance-v1",
        template.hash,
        "judge/prompts/relevance-v1.txt",
    ]
    shown = cli("prompt", "show", "relevance-v1")
    assert shown.code == 0
    packaged = Path(jp.__file__).parent / "judge" / "prompts" / "relevance-v1.txt"
    assert shown.out == packaged.read_text(encoding="utf-8")
    copy = tmp_path / "copy.txt"
    copy.write_text(shown.out, encoding="utf-8")
    assert load_template(str(copy)).hash == template.hash  # the very file that is hashed
    assert template.hash in shown.err
    assert cli("prompt", "show", "nope").code == 2


def test_the_library_renders_the_same_prompt(store: Store, cli: Cli) -> None:
    db = jp.open(store.path)
    found = db.render_prompt("q1", "P1", level="doc", model="openai/gpt-4o-mini", runs="A")
    assert found.as_dict() == rendered(
        cli, "q1", "P1", "--level", "doc", "--run", "A", "--model", "openai/gpt-4o-mini"
    )
    assert found.parameters == {"temperature": 0.0, "max_tokens": 256}
    assert [t.name for t in jp.templates()] == ["relevance-v1"]
    with pytest.raises(jp.errors.UsageError, match="unknown prompt option"):
        db.render_prompt("q1", "c1", depth=3)


SECRET = "root:$6$s3cr3tHASHnobodyMaySee:19000:0:99999:7:::"


def test_a_template_is_read_from_the_path_the_user_names(
    store: Store, cli: Cli, tmp_path: Path
) -> None:
    """Issue 22.8: `evil.tmpl` and `./evil.tmpl` (both existing) were rejected as "unknown
    template" while `/abs/path` was read. The rule: a value with a separator or a suffix is a
    path; a bare name is a packaged template."""
    own = (PROMPTS / "relevance-v1.txt").read_text(encoding="utf-8")
    (tmp_path / "mine.tmpl").write_text(own.replace("relevance-v1", "mine-v1"), encoding="utf-8")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "mine").write_text(own, encoding="utf-8")  # no suffix, a folder
    for given in ("mine.tmpl", "./mine.tmpl", str(tmp_path / "mine.tmpl")):
        found = rendered(cli, "q1", "c1", "--template", given)
        assert found["template"]["version"] == "mine-v1", given
    assert rendered(cli, "q1", "c1", "--template", "prompts/mine")["template"]["name"] == "mine"
    assert cli("prompt", "show", "./mine.tmpl").out.startswith("# judgepool")
    (tmp_path / "relevance-v1").write_text("not a template\n", encoding="utf-8")
    packaged = rendered(cli, "q1", "c1", "--template", "relevance-v1")  # a bare name
    assert packaged["template"]["hash"] == load_template("relevance-v1").hash
    (tmp_path / "mine").write_text(own, encoding="utf-8")
    bare = cli("prompt", "render", "--qid", "q1", "--doc", "c1", "--template", "mine")
    assert bare.code == 2 and "unknown template 'mine'" in bare.err
    assert "for the file mine here: ./mine" in bare.err
    missing = cli("prompt", "show", "gone.tmpl")
    assert missing.code == 2 and "no template file at gone.tmpl: it does not exist" in missing.err
    assert "not a regular file" in cli("prompt", "show", str(tmp_path)).err


def test_no_template_error_echoes_what_the_file_holds(
    store: Store, cli: Cli, tmp_path: Path
) -> None:
    """Issue 22.8: `--template /etc/shadow` printed the file's first line in its error."""
    shadow = tmp_path / "shadow"
    shadow.write_text(SECRET + "\n" + SECRET + "\n", encoding="utf-8")
    binary = tmp_path / "blob.tmpl"
    binary.write_bytes(b"# version: x\n\xff\xfe" + SECRET.encode())
    huge = tmp_path / "huge.txt"
    huge.write_text("# version: x\n" + SECRET * 40_000, encoding="utf-8")
    sections = tmp_path / "sections.txt"
    sections.write_text(f"# version: x\n[system]\n{SECRET}\n[system]\n{SECRET}\n")
    said = {
        str(shadow): "line 1: text before the first section",
        str(binary): "line 2: not UTF-8 text",
        str(huge): "too large for a template",
        str(sections): "line 4: section [system] appears twice",
    }
    for path, problem in said.items():
        for verb in (("show", path), ("render", "--qid", "q1", "--doc", "c1", "--template", path)):
            result = cli("prompt", *verb)
            assert result.code == 2 and problem in result.err, (verb, result.err)
            assert "s3cr3t" not in result.err + result.out, verb
    with pytest.raises(jp.errors.UsageError) as caught:
        load_template(str(shadow))
    assert "s3cr3t" not in f"{caught.value} {caught.value.hint}"


def test_packaged_names_hold_no_dot_so_no_file_name_is_taken_for_one() -> None:
    names = [p.stem for p in PROMPTS.glob("*.txt")]
    assert names and all("." not in n and "/" not in n for n in names)
