"""The library leaves the process as it found it: no environment variable set, no library-wide
setting changed, by the offline judge's model or the tokenizer (issue 12.5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROBE = """
import json, os
# What third-party imports set themselves (torch sets KMP_* and TORCHINDUCTOR_CACHE_DIR) is
# theirs: the environment is taken after them, before any of our code runs.
import sentence_transformers, tiktoken, torch  # noqa: F401
import transformers.utils.logging as bars
before = dict(os.environ)
from judgepool.judge.offline.model import Encoder, resolve_model
from judgepool.judge.tokens import count_tokens
count_tokens("a few words to count")
encoder = Encoder(resolve_model("offline"), threads=1, precision="float32")
vectors = encoder.encode(["what is a dunder method?"])
after = dict(os.environ)
print(json.dumps({
    "added": sorted(set(after) - set(before)),
    "changed": sorted(k for k in before if before[k] != after.get(k)),
    "bars": bars.is_progress_bar_enabled(),
    "shape": list(vectors.shape),
}))
"""


@pytest.mark.slow
def test_loading_the_offline_model_and_the_tokenizer_changes_no_setting() -> None:
    unset = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TIKTOKEN_CACHE_DIR")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"added": [], "changed": [], "bars": True, "shape": [1, 384]}
