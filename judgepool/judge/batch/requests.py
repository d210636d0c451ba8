"""Judge requests -> batch input lines, exactly as the online judge would send them, in files.

One line per distinct cache key: holes whose texts are the same share one line (and one
answer), as they share one call online. A line is

    {"custom_id": "jp1-<32 hex>", "method": "POST", "url": "/v1/chat/completions",
     "body": {"model": ..., "messages": ..., "temperature": ..., "max_tokens": ...}}

built from `LLMJudge.template.render` of the request and `LLMJudge.parameters` by the two
steps litellm's `acompletion` takes for the provider (see LineBuilder): the body online would
POST. The custom_id is the first 128 bits of the cache key's digest: the same content always
gets the same custom_id (a rerun after a crash recognises what it already sent, and an answer
maps back to its cache key), and one batch never holds a custom_id twice (one line per key).

Lines are packed into files in order, each within the provider's limits (requests and bytes).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, cast

from judgepool.errors import JudgeError, Param, remedy
from judgepool.judge.base import JudgeRequest
from judgepool.judge.batch.support import BatchLimits, provider_of
from judgepool.judge.llm import LLMJudge, load_litellm, translate

ENDPOINT = "/v1/chat/completions"
CUSTOM_ID_PREFIX = "jp1-"


def custom_id_for(cache_key: str) -> str:
    """The custom_id of the line that asks for `cache_key`'s answer (see the module doc)."""
    digest = cache_key.rsplit(":", 1)[-1]
    return CUSTOM_ID_PREFIX + digest[:32]


@dataclass(frozen=True)
class BatchEntry:
    """One input line: a distinct content key, the holes it answers, its JSONL bytes."""

    custom_id: str
    key: str
    requests: tuple[JudgeRequest, ...]
    line: bytes


@dataclass(frozen=True)
class BatchFile:
    """One input file: lines in order, within the limits."""

    index: int
    entries: tuple[BatchEntry, ...]

    @property
    def size(self) -> int:
        return sum(len(e.line) for e in self.entries)

    def data(self) -> bytes:
        return b"".join(e.line for e in self.entries)

    @cached_property
    def sha256(self) -> str:
        """The content hash: the same requests give the same file, whatever the run."""
        return hashlib.sha256(self.data()).hexdigest()

    @property
    def name(self) -> str:
        return f"judgepool-{self.sha256[:16]}.jsonl"


#: Providers whose batch lines are the provider's own chat request, built by litellm's request
#: transformation for it; other providers' lines are OpenAI-shaped and litellm converts the
#: file when it uploads it (vertex_ai).
OPENAI_SHAPED = frozenset({"openai", "azure", "hosted_vllm", "litellm_proxy"})


class LineBuilder:
    """Builds the lines of one judge: the body each request would be POSTed with online.

    litellm's `completion` maps the parameters for the model (`get_optional_params`) and then
    lets the provider's chat config build the body (`transform_request`: an o-series model gets
    max_completion_tokens and its system message as a user message). We call the same two steps
    with the same inputs, so a line's body is the online request's body.
    """

    def __init__(self, judge: LLMJudge) -> None:
        litellm = load_litellm()
        from litellm.types.utils import LlmProviders
        from litellm.utils import ProviderConfigManager, get_optional_params

        self.judge = judge
        self.provider, self.model = provider_of(judge.settings.model)
        try:
            self.parameters: dict[str, Any] = get_optional_params(
                model=self.model, custom_llm_provider=self.provider, **judge.parameters
            )
        except Exception as err:
            raise translate(err, litellm, judge.settings.model) from None
        self.config = (
            ProviderConfigManager.get_provider_chat_config(
                model=self.model, provider=LlmProviders(self.provider)
            )
            if self.provider in OPENAI_SHAPED
            else None
        )

    def body(self, request: JudgeRequest) -> dict[str, Any]:
        """The chat-completions body of one request (what the online judge would POST)."""
        messages = self.judge.messages(request)
        if self.config is None:
            return {"model": self.model, "messages": messages, **self.judge.parameters}
        body: dict[str, Any] = self.config.transform_request(
            model=self.model,
            messages=cast(Any, messages),
            optional_params=dict(self.parameters),
            litellm_params={},
            headers={},
        )
        extra = body.pop("extra_body", None) or {}  # the SDK merges extra_body into the body
        if body.get("stream") is False:
            del body["stream"]  # and leaves a false stream out
        return {**body, **extra}

    def entries(self, requests: Sequence[JudgeRequest]) -> list[BatchEntry]:
        """One entry per distinct cache key, in the order of first appearance."""
        grouped: dict[str, list[JudgeRequest]] = {}
        for request in requests:
            grouped.setdefault(self.judge.cache_key(request), []).append(request)
        entries: list[BatchEntry] = []
        seen: dict[str, str] = {}
        for key, group in grouped.items():
            custom_id = custom_id_for(key)
            if seen.setdefault(custom_id, key) != key:  # 2^-128: a bug, never chance
                raise RuntimeError(
                    f"two cache keys share custom_id {custom_id}: {key}, {seen[custom_id]}"
                )
            line = {
                "custom_id": custom_id,
                "method": "POST",
                "url": ENDPOINT,
                "body": self.body(group[0]),
            }
            encoded = json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n"
            entries.append(BatchEntry(custom_id, key, tuple(group), encoded.encode("utf-8")))
        return entries


def split_files(entries: Sequence[BatchEntry], limits: BatchLimits) -> list[BatchFile]:
    """Pack the entries, in order, into as few files as the limits allow."""
    files: list[BatchFile] = []
    current: list[BatchEntry] = []
    size = 0
    for entry in entries:
        if len(entry.line) > limits.max_bytes:
            raise JudgeError(
                f"one batch request ({entry.custom_id}, {len(entry.line)} bytes) is larger "
                f"than a whole batch file may be ({limits.max_bytes} bytes)",
                remedy(
                    "lower {}, or judge this pair without {}",
                    Param("passage_tokens", None),
                    Param("submit_batch", None),
                ),
                value=entry.custom_id,
            )
        if current and (
            len(current) >= limits.max_requests or size + len(entry.line) > limits.max_bytes
        ):
            files.append(BatchFile(len(files), tuple(current)))
            current, size = [], 0
        current.append(entry)
        size += len(entry.line)
    if current:
        files.append(BatchFile(len(files), tuple(current)))
    return files
