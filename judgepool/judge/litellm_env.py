"""Importing litellm as judgepool uses it: offline (the local price map) and quiet.

One place for it, so that every module that needs litellm (the judge, its reasoning-model
parameters, the batch mode) imports it the same way, and none imports another only for this.
"""

from __future__ import annotations

import os
from types import ModuleType


def load_litellm() -> ModuleType:
    """Import litellm offline (local price map) and quiet (no feedback banners on errors)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm
