"""Which providers can judge in batch with the pinned litellm, their file limits, batch prices.

Checked against litellm 1.110.2's source (litellm/batches/main.py, litellm/files/main.py):

- openai, hosted_vllm, litellm_proxy go through the OpenAI SDK's files and batches endpoints
  (upload, create, retrieve, file content, cancel). judgepool's tests drive exactly this path
  against a local server (tests/fake_openai_batch.py). hosted_vllm / litellm_proxy need a
  server at --api-base that implements /v1/files and /v1/batches.
- azure and vertex_ai have all five operations in litellm (Azure: the OpenAI shape; Vertex: GCS
  upload, output converted back to the OpenAI shape) but are not exercised by our tests.
- anthropic: litellm 1.110.2's create_batch has no anthropic route ("LiteLLM doesn't support
  custom_llm_provider=anthropic for 'create_batch'"); only retrieve and the results file exist.
- bedrock: litellm uploads to S3 and runs the job, but returns Bedrock's own output records
  (recordId / modelOutput) unconverted, which our reader does not read.
- every other provider: no batch route in litellm 1.110.2, or one we have not verified.

Limits are per input file and conservative (OpenAI's published 50,000 requests and 200 MB for
every OpenAI-shaped provider): a smaller file is always accepted, a larger one fails the batch.

Batch prices come from litellm's price map (`input_cost_per_token_batches`,
`output_cost_per_token_batches`); a model the map lists without batch prices is priced at half
its online price (what the providers charge for batches) and says so in `basis`; a model the
map does not know has no price (None, never 0).
"""

from __future__ import annotations

from dataclasses import dataclass

from judgepool.errors import JudgeError, Param, remedy

_NO_BATCH = remedy(
    "run the same command without {} (the online judge works with every provider)",
    Param("submit_batch", None),
)


@dataclass(frozen=True)
class BatchLimits:
    """How much one input file may hold."""

    max_requests: int
    max_bytes: int
    source: str


OPENAI_LIMITS = BatchLimits(
    50_000, 200 * 1024 * 1024, "OpenAI batch guide: 50,000 requests and 200 MB per input file"
)


@dataclass(frozen=True)
class BatchSupport:
    """What judgepool knows about batch judging through one litellm provider."""

    provider: str
    supported: bool
    limits: BatchLimits | None = None
    tested: bool = False
    needs: str = ""
    gap: str | None = None


BATCH_SUPPORT: dict[str, BatchSupport] = {
    "openai": BatchSupport("openai", True, OPENAI_LIMITS, tested=True, needs="OPENAI_API_KEY"),
    "hosted_vllm": BatchSupport(
        "hosted_vllm",
        True,
        OPENAI_LIMITS,
        tested=True,
        needs="an api_base: a server that implements the OpenAI /v1/files and /v1/batches "
        "endpoints",
    ),
    "litellm_proxy": BatchSupport(
        "litellm_proxy",
        True,
        OPENAI_LIMITS,
        tested=True,
        needs="an api_base: a litellm proxy with batches enabled",
    ),
    "azure": BatchSupport(
        "azure",
        True,
        OPENAI_LIMITS,
        needs="AZURE_API_KEY, AZURE_API_BASE, AZURE_API_VERSION and a Global Batch deployment "
        "(the model name is the deployment name)",
    ),
    "vertex_ai": BatchSupport(
        "vertex_ai",
        True,
        OPENAI_LIMITS,
        needs="GCS_BUCKET_NAME, VERTEXAI_PROJECT, VERTEXAI_LOCATION and Google credentials",
    ),
    "anthropic": BatchSupport(
        "anthropic",
        False,
        gap="litellm 1.110.2 cannot create Anthropic message batches (its create_batch has no "
        "anthropic route; only retrieving a batch and its results exist)",
    ),
    "bedrock": BatchSupport(
        "bedrock",
        False,
        gap="litellm 1.110.2 returns Bedrock's own output records (recordId/modelOutput) from "
        "S3 unconverted, and judgepool reads OpenAI-shaped output lines only",
    ),
}


def provider_of(model: str) -> tuple[str, str]:
    """(provider, the model name the provider knows) for a litellm model string."""
    from judgepool.judge.llm import load_litellm

    litellm = load_litellm()
    try:
        name, provider, _, _ = litellm.get_llm_provider(model=model)
    except Exception as err:
        raise JudgeError(
            f"cannot tell the provider of model {model!r}: {err}",
            "use a litellm model string such as openai/gpt-4o-mini",
        ) from None
    return str(provider), str(name)


def batch_support(model: str) -> BatchSupport:
    """The support entry of `model`'s provider; a JudgeError saying what to do when there is
    none (the model string is the only input: no key or network is needed to decide)."""
    provider, _ = provider_of(model)
    support = BATCH_SUPPORT.get(provider)
    if support is None:
        support = BatchSupport(
            provider,
            False,
            gap=f"judgepool's batch mode does not support provider {provider!r} with litellm "
            "1.110.2 (supported: "
            + ", ".join(p for p, s in BATCH_SUPPORT.items() if s.supported)
            + ")",
        )
    if not support.supported:
        raise JudgeError(f"no batch API for {model}: {support.gap}", _NO_BATCH)
    return support


@dataclass(frozen=True)
class BatchRates:
    """USD per token for batch requests, and where the rates come from."""

    input: float
    output: float
    basis: str

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return tokens_in * self.input + tokens_out * self.output


def batch_rates(model: str) -> BatchRates | None:
    """The batch rates of `model` (see the module docstring); None when its price is unknown."""
    from judgepool.judge.llm import load_litellm

    litellm = load_litellm()
    try:
        info = litellm.get_model_info(model=model)
    except Exception:  # ModelNotMappedError and kin: the price is not known
        return None
    batch_in = info.get("input_cost_per_token_batches")
    batch_out = info.get("output_cost_per_token_batches")
    if isinstance(batch_in, float | int) and isinstance(batch_out, float | int):
        return BatchRates(float(batch_in), float(batch_out), "litellm batch price")
    online_in = info.get("input_cost_per_token")
    online_out = info.get("output_cost_per_token")
    if isinstance(online_in, float | int) and isinstance(online_out, float | int):
        return BatchRates(
            float(online_in) / 2,
            float(online_out) / 2,
            "half the online price (litellm's price map has no batch price for this model)",
        )
    return None
