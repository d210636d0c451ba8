"""The offline judge: grades holes from their query's labelled passages and query similarity.

All the work happens in `prepare` (one batch: read the evidence, embed every text, calibrate,
decide every hole); `judge` then hands out the answer prepared for a request. The method is in
judge/offline/method.py, the evidence in evidence.py, the model and its caches in model.py and
embeddings.py. Every answer is `ok` with a grade 0-3, costs nothing, and carries its evidence
(similarities, the neighbour's doc id and grade, the thresholds) as raw output.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from judgepool.errors import JudgeError
from judgepool.judge.base import Estimate, JudgeAnswer, JudgeRequest
from judgepool.judge.cache import canonical_json, content_key
from judgepool.judge.offline.embeddings import EmbeddingCache, EmbedStats, embed, model_key
from judgepool.judge.offline.evidence import OFFLINE_LABELLER_PREFIX, LabelledText, labelled_texts
from judgepool.judge.offline.method import (
    DEFAULT_THRESHOLDS,
    METHOD_VERSION,
    MIN_CALIBRATION_PAIRS,
    NEAR_DUPLICATE,
    NEIGHBOUR_MIN,
    Calibration,
    QueryEvidence,
    calibrate,
    decide,
)
from judgepool.judge.offline.model import (
    Encoder,
    ModelSource,
    fingerprint,
    precision_setting,
    threads_setting,
)
from judgepool.judge.progress_lines import ticker
from judgepool.pooling.io.text import content_hash, normalise
from judgepool.pooling.store.connection import Store

_PARAMETERS = {
    "near_duplicate": NEAR_DUPLICATE,
    "neighbour_min": NEIGHBOUR_MIN,
    "default_thresholds": list(DEFAULT_THRESHOLDS),
    "min_calibration_pairs": MIN_CALIBRATION_PAIRS,
}


def _model_max_seq_length(source: ModelSource) -> int | None:
    """The input cut the model declares (read from its config, without loading it)."""
    config = source.path / "sentence_bert_config.json"
    try:
        value = json.loads(config.read_text(encoding="utf-8")).get("max_seq_length")
    except (OSError, ValueError, AttributeError):
        return None
    return int(value) if isinstance(value, int) else None


def _evidence_hash(items: Sequence[LabelledText]) -> str:
    """A hash of a query's evidence by content: (text hash, grade) pairs, order-free."""
    pairs = sorted([content_hash(item.text), item.grade] for item in items)
    return hashlib.sha256(canonical_json(pairs).encode("utf-8")).hexdigest()[:32]


class OfflineJudge:
    """The `Judge` for `offline` / `offline:PATH` (see the module docstring)."""

    def __init__(
        self,
        source: ModelSource,
        threads: int | None = None,
        precision: str | None = None,
        batch_size: int = 16,
        cache_dir: str | None = None,
    ) -> None:
        self.source = source
        self.threads = threads_setting(threads)
        self.precision = precision_setting(precision)
        self.encoder = Encoder(source, self.threads, self.precision, batch_size)
        self.max_seq_length = _model_max_seq_length(source)
        self.cache_dir = cache_dir
        self.fingerprint: str | None = None
        self.calibrations: dict[str, Calibration] = {}
        self.embed_stats = EmbedStats()
        self.prepare_seconds: float | None = None
        self.note: Callable[[str], None] | None = None  # set by the loop: where to say progress
        self._answers: dict[JudgeRequest, JudgeAnswer] = {}
        self._keys: dict[JudgeRequest, str] = {}

    @property
    def labeller(self) -> str:
        return f"{OFFLINE_LABELLER_PREFIX}{self.source.name}@{METHOD_VERSION}"

    def describe(self) -> dict[str, Any]:
        described: dict[str, Any] = {
            "judge": "offline",
            "model": self.source.name,
            "model_files_sha256": self.fingerprint,
            "method": METHOD_VERSION,
            "parameters": {
                **_PARAMETERS,
                "precision": self.precision,
                "max_seq_length": self.max_seq_length,
            },
            "calibration": {level: c.as_dict() for level, c in sorted(self.calibrations.items())},
            "threads": self.threads,
        }
        if self.source.package is not None:
            described["package"] = self.source.package
        else:
            described["model_path"] = str(self.source.path)
        if self.prepare_seconds is not None:
            described["batch"] = {
                **asdict(self.embed_stats),
                "seconds": round(self.prepare_seconds, 3),
                "model_load_seconds": self.encoder.load_seconds,
            }
            described["batch"]["embed_seconds"] = round(self.embed_stats.seconds, 3)
        return described

    def cache_key(self, request: JudgeRequest) -> str:
        try:
            return self._keys[request]
        except KeyError:
            raise JudgeError(
                f"the offline judge was asked about ({request.qid}, {request.doc_id}) "
                "before prepare() saw it",
                "call prepare(store, requests) with every request first",
            ) from None

    def estimate(self, requests: Sequence[JudgeRequest]) -> Estimate:
        return Estimate(requests=len(requests), tokens_in=0, tokens_out=0, cost=0.0, max_cost=0.0)

    async def judge(self, request: JudgeRequest) -> JudgeAnswer:
        try:
            return self._answers[request]
        except KeyError:
            raise JudgeError(
                f"the offline judge has no prepared answer for ({request.qid}, {request.doc_id})",
                "call prepare(store, requests) with every request first",
            ) from None

    def prepare(self, store: Store, requests: Sequence[JudgeRequest]) -> None:
        """Read the evidence, embed every text (cached), calibrate, and grade every request."""
        started = time.perf_counter()
        self._answers.clear()
        self._keys.clear()
        self.calibrations.clear()
        self.embed_stats = EmbedStats()
        with EmbeddingCache(self.cache_dir) as cache:
            self.fingerprint = fingerprint(self.source, cache)
            vectors_key = model_key(self.fingerprint, self.precision, self.max_seq_length)
            for level in sorted({r.level for r in requests}):
                batch = [r for r in requests if r.level == level]
                self._prepare_level(store, level, batch, cache, vectors_key)
        self.prepare_seconds = time.perf_counter() - started

    def _prepare_level(
        self,
        store: Store,
        level: str,
        requests: list[JudgeRequest],
        cache: EmbeddingCache,
        vectors_key: str,
    ) -> None:
        labelled = labelled_texts(store, level, [r.qid for r in requests])
        query_text: dict[str, str] = {}
        for r in requests:
            query_text.setdefault(r.qid, r.query)
        texts = [
            *query_text.values(),
            *(r.passage for r in requests),
            *(item.text for items in labelled.values() for item in items),
        ]
        vectors, stats = embed(texts, self.encoder, cache, vectors_key, progress=self._told(level))
        for name in ("texts", "unique", "cached", "encoded"):
            setattr(self.embed_stats, name, getattr(self.embed_stats, name) + getattr(stats, name))
        self.embed_stats.seconds += stats.seconds

        def vec(text: str) -> np.ndarray[Any, np.dtype[np.float32]]:
            return vectors[content_hash(text)]

        evidence: dict[str, QueryEvidence] = {}
        for qid, text in query_text.items():
            items = labelled.get(qid, [])
            dim = len(vec(text))
            evidence[qid] = QueryEvidence(
                query=vec(text),
                doc_ids=tuple(i.doc_id for i in items),
                grades=np.array([i.grade for i in items], dtype=np.int64),
                passages=(
                    np.stack([vec(i.text) for i in items])
                    if items
                    else np.zeros((0, dim), dtype=np.float32)
                ),
            )
        calibration = calibrate(list(evidence.values()))
        self.calibrations[level] = calibration
        hashes = {qid: _evidence_hash(labelled.get(qid, [])) for qid in evidence}
        for request in requests:
            self._decide(
                request,
                evidence[request.qid],
                labelled.get(request.qid, []),
                hashes[request.qid],
                calibration,
                vec(request.passage),
            )

    def _told(self, level: str) -> Callable[[int, int], None] | None:
        """What `embed` tells as it goes, said to `note` (set by the loop): the model's load,
        then a line every few seconds; a DL19 run embeds for minutes (issue 24: 12 silent)."""
        note = self.note
        if note is None:
            return None
        tick = ticker(note, f"offline judge, {level} level, embedding", "texts")
        loading = self.encoder.load_seconds is None

        def tell(done: int, total: int) -> None:
            nonlocal loading
            if loading and done == 0 and total:
                note(f"offline judge: loading the model {self.source.name} (once per run)")
                loading = False
            tick(done, total)

        return tell

    def _decide(
        self,
        request: JudgeRequest,
        ev: QueryEvidence,
        items: list[LabelledText],
        evidence_hash: str,
        calibration: Calibration,
        passage: np.ndarray[Any, np.dtype[np.float32]],
    ) -> None:
        """Grade one request; a pair never serves as its own evidence."""
        keep = np.array([d != request.doc_id for d in ev.doc_ids], dtype=bool)
        excluded = None
        if not keep.all():
            excluded = request.doc_id
            evidence_hash = _evidence_hash([i for i in items if i.doc_id != request.doc_id])
        s_query = float(ev.query @ passage)
        sims = ev.passages[keep] @ passage
        decision = decide(s_query, sims, ev.grades[keep], calibration)
        if decision.neighbour is not None:  # index into the kept rows -> into all rows
            decision = type(decision)(
                decision.rule,
                decision.grade,
                decision.s_query,
                decision.s_neighbour,
                int(np.flatnonzero(keep)[decision.neighbour]),
            )
        raw = canonical_json(decision.evidence(ev, calibration, excluded))
        self._answers[request] = JudgeAnswer(
            status="ok",
            grade=decision.grade,
            raw_output=raw,
            cost=0.0,
            provenance={"rule": decision.rule},
        )
        self._keys[request] = content_key(
            {
                "judge": "offline",
                "model_files_sha256": self.fingerprint,
                "precision": self.precision,
                "max_seq_length": self.max_seq_length,
                "method": METHOD_VERSION,
                "parameters": _PARAMETERS,
                "level": request.level,
                "query": normalise(request.query),
                "passage": normalise(request.passage),
                "evidence": evidence_hash,
                "thresholds": [round(t, 6) for t in calibration.thresholds],
                "neighbour_rule": calibration.neighbours_on,
            }
        )
