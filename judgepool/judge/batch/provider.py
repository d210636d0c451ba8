"""The files/batches client: litellm's async batch functions, typed, counted and translated.

    client = BatchClient("openai/gpt-4o-mini", api_base=None)
    uploaded = await client.upload(file.name, file.data())
    batch = await client.create(uploaded.id, metadata={"judgepool_file": file.sha256})
    batch = await client.retrieve(batch.id)            # status, request_counts, file ids
    output = await client.content(batch.output_file_id)
    await client.cancel(batch.id)

What the pinned litellm (1.110.2) does, and what we do about it:
- every call builds a fresh OpenAI SDK client with its own connection pool that nothing closes
  (its sockets leak until garbage collection); we send `Connection: close`, so no connection
  outlives its request. Batch operations are few, one handshake each costs nothing.
- `aretrieve_batch` of a completed batch downloads the whole output file again for its own
  cost logging; we switch that off (`batch_ignore_default_logging`), so the only downloads are
  ours.
- the SDK's own retries are set to 0: every HTTP request is one we decided to make. Reads
  (retrieve, content, list) and uploads are retried on rate limits, 5xx, timeouts and
  connection errors (bounded, honouring Retry-After). Creating a batch is retried only when it
  certainly did not happen (a 429, a refused connection): after a timeout or a 5xx it may have
  been created, and a second one would be paid twice, so the error says how to check.

Every failure becomes a `BatchProviderError` (a JudgeError: problem and what to do), with keys
and URL credentials masked.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from judgepool.errors import JudgeError, Param, Remedy, remedy
from judgepool.judge.batch.requests import ENDPOINT
from judgepool.judge.batch.support import BatchSupport, batch_support, provider_of
from judgepool.judge.llm import load_litellm, retry_after
from judgepool.judge.redact import host_of, redact

T = TypeVar("T")
#: Statuses after which a batch changes no more.
FINISHED = frozenset({"completed", "failed", "expired", "cancelled"})
#: Finished statuses whose output and error files hold answers worth reading.
COLLECTABLE = frozenset({"completed", "expired", "cancelled"})
_NO_REUSE = {"Connection": "close"}
_API = Param("api_base", None)
_NO_BATCH = remedy("run the same command without {}", Param("submit_batch", None))
_KEY_HINT = (
    "export the provider's key (OPENAI_API_KEY, AZURE_API_KEY, ...) in this shell; batches "
    "and files belong to the key's organisation and project"
)


class BatchProviderError(JudgeError):
    """A batch operation failed; `kind` says how (auth, not_found, rejected, quota, rate_limit,
    server, timeout, connection, unsupported, protocol) and `retryable` whether trying again
    later may work."""

    def __init__(self, message: str, hint: str | Remedy | None, kind: str, retryable: bool) -> None:
        super().__init__(message, hint)
        self.kind = kind
        self.retryable = retryable


@dataclass(frozen=True)
class RequestCounts:
    total: int
    completed: int
    failed: int


@dataclass(frozen=True)
class UploadedFile:
    id: str
    bytes: int
    filename: str


@dataclass(frozen=True)
class BatchStatus:
    """A batch as the provider reports it."""

    id: str
    status: str
    input_file_id: str
    output_file_id: str | None
    error_file_id: str | None
    counts: RequestCounts
    created_at: int | None
    metadata: dict[str, str] = field(default_factory=dict)
    errors: tuple[str, ...] = ()

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @property
    def collectable(self) -> bool:
        return self.status in COLLECTABLE


async def _settle(name: str) -> None:
    """Wait for the pending tasks of this loop whose coroutine is called `name`."""
    current = asyncio.current_task()
    pending = [
        t
        for t in asyncio.all_tasks()
        if t is not current and getattr(t.get_coro(), "__qualname__", "").endswith(name)
    ]
    await asyncio.gather(*pending, return_exceptions=True)


def _counts(value: Any) -> RequestCounts:
    def number(name: str) -> int:
        raw = getattr(value, name, None) if value is not None else None
        return raw if isinstance(raw, int) else 0

    return RequestCounts(number("total"), number("completed"), number("failed"))


def _status(batch: Any) -> BatchStatus:
    errors = getattr(getattr(batch, "errors", None), "data", None) or []
    described = tuple(
        redact(
            (f"line {e.line}: " if getattr(e, "line", None) else "")
            + f"{getattr(e, 'code', None) or 'error'}: {getattr(e, 'message', None) or ''}"
        )[:300]
        for e in errors
    )
    metadata = getattr(batch, "metadata", None)
    return BatchStatus(
        id=str(batch.id),
        status=str(batch.status),
        input_file_id=str(getattr(batch, "input_file_id", "") or ""),
        output_file_id=getattr(batch, "output_file_id", None) or None,
        error_file_id=getattr(batch, "error_file_id", None) or None,
        counts=_counts(getattr(batch, "request_counts", None)),
        created_at=getattr(batch, "created_at", None),
        metadata={str(k): str(v) for k, v in metadata.items()}
        if isinstance(metadata, dict)
        else {},
        errors=described,
    )


class BatchClient:
    """Batch operations for one model's provider (see the module docstring)."""

    def __init__(
        self,
        model: str,
        api_base: str | None = None,
        timeout: float = 600.0,
        retries: int = 3,
        backoff: float = 1.0,
    ) -> None:
        self.model = model
        self.support: BatchSupport = batch_support(model)
        self.provider = provider_of(model)[0]
        # litellm's own key for a local OpenAI-compatible server ($HOSTED_VLLM_API_KEY, else a
        # placeholder), the one it sends online; its files/batches path looks only at
        # OPENAI_API_KEY. Read from the environment by litellm, never stored.
        self._local_key = (
            load_litellm().get_llm_provider(model=model)[2]
            if self.provider in ("hosted_vllm", "litellm_proxy")
            else None
        )
        self.api_base = api_base
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.calls: Counter[str] = Counter()  # HTTP requests made, per operation

    def _kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "custom_llm_provider": self.provider,
            "max_retries": 0,
            "timeout": self.timeout,
            "extra_headers": dict(_NO_REUSE),
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self._local_key:
            kwargs["api_key"] = self._local_key
        return kwargs

    def _where(self) -> str:
        host = host_of(self.api_base)
        return f"{self.provider} at {host}" if host else self.provider

    async def _call(
        self,
        op: str,
        target: str,
        make: Callable[[], Awaitable[T]],
        retry: Callable[[BatchProviderError], bool],
    ) -> T:
        """One operation: attempts until success, a final failure, or the retries run out."""
        litellm = load_litellm()
        attempt = 0
        while True:
            self.calls[op] += 1
            try:
                return await make()
            except Exception as err:
                failure = self.translate(err, litellm, op, target)
                if attempt >= self.retries or not retry(failure):
                    raise failure from None
                wait = retry_after(err)
                await asyncio.sleep(wait if wait is not None else self.backoff * 2**attempt)
                attempt += 1

    async def upload(self, filename: str, data: bytes) -> UploadedFile:
        """Upload one JSONL input file (purpose `batch`)."""
        litellm = load_litellm()
        created = await self._call(
            "upload",
            filename,
            lambda: litellm.acreate_file(
                file=(filename, data, "application/jsonl"), purpose="batch", **self._kwargs()
            ),
            lambda e: e.retryable,
        )
        return UploadedFile(
            str(created.id), int(getattr(created, "bytes", len(data)) or 0), filename
        )

    async def create(
        self, input_file_id: str, metadata: dict[str, str] | None = None
    ) -> BatchStatus:
        """Start a batch over an uploaded file (never retried where it may have happened)."""
        litellm = load_litellm()
        created = await self._call(
            "create",
            input_file_id,
            lambda: litellm.acreate_batch(
                completion_window="24h",
                endpoint=ENDPOINT,
                input_file_id=input_file_id,
                metadata=metadata,
                **self._kwargs(),
            ),
            lambda e: e.kind in ("rate_limit", "connection_refused"),
        )
        return _status(created)

    async def retrieve(self, batch_id: str) -> BatchStatus:
        """The batch's status, request counts and file ids."""
        litellm = load_litellm()
        found = await self._call(
            "retrieve",
            batch_id,
            lambda: litellm.aretrieve_batch(
                batch_id=batch_id,
                litellm_metadata={"batch_ignore_default_logging": True},
                **self._kwargs(),
            ),
            lambda e: e.retryable,
        )
        return _status(found)

    async def content(self, file_id: str) -> bytes:
        """The bytes of an output or error file."""
        litellm = load_litellm()
        response = await self._call(
            "content",
            file_id,
            lambda: litellm.afile_content(file_id=file_id, **self._kwargs()),
            lambda e: e.retryable,
        )
        data = getattr(response, "content", None)
        if not isinstance(data, bytes):
            raise BatchProviderError(
                f"file {file_id} from {self._where()} has no content", None, "protocol", False
            )
        return data

    async def cancel(self, batch_id: str) -> BatchStatus:
        """Ask the provider to stop a batch (it becomes `cancelling`, later `cancelled`)."""
        litellm = load_litellm()
        cancelled = await self._call(
            "cancel",
            batch_id,
            lambda: litellm.acancel_batch(batch_id=batch_id, **self._kwargs()),
            lambda e: e.retryable,
        )
        return _status(cancelled)

    async def find(self, key: str, value: str, pages: int = 10) -> list[BatchStatus]:
        """Batches whose metadata has `key` = `value`, newest first, in the first `pages`
        pages of 100 (how a rerun finds a batch it created but did not live to record)."""
        litellm = load_litellm()
        found: list[BatchStatus] = []
        after: str | None = None
        for _ in range(pages):
            page = await self._call(
                "list",
                "batches",
                partial(litellm.alist_batches, after=after, limit=100, **self._kwargs()),
                lambda e: e.retryable,
            )
            batches = [_status(b) for b in getattr(page, "data", None) or []]
            owner = getattr(page, "_client", None)  # the SDK client behind the page: litellm
            if owner is not None and hasattr(owner, "close"):  # keeps its connection open
                await owner.close()  # (it does not forward Connection: close to list)
            found += [b for b in batches if b.metadata.get(key) == value]
            if not batches or not getattr(page, "has_more", False):
                break
            after = batches[-1].id
        return found

    async def find_file(self, filename: str, size: int) -> str | None:
        """The id of an uploaded batch input file named `filename` with `size` bytes, from the
        provider's list of batch files (its first page: OpenAI's holds the newest 10,000);
        None when there is none or the provider cannot list files. How a rerun finds a file it
        uploaded but did not live to record: judgepool names a file by its content hash."""
        litellm = load_litellm()
        try:
            page = await self._call(
                "files",
                "batch files",
                lambda: litellm.afile_list(purpose="batch", **self._kwargs()),
                lambda e: e.retryable,
            )
        except BatchProviderError as err:
            if err.kind == "unsupported":
                return None
            raise
        owner = getattr(page, "_client", None)  # as in find: litellm leaves it open
        if owner is not None and hasattr(owner, "close"):
            await owner.close()
        for found in getattr(page, "data", None) or []:
            named = getattr(found, "filename", None) == filename
            if named and getattr(found, "bytes", None) == size:
                return str(found.id)
        return None

    def translate(self, err: Exception, litellm: Any, op: str, target: str) -> BatchProviderError:
        """Our error for a litellm/SDK failure of one operation (messages masked).

        litellm passes the OpenAI SDK's own exceptions through for files and batches, so both
        families are recognised; a connection that never opened (httpx.ConnectError) is
        `connection_refused`: nothing reached the provider."""
        import httpx
        import openai

        text = redact(str(err))[:500]
        status = getattr(err, "status_code", None)
        what = f"{op} {target} on {self._where()}"
        lowered = text.lower()

        def fail(
            problem: str, hint: str | Remedy | None, kind: str, retryable: bool
        ) -> BatchProviderError:
            return BatchProviderError(f"{what}: {problem}", hint, kind, retryable)

        if "doesn't support" in lowered or "does not support" in lowered:
            return fail(text, _NO_BATCH, "unsupported", False)
        if (
            status in (401, 403)
            or isinstance(err, openai.AuthenticationError | openai.PermissionDeniedError)
            or "api_key" in lowered
        ):
            return fail(f"the provider refused the key: {text}", _KEY_HINT, "auth", False)
        if status == 404 or isinstance(err, openai.NotFoundError):
            return fail(
                f"not found: {text}",
                remedy("check that the key and {} are the ones the batch was created with", _API),
                "not_found",
                False,
            )
        if "insufficient_quota" in lowered or "billing" in lowered:
            return fail(
                f"out of quota: {text}",
                "add credit or raise the quota, then run again",
                "quota",
                False,
            )
        if status == 429 or isinstance(err, openai.RateLimitError | litellm.RateLimitError):
            return fail(f"rate limited: {text}", "wait a minute and run again", "rate_limit", True)
        if isinstance(err, openai.APITimeoutError | litellm.Timeout):
            return fail(
                f"no answer within {self.timeout:g} s: {text}", self._unsure(op), "timeout", True
            )
        if isinstance(err, openai.APIConnectionError | litellm.APIConnectionError):
            if isinstance(err.__cause__, httpx.ConnectError):
                return fail(
                    f"cannot connect: {text}",
                    remedy("check {} and the network, then run again", _API),
                    "connection_refused",
                    True,
                )
            return fail(f"the connection failed: {text}", self._unsure(op), "connection", True)
        if isinstance(status, int) and status >= 500:
            return fail(f"server error {status}: {text}", self._unsure(op), "server", True)
        if isinstance(status, int) and 400 <= status < 500:
            return fail(
                f"the provider rejected it ({status}): {text}",
                "check the model name and the batch file",
                "rejected",
                False,
            )
        return fail(f"{type(err).__name__}: {text}", None, "protocol", False)

    async def aclose(self) -> None:
        """Close the HTTP clients litellm made for our calls, inside this event loop (litellm
        leaves them to the garbage collector; collected after the loop, they would try to close
        on a loop that is gone)."""
        import gc

        litellm = load_litellm()
        await litellm.close_litellm_async_clients()
        gc.collect()  # the clients' finalisers schedule aclose() on the running loop
        await _settle("aclose")

    async def __aenter__(self) -> BatchClient:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    def _unsure(self, op: str) -> str:
        if op == "create":
            return (
                "the batch may have been created: look for it in the provider's batch list "
                "before creating it again (a second one would be paid twice)"
            )
        return "run again later (nothing was lost)"
