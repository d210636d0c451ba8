"""The LLM judge: one chat completion per request through litellm's async API, graded by parse.py.

Any litellm model string works (`openai/gpt-4o-mini`, `anthropic/...`, `ollama/...`,
`hosted_vllm/...`, or `openai/NAME` with an OpenAI-compatible `api_base`). Keys are read by
litellm from the environment; they never pass through this module.

Retries belong to the loop alone: litellm's own retries (`num_retries`) and the OpenAI SDK's
(`max_retries`, which also honours Retry-After by itself) are set to 0, so that every HTTP
request is one attempt the loop counted, budgeted and saw. Failures are translated once, here:
rate limits, 5xx, timeouts and connection errors -> `TransientJudgeFailure` (retried); a request
the provider refuses on its own merits (over the context window, a content filter) ->
`RequestRejected` (that pair is labelled `error`); what would fail every request -> `JudgeError`
(the loop stops at once): a refused key (401), a forbidden model (403), an unknown model (404),
an exhausted quota or credit (OpenAI's `insufficient_quota` 429 is not a rate limit: waiting
does not bring money back), or a parameter the model does not take (400).

Cost comes from litellm's local price map and its cost calculation over the reply's usage
(reasoning tokens, `usage.completion_tokens_details.reasoning_tokens`, at the model's reasoning
rate); a model it does not know gets cost None (unknown). Reasoning models are sent the
parameters judge/reasoning.py chooses; their reply is graded from its final text only, never
from its reasoning.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from functools import cache, cached_property
from importlib.metadata import version
from types import ModuleType
from typing import TYPE_CHECKING, Any

from judgepool.errors import JudgeError, Param, Placeholder, Remedy, UsageError, remedy
from judgepool.judge.base import (
    Estimate,
    JudgeAnswer,
    JudgeRequest,
    RequestRejected,
    TransientJudgeFailure,
)
from judgepool.judge.cache import content_key
from judgepool.judge.completion import completion_answer
from judgepool.judge.litellm_env import load_litellm as load_litellm  # re-exported
from judgepool.judge.parse import PARSER_VERSION
from judgepool.judge.prompt import DEFAULT_TEMPLATE, Template, load_template
from judgepool.judge.reasoning import (
    TYPICAL_REASONING_TOKENS,
    Decoding,
    check_effort,
    decoding,
)
from judgepool.judge.redact import host_of, redact
from judgepool.judge.tokens import count_tokens
from judgepool.pooling.io.text import normalise

if TYPE_CHECKING:
    from judgepool.pooling.store.connection import Store

#: Output tokens a typical answer takes (the fixed line); used for dry-run estimates only.
TYPICAL_OUTPUT_TOKENS = 8
#: Chat framing tokens per message, and the margin on input counts for worst-case costs.
MESSAGE_OVERHEAD = 4
INPUT_MARGIN = 1.25


@dataclass(frozen=True)
class LLMSettings:
    """What the user chose: the model, where it is served, and the decoding parameters (None:
    the default for the model, see judge/reasoning.py: 0 and 256 unless it reasons)."""

    model: str
    api_base: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float = 60.0
    template: str = DEFAULT_TEMPLATE
    reasoning_effort: str | None = None

    def check(self) -> None:
        if not self.model or "/" not in self.model:
            raise UsageError(
                f"model {self.model!r} does not name a provider",
                "use a litellm model string such as openai/gpt-4o-mini, anthropic/<model>, "
                "ollama/<model>, hosted_vllm/<model>",
            )
        if self.max_tokens is not None and self.max_tokens < 1:
            raise UsageError(
                remedy("{} must be positive", Param("max_tokens", self.max_tokens)),
                "use 1 or more",
                value=self.max_tokens,
            )
        if self.timeout <= 0:
            raise UsageError(
                remedy("{} must be positive", Param("timeout", self.timeout)),
                remedy("give seconds, e.g. {}", Param("timeout", 60)),
                value=self.timeout,
            )
        check_effort(self.reasoning_effort)


def retry_after(err: Exception) -> float | None:
    """Seconds from retry-after-ms / Retry-After (seconds or an HTTP date), when present."""
    response = getattr(err, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        if headers.get("retry-after-ms"):
            return max(0.0, float(headers["retry-after-ms"]) / 1000.0)
        raw = headers.get("retry-after")
        if raw:
            try:
                return max(0.0, float(raw))
            except ValueError:
                return max(0.0, parsedate_to_datetime(raw).timestamp() - time.time())
    except (TypeError, ValueError):
        return None
    return None


def limits_exhausted(err: Exception) -> bool | None:
    """Whether a 429 says a rate limit is used up: some `...ratelimit...remaining...` header (as
    OpenAI, Azure and Anthropic send them: requests, tokens) is 0. False when such headers came
    and none is 0 (the provider refused this call for another reason: overload, a fault), None
    when none came (then nothing tells, and the 429 counts as the limit)."""
    response = getattr(err, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    found: list[float] = []
    try:
        for name, value in headers.items():
            lowered = str(name).lower()
            if "ratelimit" in lowered and "remaining" in lowered:
                found.append(float(value))
    except (AttributeError, TypeError, ValueError):
        return None
    return any(v <= 0 for v in found) if found else None


#: How providers say the money ran out (an OpenAI rate-limit 429 mentions billing too: not it).
_QUOTA_WORDS = ("insufficient_quota", "exceeded your current quota", "credit balance is too low")


def _error_body(err: Exception) -> str:
    """The provider's error type, code and message as one lower-case string (for matching)."""
    body = getattr(err, "body", None)
    parts = [str(err)]
    if isinstance(body, dict):
        parts += [str(body.get(k, "")) for k in ("type", "code", "message")]
    return " ".join(parts).lower()


def _quota_exhausted(err: Exception, status: int | None) -> bool:
    if status == 402:  # Payment Required
        return True
    return status in (400, 403, 429) and any(w in _error_body(err) for w in _QUOTA_WORDS)


def _seen_reply(err: Exception) -> bool:
    """Whether an HTTP error status really came back from the server (then it billed nothing);
    litellm also reports an unreadable answer body as a 500, without the response's headers."""
    return getattr(err, "litellm_response_headers", None) is not None


def translate(err: Exception, litellm: ModuleType, model: str) -> Exception:
    """The loop's view of a litellm exception (see the module docstring)."""
    text = redact(str(err))[:500]
    status = getattr(err, "status_code", None)
    status = status if isinstance(status, int) else None
    if _quota_exhausted(err, status):
        return JudgeError(
            f"the provider says the account behind the key for {model} has no quota or credit "
            f"left (HTTP {status}): {text}",
            "add credit or raise the spending limit in the provider's billing settings, then run "
            "the same command again (labels so far are kept; nothing is retried meanwhile)",
        )
    if isinstance(err, litellm.ContextWindowExceededError):
        return RequestRejected("context_window", text)
    if isinstance(err, litellm.ContentPolicyViolationError):
        return RequestRejected("content_policy", text)
    if isinstance(err, litellm.RateLimitError):
        failure = TransientJudgeFailure("rate_limit", text, retry_after(err), unanswered=False)
        failure.exhausted = limits_exhausted(err)
        return failure
    if isinstance(err, litellm.Timeout):
        return TransientJudgeFailure("timeout", text)
    if isinstance(err, litellm.APIConnectionError):
        return TransientJudgeFailure("connection", text)
    if "missing credentials" in text.lower() or "api_key" in text.lower():
        return JudgeError(f"no usable key for {model}: {text}", _KEY_HINT)
    if isinstance(err, litellm.AuthenticationError) or status == 401:
        return JudgeError(f"the provider refused the key for {model} (HTTP 401): {text}", _KEY_HINT)
    if isinstance(err, litellm.PermissionDeniedError) or status == 403:
        return JudgeError(
            f"the provider refused access to {model} with this key (HTTP 403): {text}",
            remedy(
                "check that the key's project or organisation may use this model (and the "
                "region is served), or choose another {}",
                _MODEL,
            ),
        )
    if isinstance(err, litellm.NotFoundError) or status == 404:
        return JudgeError(
            f"model {model} was not found (HTTP 404): {text}",
            remedy("check the model name (litellm's provider/model form) and {}", _API_BASE),
        )
    if isinstance(err, litellm.BadRequestError):
        return JudgeError(
            f"the provider rejected the request for {model} (HTTP 400): {text}",
            remedy(
                "check {} / {} for this model, and the model name",
                Param("temperature", None),
                Param("max_tokens", None),
            ),
        )
    if "connection error" in text.lower():  # litellm reports a lost connection as a 500
        return TransientJudgeFailure("connection", text)
    if status is not None and (status >= 500 or status in (408, 409)):
        return TransientJudgeFailure("server", text, unanswered=not _seen_reply(err))
    if status is not None and 400 <= status < 500:
        return JudgeError(
            f"the provider rejected the request for {model} (HTTP {status}): {text}",
            remedy("check the model name, {} and the options for this model", _API_BASE),
        )
    if isinstance(err, litellm.APIError):
        return TransientJudgeFailure("server", text, unanswered=not _seen_reply(err))
    return JudgeError(
        f"calling {model} failed: {type(err).__name__}: {text}",
        remedy(
            "check {} and {}; run again with JUDGEPOOL_DEBUG=1 for the traceback",
            _MODEL,
            _API_BASE,
        ),
    )


_MODEL, _API_BASE = Param("model", None), Param("api_base", None)
_KEY_HINT = remedy(
    "export the provider's key (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...); for a local "
    "OpenAI-compatible server without keys use {} {}",
    Param("model", "hosted_vllm/NAME"),
    Param("api_base", Placeholder("URL")),
)


@cache
def _client() -> str:
    """The client named in every label's provenance (reading a package's metadata parses its
    METADATA file: ~30 ms, once per process, not once per run)."""
    return f"litellm {version('litellm')}"


class LLMJudge:
    """A `Judge` backed by a litellm chat model and a prompt template."""

    def __init__(self, settings: LLMSettings) -> None:
        settings.check()
        self.settings = settings
        self.template: Template = load_template(settings.template)
        s = settings
        self.decoding: Decoding = decoding(s.model, s.temperature, s.max_tokens, s.reasoning_effort)

    @property
    def labeller(self) -> str:
        return f"{self.settings.model}@{self.template.version}"

    @property
    def parameters(self) -> dict[str, Any]:
        """Every decoding parameter sent with a call (part of the cache key)."""
        return dict(self.decoding.parameters)

    @property
    def decoding_note(self) -> str | Remedy | None:
        """For a reasoning model, what it is sent and why (the CLI says it once)."""
        return self.decoding.why

    def messages(self, request: JudgeRequest) -> list[dict[str, str]]:
        """The chat messages of one request, exactly as they are handed to litellm."""
        return self.template.render(request.query, request.passage)

    def describe(self) -> dict[str, Any]:
        reasoning = (
            {"reasoning": {"effort": self.decoding.effort}} if self.decoding.reasoning else {}
        )
        return {
            "judge": "llm",
            "model": self.settings.model,
            "api_base_host": host_of(self.settings.api_base),
            "template": self.template.describe(),
            "parameters": self.parameters,
            "parser_version": PARSER_VERSION,
            "timeout_s": self.settings.timeout,
            "client": _client(),
            **reasoning,
        }

    def cache_key(self, request: JudgeRequest) -> str:
        return content_key(
            {
                "judge": "llm",
                "model": self.settings.model,
                "parameters": self.parameters,
                "template_hash": self.template.hash,
                "parser_version": PARSER_VERSION,
                "query": normalise(request.query),
                "passage": normalise(request.passage),
            }
        )

    def readiness(self) -> JudgeError | None:
        """What would stop a real run before any call: no key for the model (a dry run only
        says so; a run raises it)."""
        litellm = load_litellm()
        model = self.settings.model
        found = litellm.validate_environment(model=model, api_base=self.settings.api_base)
        missing = [k for k in found.get("missing_keys", []) if k.endswith("KEY")]
        if not found.get("keys_in_environment") and missing:
            return JudgeError(f"no key for {model}: set {' or '.join(missing)}", _KEY_HINT)
        return None

    def prepare(self, store: Store, requests: Sequence[JudgeRequest]) -> None:
        """Import litellm before the event loop starts (the key is checked by `readiness`)."""
        load_litellm()

    @cached_property
    def _system_tokens(self) -> int:
        return count_tokens(self.template.system) + MESSAGE_OVERHEAD

    def input_tokens(self, request: JudgeRequest) -> int:
        """Estimated prompt tokens of one request (system and user messages, chat framing)."""
        user = self.messages(request)[1]["content"]
        return self._system_tokens + count_tokens(user) + MESSAGE_OVERHEAD + 3

    def price(self, tokens_in: float, tokens_out: float, reasoning: float = 0) -> float | None:
        """USD for these token counts (`reasoning` of the output tokens spent reasoning) by
        litellm's cost calculation; None when the model is unknown."""
        from litellm.types.utils import CompletionTokensDetailsWrapper, Usage

        details = CompletionTokensDetailsWrapper(reasoning_tokens=round(reasoning))
        usage = Usage(
            prompt_tokens=round(tokens_in),
            completion_tokens=round(tokens_out),
            total_tokens=round(tokens_in) + round(tokens_out),
            completion_tokens_details=details if reasoning else None,
        )
        return self._cost(usage)

    def _cost(self, usage: Any) -> float | None:
        """USD for a reply's usage (reasoning tokens included); None when it cannot be priced."""
        litellm = load_litellm()
        tokens_in = getattr(usage, "prompt_tokens", None)
        tokens_out = getattr(usage, "completion_tokens", None)
        if not (isinstance(tokens_in, int) and isinstance(tokens_out, int)):
            return None
        try:
            cost_in, cost_out = litellm.cost_per_token(
                model=self.settings.model,
                prompt_tokens=tokens_in,
                completion_tokens=tokens_out,
                usage_object=usage,
            )
        except Exception:  # ModelNotMappedError and kin: the price is not known
            return None
        return float(cost_in) + float(cost_out)

    def estimate(self, requests: Sequence[JudgeRequest]) -> Estimate:
        n, cap = len(requests), self.decoding.output_cap
        thinking = (
            min(cap, TYPICAL_REASONING_TOKENS[self.decoding.effort]) * n
            if self.decoding.reasoning
            else 0
        )
        tokens_in = sum(self.input_tokens(r) for r in requests)
        tokens_out = TYPICAL_OUTPUT_TOKENS * n + thinking
        worst_in = tokens_in * INPUT_MARGIN + 16 * n
        worst = [self.price(worst_in, cap * n)]
        if self.decoding.reasoning:  # the reasoning rate may be above the output rate
            worst.append(self.price(worst_in, cap * n, cap * n))
        known = [w for w in worst if w is not None]
        return Estimate(
            requests=n,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cost=self.price(tokens_in, tokens_out, thinking),
            max_cost=max(known) if known else None,
        )

    async def aclose(self) -> None:
        """Close litellm's cached HTTP clients: they belong to the event loop that is ending
        (left open, their sockets leak and a later event loop would reuse dead clients)."""
        litellm = load_litellm()
        await litellm.close_litellm_async_clients()
        litellm.in_memory_llm_clients_cache.flush_cache()

    async def judge(self, request: JudgeRequest) -> JudgeAnswer:
        litellm = load_litellm()
        kwargs: dict[str, Any] = {
            "model": self.settings.model,
            "messages": self.messages(request),
            "timeout": self.settings.timeout,
            "num_retries": 0,
            "max_retries": 0,
            **self.parameters,
        }
        if self.settings.api_base:
            kwargs["api_base"] = self.settings.api_base
        started = time.monotonic()
        try:
            response = await litellm.acompletion(**kwargs)
        except Exception as err:
            raise translate(err, litellm, self.settings.model) from None
        return completion_answer(response, self.price, time.monotonic() - started)
