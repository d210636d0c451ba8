"""Keep secrets out of what we store and print: provider keys, and credentials inside URLs.

Keys are read by litellm from the environment and never pass through our code, but an error
message from a client library or a server can quote one (or an api_base with a password or a
`?key=` in it). Everything we write to the database, the cache or the terminal that did not
come from us goes through `redact` first.
"""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit

_SECRET_NAMES = re.compile(r"(^|_)(KEY|TOKEN|SECRET|PASSWORD)$", re.IGNORECASE)
_URL_CREDENTIALS = re.compile(r"(?<=://)[^/@\s:]+:[^/@\s]+@")
_KEYISH = re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{12,}")


def _secret_values() -> list[str]:
    values = [v for k, v in os.environ.items() if _SECRET_NAMES.search(k) and len(v) >= 8]
    return sorted(set(values), key=len, reverse=True)


def redact(text: str) -> str:
    """`text` with environment secrets, URL credentials and key-shaped strings masked."""
    for value in _secret_values():
        text = text.replace(value, "***")
    text = _URL_CREDENTIALS.sub("***@", text)
    return _KEYISH.sub(lambda m: m.group(1) + "-***", text)


def host_of(api_base: str | None) -> str | None:
    """host[:port] of an api_base (never its user, password, path or query), None when unset."""
    if not api_base:
        return None
    parts = urlsplit(api_base if "://" in api_base else f"http://{api_base}")
    if parts.hostname is None:
        return None
    return f"{parts.hostname}:{parts.port}" if parts.port else parts.hostname
