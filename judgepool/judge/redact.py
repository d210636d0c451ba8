"""Keep secrets out of what we store and print: provider keys, and credentials inside URLs.

Keys are read by litellm from the environment and never pass through our code, but an error
message from a client library or a server can quote one, and so can a provider's answer (a proxy
that echoes the request, a model that repeats its headers), or an api_base with a password or a
`?key=` in it. Everything we write to the database, the cache or the terminal that did not come
from us goes through `redact` first: the value of every environment variable whose name marks a
secret (`*_API_KEY`, `*_KEY`, `*_TOKEN`, `*_SECRET`, `*_PASSWORD`, `*_CREDENTIALS`, `*APIKEY`,
`*_TOKEN_*` ...: every provider key litellm reads, e.g. OPENAI_API_KEY, ANTHROPIC_API_KEY,
AWS_BEARER_TOKEN_BEDROCK, WATSONX_APIKEY), values of 8 characters or more, is replaced by `***`,
and so are URL credentials and strings shaped like well-known keys.
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import urlsplit

MASK = "***"
_SECRET_NAMES = re.compile(
    r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?|AUTH)(_|$)|APIKEY",
    re.IGNORECASE,
)
_URL_CREDENTIALS = re.compile(r"(?<=://)[^/@\s:]+:[^/@\s]+@")
_KEYISH = re.compile(
    r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{12,}"  # OpenAI, Anthropic (sk-ant-...), and kin
    r"|\b(AIza)[0-9A-Za-z_\-]{30,}"  # Google
    r"|\b(hf|gh[pousr]|xai|gsk)_[A-Za-z0-9]{20,}"  # Hugging Face, GitHub, xAI, Groq
)


def secret_names() -> list[str]:
    """The environment variables whose values `redact` masks (names only, never values)."""
    return sorted(k for k, v in os.environ.items() if _SECRET_NAMES.search(k) and len(v) >= 8)


def _secret_values() -> list[str]:
    values = {os.environ[k] for k in secret_names()}
    return sorted(values, key=len, reverse=True)


def _keyish(match: re.Match[str]) -> str:
    prefix = next(group for group in match.groups() if group is not None)
    after = match.group(0)[len(prefix) : len(prefix) + 1]
    return prefix + (after if after in ("-", "_") else "") + MASK


class Redactor:
    """`redact` with the environment's secrets read once, for many strings at a time (a batch's
    thousands of answers: reading the environment is most of the cost of one `redact`)."""

    def __init__(self) -> None:
        self.values = _secret_values()

    def text(self, text: str) -> str:
        for value in self.values:
            text = text.replace(value, MASK)
        text = _URL_CREDENTIALS.sub(MASK + "@", text)
        return _KEYISH.sub(_keyish, text)

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.value(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value


def redact(text: str) -> str:
    """`text` with environment secrets, URL credentials and key-shaped strings masked."""
    return Redactor().text(text)


def host_of(api_base: str | None) -> str | None:
    """host[:port] of an api_base (never its user, password, path or query), None when unset."""
    if not api_base:
        return None
    parts = urlsplit(api_base if "://" in api_base else f"http://{api_base}")
    if parts.hostname is None:
        return None
    return f"{parts.hostname}:{parts.port}" if parts.port else parts.hostname
