"""The records and wire helpers of tests/fake_openai_batch.py: files, batches, JSON, multipart.

Kept apart from the server so that each file stays small; nothing here opens a socket.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

#: Conservative defaults, as OpenAI documents them: requests and bytes per input file.
OPENAI_MAX_REQUESTS = 50_000
OPENAI_MAX_BYTES = 200 * 1024 * 1024
ROUTES = [
    ("POST", re.compile(r"/v1/files/?$"), "upload"),
    ("GET", re.compile(r"/v1/files/?$"), "files"),
    ("GET", re.compile(r"/v1/files/(?P<id>[^/]+)/content$"), "content"),
    ("GET", re.compile(r"/v1/files/(?P<id>[^/]+)$"), "file"),
    ("POST", re.compile(r"/v1/batches/?$"), "create"),
    ("GET", re.compile(r"/v1/batches/?$"), "list"),
    ("GET", re.compile(r"/v1/batches/(?P<id>[^/]+)$"), "retrieve"),
    ("POST", re.compile(r"/v1/batches/(?P<id>[^/]+)/cancel$"), "cancel"),
]


@dataclass(frozen=True)
class LineFault:
    """A scripted per-line fault: `error` (an error object in the error file), `missing` (no
    line at all), `corrupt` (a line in the output file that is not JSON), `again` (answered
    twice: the second answer's grade is `code`) or `stray` (answered, plus a line for the
    custom_id `code`, which was never sent)."""

    kind: str
    code: str = "server_error"
    message: str = "The server had an error processing this request."


@dataclass
class StoredFile:
    id: str
    filename: str
    purpose: str
    data: bytes
    created_at: int

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.data),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
        }


@dataclass
class FakeBatch:
    id: str
    input_file_id: str
    endpoint: str
    completion_window: str
    metadata: dict[str, str] | None
    created_at: int
    status: str = "validating"
    polls: int = 0
    lines: list[dict[str, Any]] = field(default_factory=list)
    done: int = 0  # input lines processed so far
    completed: int = 0
    failed: int = 0
    times: dict[str, int] = field(default_factory=dict)
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: list[dict[str, Any]] | None = None

    def describe(self) -> dict[str, Any]:
        total = len(self.lines)
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": self.endpoint,
            "input_file_id": self.input_file_id,
            "completion_window": self.completion_window,
            "status": self.status,
            "created_at": self.created_at,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "errors": {"object": "list", "data": self.errors} if self.errors else None,
            "metadata": self.metadata,
            "request_counts": {"total": total, "completed": self.completed, "failed": self.failed},
            **{f"{name}_at": stamp for name, stamp in self.times.items()},
        }


def line_json(
    batch: FakeBatch,
    n: int,
    custom_id: str,
    response: dict[str, Any] | None,
    error: dict[str, Any] | None,
) -> bytes:
    """One line of an output or error file."""
    return json.dumps(
        {
            "id": f"batch_req_{batch.id}_{n}",
            "custom_id": custom_id,
            "response": response,
            "error": error,
        }
    ).encode()


def to_json(value: Any) -> bytes:
    return json.dumps(value).encode()


def error_json(message: str, code: str | None = None) -> bytes:
    """An OpenAI-shaped error body."""
    return to_json(
        {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": None,
                "code": code,
            }
        }
    )


def multipart_fields(content_type: str, raw: bytes) -> dict[str, tuple[str, bytes]]:
    """The fields of a multipart/form-data body: name -> (filename, bytes)."""
    found = re.search(r'boundary="?([^";]+)"?', content_type)
    if not found:
        return {}
    fields: dict[str, tuple[str, bytes]] = {}
    for part in raw.split(b"--" + found.group(1).encode())[1:]:
        head, sep, body = part.partition(b"\r\n\r\n")
        if not sep:
            continue
        disposition = head.decode("utf-8", "replace")
        name = re.search(r'\bname="([^"]*)"', disposition)
        filename = re.search(r'\bfilename="([^"]*)"', disposition)
        if name:
            fields[name.group(1)] = (
                filename.group(1) if filename else "",
                body.removesuffix(b"\r\n"),
            )
    return fields
