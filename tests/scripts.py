"""Load a script of the repository (bench/, docs/) as a module, so a test calls its functions:
the scripts are not a package, and a test must run the very code their command runs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def script(path: Path) -> ModuleType:
    """The module of the script at `path`, registered in sys.modules (dataclasses look their
    module up there while they are built)."""
    name = f"script_{path.parent.name}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
