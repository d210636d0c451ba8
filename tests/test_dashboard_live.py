"""While a judge writes labels, every page says "labels being written: n holes left" and Compare
marks its verdicts provisional; when it ends (or dies), the pages say nothing more. A real
`judgepool judge` process against the fake provider, its answers held mid-backfill, read by
AppTest; pooling.store.activity on its own for the cases a test cannot wait for (expired leases)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

import judgepool as jp
from judgepool.pooling.store import claims
from judgepool.pooling.store.activity import activity
from judgepool.pooling.store.connection import Store
from tests.dashboard_db import PAGES, frames, open_page, plain, texts_of
from tests.dashboard_judge import held_judge, judge_labels

BANNER = "Labels being written: 19 holes left in the depth-10 pool (chunk level · k=10 · any judge)"


def banners(at: object) -> list[str]:
    return [plain(w) for w in texts_of(at, "warning") if w.startswith("Labels being written")]


@pytest.mark.slow
def test_every_page_says_labels_are_being_written_while_a_judge_runs(store: Store) -> None:
    compare = open_page("compare")
    assert not banners(compare)
    with held_judge(store.path, answered=5) as judge:
        assert judge_labels(store) == 5  # 24 holes (all weak's), 5 labelled, the rest held
        for page in PAGES:
            at = open_page(page)
            assert not at.exception, page
            (banner,) = banners(at)
            assert banner.startswith(BANNER), (page, banner)
            assert "A judge is labelling this database now (1 process, " in banner
            assert "provisional" in banner
        compare.run()  # an open page sees it on its next refresh
        assert banners(compare)
        (deltas,) = frames(compare, "verdict")
        assert deltas["verdict"].str.endswith("(provisional: labels being written)").all()
        compare.multiselect(key="compare_candidates").set_value(["cand", "weak"]).run()
        compare.checkbox(key="compare_anyway").check().run()
        (holes,) = [plain(w) for w in texts_of(compare, "warning") if w.startswith("Provisional")]
        assert "Holes in the compared runs' top 10 now: base 0, cand 0, weak 19." in holes
        code, err = judge.finish()
    assert code == 0, err
    assert judge_labels(store) == 24
    compare.run()
    assert not banners(compare)
    assert not [w for w in texts_of(compare, "warning") if w.startswith("Provisional")]
    (deltas,) = frames(compare, "verdict")
    assert not deltas["verdict"].str.contains("provisional").any()


@pytest.mark.slow
def test_a_killed_judge_is_not_shown_as_writing(store: Store) -> None:
    with held_judge(store.path, answered=3) as judge:
        assert banners(open_page("runs"))
        assert jp.open(store.path).activity().writing  # the library says it too
        judge.process.send_signal(signal.SIGKILL)
        judge.process.wait(timeout=30)
        # Its claims are still in the table (their lease runs 60 s), held by a dead process.
        assert claims.holders(store)
        at = open_page("runs")
        assert not banners(at)
        assert not jp.open(store.path).activity().writing


def test_activity_counts_live_judges_only(store: Store) -> None:
    assert activity(store).judges == () and not activity(store).writing
    wanted = [claims.Wanted("k1", (("q1", "q1-d11"),), "chunk")]
    me = claims.new_holder()  # this process: alive
    claims.claim(store, me, wanted, "x", 0, 60)
    now = activity(store)
    assert now.writing and now.judges == ((me, 1),) and now.claimed == 1
    assert now.label_age_s is not None and now.label_age_s >= 0  # the fixture's judge labels
    claims.retire(me)  # done: a claim left behind is a dead holder's
    assert not activity(store).writing
    claims.release(store, me)


@pytest.mark.slow
def test_a_dead_pid_an_expired_lease_and_a_batch_do_not_count_as_writing(store: Store) -> None:
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = claims.new_holder().rsplit(":", 2)[0] + f":{gone.stdout.strip()}:feed"
    claims.claim(store, dead, [claims.Wanted("k1", (("q1", "q1-d11"),), "chunk")], "x", 0, 60)
    assert not activity(store).writing  # on this machine and gone: not writing
    other = f"judge:another-host:1:{os.getpid()}:cafe"
    claims.claim(store, other, [claims.Wanted("k2", (("q1", "q1-d12"),), "chunk")], "x", 0, 1)
    assert activity(store).judges == ((other, 1),)  # elsewhere: alive while its lease lasts
    time.sleep(1.1)  # its lease (1 s) ran out: it died or was cut off
    assert not activity(store).writing
    batch = claims.new_holder("batch", "batch_abc")
    claims.claim(store, batch, [claims.Wanted("k3", (("q2", "q2-d11"),), "chunk")], "x", 0, 600)
    found = activity(store)
    assert not found.writing and found.batches == ((batch, 1),)
    at = open_page("runs")
    (info,) = [plain(i) for i in texts_of(at, "info") if "open batch" in i]
    assert info.startswith("An open batch holds 1 pair (batch:batch_abc)")
