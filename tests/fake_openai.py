"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions protocol, for tests.

The judge's tests and benchmark drive the real litellm client against it, so every byte of our
code runs as it would against a provider. Behaviour is scripted per test: a `reply` function
(request -> `Reply`), a latency, a token-bucket rate limit answered with 429 + Retry-After, and
queued faults (500s, hangs, garbage, answers cut off mid-body, provider errors shaped as OpenAI
sends them: `provider_error`, `QUOTA`, `BAD_KEY`, `FORBIDDEN`, `NO_MODEL`, `CONTEXT_TOO_LONG`),
random faults at given shares (`faults=(p500, p429)`, seeded: a 500, or a 429 whose
retry-after-ms is one request's share of the rate limit, as a provider under load answers), and
`echo_key_reply`, a provider that quotes the caller's key in its answer. The server counts every
call (total, per status, per passage text) so tests can assert exact call counts.

Run as a script (`python tests/fake_openai.py --latency 0.2 --rpm 600`) it serves in its own
process, prints `PORT <n>` on stdout, answers GET /stats with its counters, and exits by itself
when its parent process dies or after --lifetime seconds.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import random
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: A passage containing `[[grade=N]]` gets that grade from `default_reply`.
GRADE_MARK = re.compile(r"\[\[grade=(\d)\]\]")
_FENCED = re.compile(r"<<<PASSAGE\n(.*?)\nPASSAGE>>>", re.S)


@dataclass
class Reply:
    """One scripted answer: an HTTP status, assistant content (or a raw body), headers, delay."""

    content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    body: bytes | None = None
    hang: bool = False
    cut_off: bool = False  # send the headers and half the body, then close the connection


@dataclass
class FakeRequest:
    """What the server saw: the parsed JSON body, the user message, the fenced passage."""

    body: dict[str, Any]
    headers: dict[str, str]
    prompt: str
    passage: str


def passage_of(prompt: str) -> str:
    """The passage between our prompt's fences (the whole prompt when there are none)."""
    found = _FENCED.search(prompt)
    return found.group(1) if found else prompt


def provider_error(status: int, message: str, kind: str, code: str | None = None) -> Reply:
    """An error response shaped as OpenAI sends it (`{"error": {message, type, param, code}}`)."""
    error = {"message": message, "type": kind, "param": None, "code": code}
    return Reply(status=status, body=json.dumps({"error": error}).encode())


QUOTA = provider_error(
    429,
    "You exceeded your current quota, please check your plan and billing details.",
    "insufficient_quota",
    "insufficient_quota",
)
BAD_KEY = provider_error(
    401,
    "Incorrect API key provided. You can find your API key in your account settings.",
    "invalid_request_error",
    "invalid_api_key",
)
FORBIDDEN = provider_error(
    403,
    "Project does not have access to model fake-model.",
    "invalid_request_error",
    "model_not_found",
)
NO_MODEL = provider_error(
    404,
    "The model `fake-model` does not exist or you do not have access to it.",
    "invalid_request_error",
    "model_not_found",
)
CONTEXT_TOO_LONG = provider_error(
    400,
    "This model's maximum context length is 8192 tokens. However, your messages resulted "
    "in 210382 tokens. Please reduce the length of the messages.",
    "invalid_request_error",
    "context_length_exceeded",
)


def echo_key_reply(request: FakeRequest) -> Reply:
    """A provider that quotes the caller's key (its Authorization header) in the answer."""
    key = request.headers.get("authorization", "").removeprefix("Bearer ")
    graded = default_reply(request).content or ""
    return Reply(f"Request authorised with key {key} (key={key}).\n{graded}")


def default_reply(request: FakeRequest) -> Reply:
    """`##final score: N`, N from a `[[grade=N]]` mark in the passage, else its length mod 4."""
    mark = GRADE_MARK.search(request.passage)
    grade = int(mark.group(1)) if mark else len(request.passage) % 4
    return Reply(f"The passage was weighed against the query.\n##final score: {grade}")


class TokenBucket:
    """A request-rate limit refilled continuously (as providers do), with a burst capacity."""

    def __init__(self, per_minute: float, burst: float | None = None) -> None:
        self.rate = per_minute / 60.0
        self.capacity = burst if burst is not None else max(1.0, self.rate)
        self.tokens = self.capacity
        self.stamp = time.monotonic()
        self.lock = threading.Lock()

    def take(self) -> float | None:
        """None when a request may pass, else the seconds until one may."""
        with self.lock:
            now = time.monotonic()
            self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now
            if self.tokens >= 1.0:
                self.tokens -= 1.0
                return None
            return (1.0 - self.tokens) / self.rate

    def remaining(self) -> int:
        """Whole requests the bucket would admit now (what x-ratelimit-remaining-requests says)."""
        with self.lock:
            now = time.monotonic()
            return int(min(self.capacity, self.tokens + (now - self.stamp) * self.rate))


def _too_many(wait: float) -> Reply:
    """A 429 as OpenAI sends it: Retry-After in whole seconds, retry-after-ms to the millisecond."""
    return Reply(
        status=429,
        body=b'{"error": {"message": "Rate limit reached", "type": "requests"}}',
        headers={
            "retry-after": str(max(1, math.ceil(wait))),
            "retry-after-ms": str(max(1, math.ceil(wait * 1000))),
        },
    )


class _Server(ThreadingHTTPServer):
    """Quiet about clients that go away mid-request (a killed judge): that is what tests do."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class FakeOpenAI:
    """The server: start it, point litellm at `api_base`, script it, read its counters."""

    def __init__(
        self,
        reply: Callable[[FakeRequest], Reply] = default_reply,
        latency: float = 0.0,
        rpm: float | None = None,
        burst: float | None = None,
        usage: tuple[int, int] | None = None,
        faults: tuple[float, float] = (0.0, 0.0),
        seed: int = 0,
    ) -> None:
        self.reply = reply
        self.faults = faults  # shares of calls answered 500 and 429 at random (before the limit)
        self._random = random.Random(seed)
        self.latency = latency
        self.bucket = TokenBucket(rpm, burst) if rpm else None
        self.usage = usage
        self.lock = threading.Lock()
        self.calls = 0
        self.statuses: Counter[int] = Counter()
        self.by_passage: Counter[str] = Counter()
        self.requests: list[FakeRequest] = []
        self.times_429: list[float] = []
        self.injected: Counter[int] = Counter()  # random faults answered, by status
        self.times_injected_429: list[float] = []
        self.log: list[tuple[float, int, str]] = []  # (seconds since start, status, passage)
        self.queue: list[Reply] = []
        self.started = time.monotonic()
        self.in_flight = 0
        self.max_in_flight = 0
        self._release = threading.Event()
        self._server = _Server(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAI:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()  # let hanging handlers return
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def push(self, *replies: Reply) -> None:
        """Answer the next calls with these replies, in order, before the `reply` function."""
        with self.lock:
            self.queue.extend(replies)

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {
                "calls": self.calls,
                "answered": self.statuses.get(200, 0),
                "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
                "max_in_flight": self.max_in_flight,
                "times_429": list(self.times_429),
                "injected": {str(k): v for k, v in sorted(self.injected.items())},
                "times_injected_429": list(self.times_injected_429),
                "first_call": self.log[0][0] if self.log else None,
                "call_times": [t for t, _, _ in self.log],
            }

    def _answer(self, request: FakeRequest) -> Reply:
        with self.lock:
            self.calls += 1
            self.requests.append(request)
            self.by_passage[request.passage] += 1
            queued = self.queue.pop(0) if self.queue else None
            draw = self._random.random() if any(self.faults) else 1.0
        if queued is None and draw < self.faults[0]:
            with self.lock:
                self.injected[500] += 1
            return self._limits(Reply("server error (injected)", status=500))
        if queued is None and draw < self.faults[0] + self.faults[1]:
            with self.lock:
                self.injected[429] += 1
                self.times_injected_429.append(time.monotonic() - self.started)
            pause = 1.0 / self.bucket.rate if self.bucket is not None else 0.05
            return self._limits(_too_many(pause))
        if self.bucket is not None:
            wait = self.bucket.take()
            if wait is not None:
                return self._limits(_too_many(wait))
        return self._limits(queued if queued is not None else self.reply(request))

    def _limits(self, reply: Reply) -> Reply:
        """The reply with the rate limit's state in OpenAI's headers (when there is a limit)."""
        if self.bucket is None:
            return reply
        limits = {
            "x-ratelimit-limit-requests": str(round(self.bucket.rate * 60)),
            "x-ratelimit-remaining-requests": str(self.bucket.remaining()),
        }
        return dataclasses.replace(reply, headers={**limits, **reply.headers})

    def _completion(self, request: FakeRequest, content: str) -> bytes:
        prompt_tokens, completion_tokens = self.usage or (
            max(1, len(request.prompt) // 4),
            max(1, len(content) // 4),
        )
        return json.dumps(
            {
                "id": f"chatcmpl-fake{self.calls}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": request.body.get("model", "fake"),
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
        ).encode()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/stats"):
                    self._send(200, json.dumps(fake.stats()).encode(), {})
                else:
                    self._send(404, b'{"error": {"message": "not found"}}', {})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, b'{"error": {"message": "not found"}}', {})
                    return
                body = json.loads(raw or b"{}")
                messages = body.get("messages") or []
                prompt = "\n".join(str(m.get("content", "")) for m in messages)
                headers = {k.lower(): v for k, v in self.headers.items()}
                request = FakeRequest(body, headers, prompt, passage_of(prompt))
                reply = fake._answer(request)
                with fake.lock:
                    since = time.monotonic() - fake.started
                    fake.log.append((since, reply.status, request.passage))
                    fake.statuses[reply.status] += 1
                    if reply.status == 429:
                        fake.times_429.append(time.monotonic() - fake.started)
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                try:
                    if reply.hang:
                        fake._release.wait(600)
                        return
                    delay = reply.delay + (fake.latency if reply.status == 200 else 0.0)
                    if delay:
                        time.sleep(delay)
                    if reply.cut_off:
                        payload = fake._completion(request, reply.content or "##final score: 1")
                        self.send_response(200)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(payload)))
                        self.end_headers()
                        self.wfile.write(payload[: len(payload) // 2])
                        self.wfile.flush()
                        self.close_connection = True
                        return
                    if reply.body is not None:
                        payload = reply.body
                    elif reply.status == 200:
                        payload = fake._completion(request, reply.content or "")
                    else:
                        message = {"error": {"message": reply.content or "error"}}
                        payload = json.dumps(message).encode()
                    self._send(reply.status, payload, reply.headers)
                except (BrokenPipeError, ConnectionResetError):
                    return
                finally:
                    with fake.lock:
                        fake.in_flight -= 1

        return Handler


def _watch_parent(parent: int, lifetime: float) -> None:
    """Exit when the parent process is gone or the lifetime is over (never outlive a test)."""
    deadline = time.monotonic() + lifetime
    while time.monotonic() < deadline:
        if os.getppid() != parent:
            break
        time.sleep(0.5)
    os._exit(0)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per answered call")
    parser.add_argument("--rpm", type=float, default=None, help="rate limit, requests/minute")
    parser.add_argument("--burst", type=float, default=None, help="bucket capacity (requests)")
    parser.add_argument("--lifetime", type=float, default=1800.0, help="exit after seconds")
    parser.add_argument("--fail-500", type=float, default=0.0, help="share of calls answered 500")
    parser.add_argument("--fail-429", type=float, default=0.0, help="share answered 429 at random")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random faults")
    args = parser.parse_args(argv)
    server = FakeOpenAI(
        latency=args.latency,
        rpm=args.rpm,
        burst=args.burst,
        faults=(args.fail_500, args.fail_429),
        seed=args.seed,
    ).start()
    watcher = threading.Thread(
        target=_watch_parent, args=(os.getppid(), args.lifetime), daemon=True
    )
    watcher.start()
    print(f"PORT {server.port}", flush=True)
    watcher.join()


if __name__ == "__main__":
    sys.exit(main())
