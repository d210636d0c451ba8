"""Document-level pools, the hand-written labels, and the qrels files derived from them.

Labels are written by hand per information need (pair, topic) in data/labels.tsv, because
the ref and ticket phrasings of a pair ask the same thing. The qrels files are then exactly
the pools: qrels-doc.v1-pool.txt = union of the depth-10 document pools of bm25-v1 and
dense-v1 per query; qrels-doc.v2-only.txt = what bm25-v2/dense-v2 add at depth 10. Any pool
pair without a label, or any label that no pool needs, fails the build.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .questions import QuestionPair, pair_of
from .runs import Ranking, collapse
from .source import Doc

POOL_DEPTH = 10
V1_RUNS = ("bm25-v1", "dense-v1")
V2_RUNS = ("bm25-v2", "dense-v2")
GRADES = (0, 1, 2, 3)

Pools = dict[str, set[str]]


class LabelError(ValueError):
    """Labels or qrels do not cover their pools exactly."""


def doc_pool(
    runs: Mapping[str, Mapping[str, Ranking]],
    names: tuple[str, ...],
    parent: Mapping[str, str],
    qids: list[str],
    depth: int = POOL_DEPTH,
) -> Pools:
    """Per query, the union over the named runs of their top-`depth` distinct documents."""
    pools: Pools = {}
    for qid in qids:
        docs: set[str] = set()
        for name in names:
            docs.update(d for d, _ in collapse(runs[name].get(qid, []), parent, depth))
        pools[qid] = docs
    return pools


def split_pools(v1: Pools, v2: Pools) -> tuple[Pools, Pools]:
    """(v1 pool, pairs only the v2 runs reach)."""
    return v1, {q: v2[q] - v1[q] for q in v2}


@dataclass(frozen=True)
class Label:
    """One hand-written judgment of a document for an information need."""

    pair: str
    doc_id: str
    grade: int
    note: str


def read_labels(path: Path) -> dict[tuple[str, str], Label]:
    """Parse labels.tsv: pair<TAB>doc_id<TAB>grade<TAB>note, '#' comments allowed."""
    labels: dict[tuple[str, str], Label] = {}
    if not path.exists():
        return labels
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) < 3:
            raise LabelError(f"{path.name}:{n}: expected pair<TAB>doc_id<TAB>grade[<TAB>note]")
        pair, doc, grade = parts[0].strip(), parts[1].strip(), int(parts[2])
        if grade not in GRADES:
            raise LabelError(f"{path.name}:{n}: grade {grade} not in 0-3")
        if (pair, doc) in labels:
            raise LabelError(f"{path.name}:{n}: duplicate label for {pair} {doc}")
        labels[(pair, doc)] = Label(pair, doc, grade, parts[3].strip() if len(parts) > 3 else "")
    return labels


def check_labels(
    labels: Mapping[tuple[str, str], Label], pools: list[Pools], doc_ids: set[str]
) -> None:
    """Fail loudly unless the labels cover exactly the (pair, doc) needs of the pools."""
    needed = {(pair_of(q), d) for p in pools for q, docs in p.items() for d in docs}
    missing = sorted(needed - labels.keys())
    extra = sorted(labels.keys() - needed)
    unknown = sorted(k for k in labels if k[1] not in doc_ids)
    if missing or extra or unknown:
        msg = []
        if missing:
            msg.append(
                f"{len(missing)} pooled pairs have no label, e.g. {missing[:5]} "
                "(run build_collection.py --print-pool)"
            )
        if extra:
            msg.append(f"{len(extra)} labels are in no pool, e.g. {extra[:5]}")
        if unknown:
            msg.append(f"labels name unknown documents: {unknown[:5]}")
        raise LabelError("labels.tsv does not match the pools: " + "; ".join(msg))


def qrels_text(pools: Pools, labels: Mapping[tuple[str, str], Label], qids: list[str]) -> str:
    """TREC qrels 'qid 0 doc grade' for exactly the pooled pairs, in query then doc order."""
    lines = []
    for qid in qids:
        for doc in sorted(pools[qid]):
            lines.append(f"{qid} 0 {doc} {labels[(pair_of(qid), doc)].grade}\n")
    return "".join(lines)


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """Read a TREC qrels file into {qid: {doc: grade}}."""
    out: dict[str, dict[str, int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            qid, _it, doc, grade = line.split()
            out.setdefault(qid, {})[doc] = int(grade)
    return out


def check_qrels_cover(path: Path, pools: Pools) -> None:
    """Fail loudly unless the qrels file holds exactly the pool's (qid, doc) pairs."""
    qrels = read_qrels(path)
    have = {(q, d) for q, docs in qrels.items() for d in docs}
    want = {(q, d) for q, docs in pools.items() for d in docs}
    if have != want:
        raise LabelError(
            f"{path.name} does not cover its pool exactly: missing {sorted(want - have)[:5]} "
            f"({len(want - have)}), extra {sorted(have - want)[:5]} ({len(have - want)})"
        )


def labelling_sheet(
    pairs: list[QuestionPair],
    docs: list[Doc],
    v1: Pools,
    v2_only: Pools,
    labels: Mapping[tuple[str, str], Label],
) -> str:
    """Human-readable list of what to label, per need, with titles and the answer sentence."""
    by_id = {d.doc_id: d for d in docs}
    out: list[str] = []
    for q in pairs:
        sent = " ".join(q.answer_sentence.split())
        holders = [d.doc_id for d in docs if q.answer_sentence in d.text]
        out += [
            f"=== {q.pair}  answer_doc={q.answer_doc}",
            f"  ref:    {q.reference}",
            f"  ticket: {q.ticket}",
            f"  answer: {sent}",
            f"  sentence verbatim in: {', '.join(holders)}",
        ]
        origin: dict[str, list[str]] = {}
        for ph in ("ref", "ticket"):
            qid = q.qid(ph)
            for d in v1[qid]:
                origin.setdefault(d, []).append(f"{ph}:v1")
            for d in v2_only[qid]:
                origin.setdefault(d, []).append(f"{ph}:v2only")
        for d in sorted(origin):
            lab = labels.get((q.pair, d))
            mark = f"[{lab.grade}]" if lab else "[ ]"
            out.append(f"  {mark} {d:24s} {by_id[d].title[:48]:48s} {' '.join(origin[d])}")
    return "\n".join(out) + "\n"
