"""Prompt templates: load a versioned template file, hash it, and render a (query, passage) pair.

A template is a text file (judge/prompts/<name>.txt, or any path: a value with a `/` or a
suffix is a path, a bare name a packaged template, `template_path`): `# key: value` header lines
(`version` is required), then a `[system]` and a `[user]` section. The user section holds the
placeholders `{{query}}` and `{{passage}}` once each, between fence lines. The hash of the whole
file goes into every label's provenance and every cache key, so editing a template (even its
comments) can never be mistaken for the old one.

Rendering fills both placeholders in one pass (a query cannot inject a passage placeholder) with
the *normalised* texts, the same texts the cache key is built from, and breaks up any `<<<` or
`>>>` inside them, so the data can never close its fence and pose as instructions.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from judgepool.errors import UsageError
from judgepool.pooling.io.text import normalise

DEFAULT_TEMPLATE = "relevance-v1"

_PLACEHOLDER = re.compile(r"\{\{(query|passage)\}\}")
_HEADER = re.compile(r"^#\s*([A-Za-z][\w-]*)\s*:\s*(.*?)\s*$")
_FENCE_RUN = re.compile(r"<<<|>>>")


@dataclass(frozen=True)
class Template:
    """A loaded template: its version, the sha256 of its file, and its two message texts."""

    name: str
    version: str
    hash: str
    system: str
    user: str
    source: str

    def render(self, query: str, passage: str) -> list[dict[str, str]]:
        """The chat messages for one pair (normalised, fence-safe texts)."""
        values = {"query": fence_safe(normalise(query)), "passage": fence_safe(normalise(passage))}
        user = _PLACEHOLDER.sub(lambda m: values[m.group(1)], self.user)
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]

    def describe(self) -> dict[str, str]:
        """The provenance of this template."""
        return {"name": self.name, "version": self.version, "hash": self.hash}


def fence_safe(text: str) -> str:
    """Break every `<<<` / `>>>` run so that data cannot forge a fence line."""
    return _FENCE_RUN.sub(lambda m: " ".join(m.group(0)), text)


def _parse(text: str, name: str, source: str) -> Template:
    header: dict[str, str] = {}
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped in ("[system]", "[user]"):
            current = stripped[1:-1]
            if current in sections:
                raise UsageError(
                    f"template {source}, line {number}: section [{current}] appears twice",
                    "keep one [system] and one [user] section",
                )
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
        elif (found := _HEADER.match(stripped)) is not None:
            header[found.group(1).lower()] = found.group(2)
        elif stripped and not stripped.startswith("#"):  # its text is not echoed: any file
            raise UsageError(
                f"template {source}, line {number}: text before the first section (is it a "
                "template file?)",
                "start the template with '# version: NAME' header lines, then [system] and [user]",
            )
    version = header.get("version", "")
    if not version:
        raise UsageError(
            f"template {source} has no '# version: ...' header line",
            "add a first line such as '# version: my-prompt-v1' (it names the labels' judge)",
        )
    if set(sections) != {"system", "user"}:
        raise UsageError(
            f"template {source} needs a [system] and a [user] section",
            "add the missing section header on a line of its own",
        )
    system = "\n".join(sections["system"]).strip()
    user = "\n".join(sections["user"]).strip()
    for key in ("query", "passage"):
        count = user.count("{{" + key + "}}")
        if count != 1:
            raise UsageError(
                f"template {source}: the [user] section has {{{{{key}}}}} {count} times, not once",
                f"put {{{{{key}}}}} exactly once in the [user] section",
            )
    digest = hashlib.sha256(text.replace("\r\n", "\n").encode("utf-8")).hexdigest()
    return Template(name, version, f"sha256:{digest[:32]}", system, user, source)


#: The packaged templates (plain files next to this module: works installed or editable).
PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"


MAX_TEMPLATE_BYTES = 1_000_000  # a template is a page of text; a larger file is not one


def template_path(name_or_path: str) -> Path | None:
    """The file `name_or_path` names, or None when it is a packaged template's name.

    The rule: a value with a path separator (`./mine.txt`, `prompts/mine`, `/abs/mine.tmpl`) or a
    suffix (`mine.txt`, `evil.tmpl`) is a path, read from the file system as it stands; a bare
    name (`relevance-v1`: no separator, no dot) is a packaged template. Packaged names never
    hold a dot, so no file name can be mistaken for one (`./relevance-v1` is the file)."""
    separators = [sep for sep in ("/", os.sep, os.altsep) if sep]
    if any(sep in name_or_path for sep in separators) or Path(name_or_path).suffix:
        return Path(name_or_path)
    return None


def _read_file(path: Path) -> str:
    """The template file's text. Refused when missing, not a regular file, too large or not
    UTF-8; no error says what the file holds (it may be anyone's file)."""
    if not path.is_file():
        what = "it is not a regular file" if path.exists() else "it does not exist"
        raise UsageError(
            f"no template file at {path}: {what}",
            "give the path of a template file (a packaged template's text, edited, is one), or "
            f"a packaged template's name: {', '.join(packaged_names())}",
            value=str(path),
        )
    size = path.stat().st_size
    if size > MAX_TEMPLATE_BYTES:
        raise UsageError(
            f"template file {path} is {size:,} bytes: too large for a template "
            f"(at most {MAX_TEMPLATE_BYTES:,})",
            "give the path of a template file (a packaged template's text, edited, is one)",
            value=str(path),
        )
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise UsageError(
            f"template file {path}, line {line}: not UTF-8 text (is it a template file?)",
            "save the template as UTF-8 text",
            value=str(path),
        ) from None


def packaged_names() -> list[str]:
    """The names of the packaged templates."""
    return sorted(p.stem for p in PROMPTS_DIR.glob("*.txt"))


def load_template(name_or_path: str = DEFAULT_TEMPLATE) -> Template:
    """A packaged template by name (`relevance-v1`), or a template file by path (the rule:
    `template_path`)."""
    path = template_path(name_or_path)
    if path is not None:
        return _parse(_read_file(path), path.stem, str(path))
    packaged = PROMPTS_DIR / f"{name_or_path}.txt"
    if not packaged.is_file():
        local = Path(name_or_path).is_file()
        raise UsageError(
            f"unknown template {name_or_path!r}",
            f"use one of {', '.join(packaged_names())}, or a template file's path"
            + (f" (for the file {name_or_path} here: ./{name_or_path})" if local else ""),
            value=name_or_path,
        )
    text = packaged.read_text(encoding="utf-8")
    return _parse(text, name_or_path, f"judge/prompts/{packaged.name}")


def templates() -> list[Template]:
    """The packaged templates, by name (what `judgepool prompt list` shows)."""
    return [load_template(p.stem) for p in sorted(PROMPTS_DIR.glob("*.txt"))]


def template_text(name_or_path: str = DEFAULT_TEMPLATE) -> tuple[Template, str]:
    """A template and its file's text, as it is hashed (what `judgepool prompt show` prints: a
    copy of it, edited and given a new version, is a template of one's own)."""
    loaded = load_template(name_or_path)
    path = template_path(name_or_path)
    if path is None:
        return loaded, (PROMPTS_DIR / f"{name_or_path}.txt").read_text(encoding="utf-8")
    return loaded, _read_file(path)
