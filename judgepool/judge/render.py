"""One pair's prompt on demand: the exact messages a judge sends for (qid, doc_id), and its key.

Nothing here renders a prompt its own way: the request is built by judge/requests.py
(`build_requests`, the same normalisation, truncation and doc-level chunk choice as a judge run
with the same options), the messages by the judge's own `messages` (its template's `render`:
normalised, fence-safe texts), the key by its `cache_key`, and the request body by the batch
line builder (judge/batch/requests.py: litellm's parameter mapping and request transformation
for the provider, the body the online judge POSTs). So what is shown is what is sent.

Without a model there is no cache key (it covers the model and its parameters): the messages
are the template's for the pair.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judgepool.errors import Call, Param, Remedy, UsageError, remedy
from judgepool.judge.base import JudgeRequest
from judgepool.judge.options import (
    DEFAULT_MAX_CHUNKS,
    DEFAULT_PASSAGE_TOKENS,
    DEFAULT_QUERY_TOKENS,
)
from judgepool.judge.prompt import DEFAULT_TEMPLATE, load_template
from judgepool.judge.requests import build_requests
from judgepool.pooling.pool import Hole
from judgepool.pooling.store.connection import Store


@dataclass(frozen=True)
class RenderedPrompt:
    """What a judge sends for one pair.

    `messages` are the chat messages handed to litellm; `body` (with a model) the request body
    litellm sends the provider, after its own transformation (an o-series model gets its system
    message as a user message); `body_converted` is true when litellm converts that body further
    for a provider that is not OpenAI-shaped (anthropic, vertex_ai ...).
    """

    qid: str
    doc_id: str
    level: str
    template: dict[str, str]
    request: JudgeRequest
    messages: list[dict[str, str]]
    model: str | None = None
    labeller: str | None = None
    parameters: dict[str, Any] | None = None
    cache_key: str | None = None
    body: dict[str, Any] | None = None
    body_converted: bool = False

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view (what `judgepool prompt render --json` prints)."""
        r = self.request
        return {
            "qid": self.qid,
            "doc_id": self.doc_id,
            "level": self.level,
            "template": self.template,
            "model": self.model,
            "labeller": self.labeller,
            "parameters": self.parameters,
            "cache_key": self.cache_key,
            "shown": [{"doc_id": s.doc_id, "start": s.start, "end": s.end} for s in r.shown],
            "truncated": r.truncated,
            "query_truncated": r.query_truncated,
            "messages": self.messages,
            "body": self.body,
            "body_converted": self.body_converted,
        }


def pair_request(
    store: Store,
    qid: str,
    doc_id: str,
    level: str = "chunk",
    runs: Sequence[str] = (),
    passage_tokens: int = DEFAULT_PASSAGE_TOKENS,
    max_chunks: int = DEFAULT_MAX_CHUNKS,
    query_tokens: int = DEFAULT_QUERY_TOKENS,
) -> JudgeRequest:
    """The judge request for one pair, as a judge run with these options builds it."""
    hole = Hole(qid, doc_id, best_rank=0, runs=tuple(runs), has_text=True, has_query_text=True)
    built = build_requests(
        store, [hole], level, list(runs), passage_tokens, max_chunks, query_tokens
    )
    if built.skipped:
        reason = built.skipped[0].reason
        where = ("the runs" + (f" {', '.join(runs)}" if runs else "")) if level == "doc" else ""
        hints: dict[str, str | Remedy] = {
            "no query text": remedy("check the qid (`{}`); ", Call.of("queries"))
            + f"{qid!r} is unknown or has no text",
            "no passage text": f"check the doc id; {doc_id!r} is not in the database or has no "
            "text",
        }
        hint = hints.get(
            reason,
            f"at the doc level a document is shown through the chunks {where} retrieved for "
            "the query: " + remedy("name a run that retrieved it with {}", Param("runs", None)),
        )
        raise UsageError(
            f"({qid}, {doc_id}) at the {level} level: {reason}, so no judge is ever asked about it",
            hint,
        )
    return built.requests[0]


def render_prompt(
    store: Store,
    qid: str,
    doc_id: str,
    level: str = "chunk",
    *,
    model: str | None = None,
    template: str | None = None,
    runs: Sequence[str] = (),
    passage_tokens: int = DEFAULT_PASSAGE_TOKENS,
    max_chunks: int = DEFAULT_MAX_CHUNKS,
    query_tokens: int = DEFAULT_QUERY_TOKENS,
    temperature: float | None = None,
    max_tokens: int | None = None,
    reasoning_effort: str | None = None,
) -> RenderedPrompt:
    """The prompt of (qid, doc_id) as `judgepool judge` with these options would send it."""
    request = pair_request(
        store, qid, doc_id, level, runs, passage_tokens, max_chunks, query_tokens
    )
    name = template or DEFAULT_TEMPLATE
    if model is None:
        if (temperature, max_tokens, reasoning_effort) != (None, None, None):
            raise UsageError(
                remedy(
                    "{}, {} and {} need {}",
                    *(Param(n, None) for n in ("temperature", "max_tokens", "reasoning_effort")),
                    Param("model", None),
                ),
                remedy("name the model, e.g. {}", Param("model", "openai/gpt-4o-mini")),
            )
        loaded = load_template(name)
        return RenderedPrompt(
            qid,
            doc_id,
            request.level,
            loaded.describe(),
            request,
            loaded.render(request.query, request.passage),
        )
    from judgepool.judge.registry import is_offline

    if is_offline(model):
        raise UsageError(
            f"{model} sends no prompt: the offline judge compares embeddings",
            remedy(
                "name an LLM with {} (e.g. openai/gpt-4o-mini), or leave it out for the "
                "template's messages",
                Param("model", None),
            ),
            value=model,
        )
    from judgepool.judge.batch.requests import OPENAI_SHAPED, LineBuilder
    from judgepool.judge.llm import LLMJudge, LLMSettings

    judge = LLMJudge(
        LLMSettings(
            model,
            temperature=temperature,
            max_tokens=max_tokens,
            template=name,
            reasoning_effort=reasoning_effort,
        )
    )
    builder = LineBuilder(judge)
    return RenderedPrompt(
        qid,
        doc_id,
        request.level,
        judge.template.describe(),
        request,
        judge.messages(request),
        model=model,
        labeller=judge.labeller,
        parameters=judge.parameters,
        cache_key=judge.cache_key(request),
        body=builder.body(request),
        body_converted=builder.provider not in OPENAI_SHAPED,
    )
