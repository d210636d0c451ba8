"""A real HTTP server on 127.0.0.1 that speaks the OpenAI files and batches protocol, for tests.

The batch judge's tests and benchmark drive the real litellm client against it. It implements
POST /v1/files (multipart upload), GET /v1/files (list), GET /v1/files/{id} and
/v1/files/{id}/content,
POST /v1/batches, GET /v1/batches (list), GET /v1/batches/{id} and POST
/v1/batches/{id}/cancel. A batch moves validating -> in_progress -> completed over a
configurable number of polls (retrieves); it can fail validation (bad lines, duplicate
custom_ids, over the limits), be cancelled (cancelling -> cancelled, with the lines done so
far), or expire with partial output.

Each input line is answered exactly as tests/fake_openai.py answers the same chat request (the
same `reply` function, default `default_reply`: the grade from a `[[grade=N]]` mark in the
passage, same token counts), so batch and online runs of the same pairs get the same grades.
A `Reply` with a status other than 200 becomes a non-200 line in the error file; `fault` scripts
per-line faults (an error object, a missing line, a corrupt line, a line answered twice, a
line for a custom_id never sent). Every request is counted per
route (`counts`), and every answered passage in `by_passage`, so tests can assert exact numbers.
`hold(route)` keeps the answer to the next request of a route back after the server has acted
on it (a batch created, a file stored), so a test can kill its client at exactly that point.

Run as a module from the repository root (`python -m tests.fake_openai_batch`) it serves in its own
process, prints `PORT <n>`, answers GET /stats with its counters and exits by itself when its
parent dies or after --lifetime seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fake_batch_records import (
    OPENAI_MAX_BYTES,
    OPENAI_MAX_REQUESTS,
    ROUTES,
    FakeBatch,
    LineFault,
    StoredFile,
    error_json,
    line_json,
    multipart_fields,
    to_json,
)
from tests.fake_openai import FakeRequest, Reply, default_reply, passage_of

__all__ = ["FakeBatchAPI", "LineFault"]


class FakeBatchAPI:
    """The server: start it, point litellm at `api_base`, script it, read its counters."""

    def __init__(
        self,
        reply: Callable[[FakeRequest], Reply] = default_reply,
        polls_validating: int = 1,
        polls_in_progress: int = 1,
        usage: tuple[int, int] | None = None,
        max_requests: int = OPENAI_MAX_REQUESTS,
        max_bytes: int = OPENAI_MAX_BYTES,
        api_key: str | None = None,
        fault: Callable[[str, FakeRequest], LineFault | None] | None = None,
        expire_after: int | None = None,
        expired_errors: bool = True,
        seed: int = 7,
    ) -> None:
        self.reply = reply
        self.polls_validating = polls_validating
        self.polls_in_progress = polls_in_progress
        self.usage = usage
        self.max_requests = max_requests
        self.max_bytes = max_bytes
        self.api_key = api_key
        self.fault = fault
        self.expire_after = expire_after
        self.expired_errors = expired_errors
        self.random = random.Random(seed)
        self.lock = threading.Lock()
        self.files: dict[str, StoredFile] = {}
        self.batches: dict[str, FakeBatch] = {}
        self.counts: Counter[str] = Counter()
        self.by_passage: Counter[str] = Counter()
        self.http_faults: dict[str, list[Reply]] = {}
        self.holds: dict[str, tuple[threading.Event, threading.Event]] = {}
        self._serial = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeBatchAPI:
        thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeBatchAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting and counters ------------------------------------------------------------

    def push_http_fault(self, route: str, *replies: Reply) -> None:
        """Answer the next requests to `route` (upload, content, file, create, retrieve,
        cancel, list) with these HTTP replies (status, body/content, headers) before serving it."""
        with self.lock:
            self.http_faults.setdefault(route, []).extend(replies)

    def hold(self, route: str) -> tuple[threading.Event, threading.Event]:
        """Hold back the answer to the next request of `route` once the server has acted on it:
        `reached` is set then, and the answer is sent when `release` is set (or after 60 s)."""
        reached, release = threading.Event(), threading.Event()
        with self.lock:
            self.holds[route] = (reached, release)
        return reached, release

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {
                "counts": dict(self.counts),
                "files": len(self.files),
                "batches": {b.id: b.status for b in self.batches.values()},
                "lines_answered": sum(self.by_passage.values()),
            }

    def _next_id(self, prefix: str) -> str:
        self._serial += 1
        return f"{prefix}-fake{self._serial:06d}"

    # -- the batch state machine -----------------------------------------------------------

    def _validate(self, batch: FakeBatch) -> None:
        """Leave `validating`: read the input file's lines, or fail with the reasons."""
        stored = self.files.get(batch.input_file_id)
        errors: list[dict[str, Any]] = []
        lines: list[dict[str, Any]] = []
        if stored is None or stored.purpose != "batch":
            errors.append(
                {
                    "code": "invalid_file",
                    "message": "input file not found or not uploaded with purpose batch",
                    "line": None,
                }
            )
        else:
            if len(stored.data) > self.max_bytes:
                errors.append(
                    {
                        "code": "file_too_large",
                        "line": None,
                        "message": f"file has {len(stored.data)} bytes, limit {self.max_bytes}",
                    }
                )
            seen: set[str] = set()
            for number, raw in enumerate(stored.data.splitlines(), start=1):
                try:
                    line = json.loads(raw)
                    custom_id = line["custom_id"]
                    ok = (
                        line.get("method") == "POST"
                        and line.get("url") == batch.endpoint
                        and isinstance(line.get("body"), dict)
                        and "model" in line["body"]
                    )
                except (ValueError, KeyError, TypeError):
                    errors.append(
                        {
                            "code": "invalid_json_line",
                            "line": number,
                            "message": "line is not a batch request",
                        }
                    )
                    continue
                if not ok:
                    errors.append(
                        {
                            "code": "invalid_request",
                            "line": number,
                            "message": "method, url or body do not match the batch",
                        }
                    )
                elif custom_id in seen:
                    errors.append(
                        {
                            "code": "duplicate_custom_id",
                            "line": number,
                            "message": f"custom_id {custom_id} appears twice",
                        }
                    )
                seen.add(custom_id)
                lines.append(line)
            if len(lines) > self.max_requests:
                errors.append(
                    {
                        "code": "too_many_requests",
                        "line": None,
                        "message": f"{len(lines)} requests, limit {self.max_requests}",
                    }
                )
        if errors:
            batch.status, batch.errors = "failed", errors[:20]
            batch.times["failed"] = int(time.time())
        else:
            batch.status, batch.lines = "in_progress", lines
            batch.times["in_progress"] = int(time.time())

    def _advance(self, batch: FakeBatch) -> None:
        """One retrieve moves the batch along: `polls_validating` retrieves see `validating`,
        the next `polls_in_progress` see `in_progress` (a growing part done), the next one
        sees the end (`completed`, or `expired` when `expire_after` lines were all it did)."""
        if batch.status in ("completed", "failed", "expired", "cancelled"):
            return
        if batch.status == "cancelling":
            self._finish(batch, "cancelled")
            return
        batch.polls += 1
        if batch.status == "validating":
            if batch.polls <= self.polls_validating:
                return
            self._validate(batch)
            if batch.status != "in_progress":
                return
        total = len(batch.lines)
        limit = total if self.expire_after is None else min(total, self.expire_after)
        step = batch.polls - self.polls_validating
        if step <= self.polls_in_progress:
            batch.done = min(limit, total * step // (self.polls_in_progress + 1))
            batch.completed = batch.done
            return
        batch.done = limit
        batch.times["finalizing"] = int(time.time())
        self._finish(batch, "expired" if limit < total else "completed")

    def _finish(self, batch: FakeBatch, status: str) -> None:
        """Answer the lines done so far and write the output and error files."""
        output: list[bytes] = []
        errors: list[bytes] = []
        batch.completed = batch.failed = 0
        for n, line in enumerate(batch.lines[: batch.done]):
            kind, text = self._answerline_json(batch, n, line)
            if kind == "missing":
                continue
            if kind in ("ok", "corrupt"):
                batch.completed += 1
                output.append(text)
            else:
                batch.failed += 1
                errors.append(text)
        if status == "expired" and self.expired_errors:
            for n, line in enumerate(batch.lines[batch.done :], start=batch.done):
                batch.failed += 1
                errors.append(
                    line_json(
                        batch,
                        n,
                        line["custom_id"],
                        None,
                        {
                            "code": "batch_expired",
                            "message": "This request could not be executed "
                            "before the completion window expired.",
                        },
                    )
                )
        self.random.shuffle(output)  # the provider promises no order: neither do we
        if output:
            batch.output_file_id = self._store("batch_output.jsonl", "batch_output", output)
        if errors:
            batch.error_file_id = self._store("batch_errors.jsonl", "batch_output", errors)
        batch.status = status
        batch.times[status] = int(time.time())

    def _store(self, name: str, purpose: str, lines: list[bytes]) -> str:
        file_id = self._next_id("file")
        data = b"".join(text + b"\n" for text in lines)
        self.files[file_id] = StoredFile(file_id, name, purpose, data, int(time.time()))
        return file_id

    def _answerline_json(self, batch: FakeBatch, n: int, line: dict[str, Any]) -> tuple[str, bytes]:
        body = line["body"]
        messages = body.get("messages") or []
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        request = FakeRequest(body, {}, prompt, passage_of(prompt))
        custom_id = line["custom_id"]
        fault = self.fault(custom_id, request) if self.fault is not None else None
        if fault is not None and fault.kind == "missing":
            return "missing", b""
        if fault is not None and fault.kind == "corrupt":
            return "corrupt", b'{"id": "batch_req_x", "custom_id": "' + custom_id.encode()
        if fault is not None and fault.kind not in ("again", "stray"):
            return "error", line_json(
                batch, n, custom_id, None, {"code": fault.code, "message": fault.message}
            )
        reply = self.reply(request)
        self.by_passage[request.passage] += 1
        if reply.status != 200:
            error = {
                "error": {
                    "message": reply.content or "error",
                    "type": "server_error",
                    "param": None,
                    "code": None,
                }
            }
            return "failed", line_json(
                batch,
                n,
                custom_id,
                {"status_code": reply.status, "request_id": f"req_{batch.id}_{n}", "body": error},
                None,
            )
        text = self._answered(batch, n, custom_id, body, prompt, reply.content or "")
        if fault is not None and fault.kind == "again":  # the same line answered twice
            second = f"Weighed once more.\n##final score: {fault.code}"
            text += b"\n" + self._answered(batch, n, custom_id, body, prompt, second)
        elif fault is not None and fault.kind == "stray":  # a line for an id never sent
            text += b"\n" + self._answered(batch, n, fault.code, body, prompt, reply.content or "")
        return "ok", text

    def _answered(
        self,
        batch: FakeBatch,
        n: int,
        custom_id: str,
        body: dict[str, Any],
        prompt: str,
        content: str,
    ) -> bytes:
        """The output line of a chat completion that answered `content`."""
        prompt_tokens, completion_tokens = self.usage or (
            max(1, len(prompt) // 4),
            max(1, len(content) // 4),
        )
        completion = {
            "id": f"chatcmpl-{batch.id}-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        return line_json(
            batch,
            n,
            custom_id,
            {"status_code": 200, "request_id": f"req_{batch.id}_{n}", "body": completion},
            None,
        )

    # -- HTTP --------------------------------------------------------------------------------

    def _route(
        self, method: str, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, bytes, dict[str, str]]:
        path, _, query = path.partition("?")
        matches = [
            (name, found)
            for verb, pattern, name in ROUTES
            if verb == method and (found := pattern.match(path)) is not None
        ]
        if not matches:
            return 404, error_json("no such route", "not_found"), {}
        name, found = matches[0]
        with self.lock:
            self.counts[name] += 1
            queued = self.http_faults.get(name)
            fault = queued.pop(0) if queued else None
        if fault is not None:
            body = fault.body if fault.body is not None else error_json(fault.content or "error")
            return fault.status, body, fault.headers
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            got = headers.get("authorization", "").removeprefix("Bearer ")
            return 401, error_json(f"Incorrect API key provided: {got}.", "invalid_api_key"), {}
        params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
        with self.lock:
            if name == "list":
                answer = self._list(params)
            elif name == "files":
                answer = self._files(params)
            else:
                answer = self._serve(name, found.groupdict().get("id"), headers, raw)
            held = self.holds.pop(name, None)
        if held is not None:
            held[0].set()
            held[1].wait(60)
        return answer

    def _files(self, params: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
        """GET /v1/files: every file (of `purpose`, when given), newest first."""
        files = [
            f
            for f in self.files.values()
            if "purpose" not in params or f.purpose == params["purpose"]
        ]
        files.sort(key=lambda f: f.id, reverse=True)
        return (
            200,
            to_json({"object": "list", "data": [f.describe() for f in files], "has_more": False}),
            {},
        )

    def _list(self, params: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
        """GET /v1/batches: newest first, `limit` per page, after the batch id `after`."""
        newest = sorted(self.batches.values(), key=lambda b: b.id, reverse=True)
        if params.get("after"):
            newest = [b for b in newest if b.id < params["after"]]
        limit = int(params.get("limit", "20"))
        page = newest[:limit]
        return (
            200,
            to_json(
                {
                    "object": "list",
                    "data": [b.describe() for b in page],
                    "first_id": page[0].id if page else None,
                    "last_id": page[-1].id if page else None,
                    "has_more": len(newest) > limit,
                }
            ),
            {},
        )

    def _serve(
        self, name: str, ident: str | None, headers: dict[str, str], raw: bytes
    ) -> tuple[int, bytes, dict[str, str]]:
        if name == "upload":
            fields = multipart_fields(headers.get("content-type", ""), raw)
            if "file" not in fields or "purpose" not in fields:
                return 400, error_json("file and purpose are required"), {}
            filename, data = fields["file"]
            if len(data) > self.max_bytes:
                return 413, error_json(f"file is larger than {self.max_bytes} bytes"), {}
            file_id = self._next_id("file")
            stored = StoredFile(
                file_id, filename, fields["purpose"][1].decode(), data, int(time.time())
            )
            self.files[file_id] = stored
            return 200, to_json(stored.describe()), {}
        if name in ("file", "content"):
            stored_file = self.files.get(ident or "")
            if stored_file is None:
                return 404, error_json(f"No such File object: {ident}", "not_found"), {}
            if name == "file":
                return 200, to_json(stored_file.describe()), {}
            return 200, stored_file.data, {"Content-Type": "application/octet-stream"}
        if name == "create":
            body = json.loads(raw or b"{}")
            if body.get("input_file_id") not in self.files:
                return 400, error_json(f"input file {body.get('input_file_id')} not found"), {}
            batch = FakeBatch(
                self._next_id("batch"),
                body["input_file_id"],
                body.get("endpoint", ""),
                body.get("completion_window", ""),
                body.get("metadata"),
                int(time.time()),
            )
            self.batches[batch.id] = batch
            return 200, to_json(batch.describe()), {}
        batch_found = self.batches.get(ident or "")
        if batch_found is None:
            return 404, error_json(f"No batch found with id '{ident}'.", "not_found"), {}
        if name == "retrieve":
            self._advance(batch_found)
        elif batch_found.status in ("validating", "in_progress", "finalizing"):
            batch_found.status = "cancelling"
            batch_found.times["cancelling"] = int(time.time())
        else:
            return 409, error_json(f"Cannot cancel a batch with status {batch_found.status}."), {}
        return 200, to_json(batch_found.describe()), {}

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if self.path.rstrip("/") == "/stats":
                    status, body, extra = 200, to_json(fake.stats()), {}
                else:
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    status, body, extra = fake._route(method, self.path, headers, raw)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", extra.pop("Content-Type", "application/json"))
                    self.send_header("Content-Length", str(len(body)))
                    for key, value in extra.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    return

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

        return Handler


def _watch_parent(parent: int, lifetime: float) -> None:
    """Exit when the parent process is gone or the lifetime is over (never outlive a test)."""
    deadline = time.monotonic() + lifetime
    while time.monotonic() < deadline and os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--polls-validating", type=int, default=1)
    parser.add_argument("--polls-in-progress", type=int, default=1)
    parser.add_argument("--max-requests", type=int, default=OPENAI_MAX_REQUESTS)
    parser.add_argument("--max-bytes", type=int, default=OPENAI_MAX_BYTES)
    parser.add_argument("--lifetime", type=float, default=1800.0, help="exit after seconds")
    args = parser.parse_args(argv)
    server = FakeBatchAPI(
        polls_validating=args.polls_validating,
        polls_in_progress=args.polls_in_progress,
        max_requests=args.max_requests,
        max_bytes=args.max_bytes,
    ).start()
    watcher = threading.Thread(
        target=_watch_parent, args=(os.getppid(), args.lifetime), daemon=True
    )
    watcher.start()
    print(f"PORT {server.port}", flush=True)
    watcher.join()


if __name__ == "__main__":
    sys.exit(main())
