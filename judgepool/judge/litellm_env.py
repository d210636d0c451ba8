"""Importing litellm as judgepool uses it: offline (the local price map) and quiet.

One place for it, so that every module that needs litellm (the judge, its reasoning-model
parameters, the batch mode) imports it the same way, and none imports another only for this.
"""

from __future__ import annotations

import os
import warnings
from types import ModuleType
from typing import cast

#: What Python says when a call cut short by our timeout (or a cap, or Ctrl-C) is cancelled
#: while litellm holds the provider's coroutine it has not awaited yet: noise on stderr about
#: litellm's internals, not a problem of the run (the call is counted and charged as unanswered).
_UNAWAITED = r"coroutine '\w*(Completion|Chat|LLM|Http|Handler)\w*\.a\w*' was never awaited"


def load_litellm() -> ModuleType:
    """Import litellm offline (local price map) and quiet (no feedback banners on errors)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    warnings.filterwarnings("ignore", message=_UNAWAITED, category=RuntimeWarning)
    return cast(ModuleType, litellm)  # mypy does not follow litellm (pyproject): Any to it
