"""The URL says what is on screen (AppTest): the sidebar's level, judge, depth and k and the
Compare page's runs, measure and query are read from a link and written back as they change, so
a comparison can be shared; values the database does not have are left out, and said so."""

from __future__ import annotations

from typing import Any

import pytest

from judgepool.pooling.store.connection import Store
from tests.dashboard_db import JUDGE, charts, frames, new_app, open_page, plain, texts_of


def opened(page: str, params: dict[str, Any]) -> Any:
    """The app opened on `page` from a link with `params` (what a browser does)."""
    at = new_app()
    at.query_params.update(params)
    if page != "runs":
        at.switch_page(f"dashboard/{page}.py")
    return at.run()


def params_of(at: Any) -> dict[str, list[str]]:
    return {k: v if isinstance(v, list) else [v] for k, v in dict(at.query_params).items()}


@pytest.mark.slow
def test_the_compare_choices_are_written_to_the_url(store: Store) -> None:
    at = open_page("compare")
    assert params_of(at) == {
        "level": ["chunk"],
        "baseline": ["base"],
        "candidate": ["cand"],
        "chart": ["cand"],
        "measure": ["nDCG@10"],
    }
    at.multiselect(key="compare_candidates").set_value(["cand", "weak"]).run()
    at.checkbox(key="compare_anyway").check().run()
    at.selectbox(key="compare_chart_candidate").set_value("weak").run()
    at.selectbox(key="compare_chart_measure").set_value("nR@10").run()
    at.selectbox(key="compare_query").set_value("q3").run()
    at.number_input(key="k").set_value(5).run()
    assert params_of(at) == {
        "level": ["chunk"],
        "k": ["5"],
        "baseline": ["base"],
        "candidate": ["cand", "weak"],
        "chart": ["weak"],
        "measure": ["nR@5"],  # the measure follows k (nR@10 is not a measure at k=5)
        "query": ["q3"],
    }


@pytest.mark.slow
def test_a_shared_link_opens_the_same_comparison(store: Store) -> None:
    at = open_page("compare")
    at.selectbox(key="compare_baseline").set_value("cand").run()
    at.multiselect(key="compare_candidates").set_value(["base"]).run()
    at.selectbox(key="compare_chart_measure").set_value("R(rel=3)@10").run()
    at.selectbox(key="compare_query").set_value("q6").run()
    link = params_of(at)
    shown = frames(at, "verdict")[0]
    other = opened("compare", link)  # a new session, as the colleague who opens the link
    assert not other.exception
    assert other.selectbox(key="compare_baseline").value == "cand"
    assert other.multiselect(key="compare_candidates").value == ["base"]
    assert other.selectbox(key="compare_chart_measure").value == "R(rel=3)@10"
    assert other.selectbox(key="compare_query").value == "q6"
    assert frames(other, "verdict")[0].equals(shown)
    ((spec, _),) = charts(other)
    assert spec["title"]["text"].startswith("base − cand: R(rel=3)@10 per query")
    assert len(frames(other, "rank")) == 2  # the query's two rankings are open
    assert params_of(other) == link


def test_the_sidebar_is_read_from_the_link(store: Store) -> None:
    at = opened("runs", {"level": "chunk", "judge": JUDGE, "depth": "5", "k": "20"})
    assert not at.exception
    assert at.radio(key="level").value == "chunk"
    assert at.selectbox(key="judge").value == JUDGE
    assert (at.number_input(key="depth").value, at.number_input(key="k").value) == (5, 20)
    assert texts_of(at, "subheader") == [f"Runs — chunk level · k=20 · judge {JUDGE}"]
    assert params_of(at) == {"level": ["chunk"], "judge": [JUDGE], "depth": ["5"], "k": ["20"]}


def test_a_level_in_the_link_is_taken(store: Store) -> None:
    at = opened("runs", {"level": "doc"})
    assert at.radio(key="level").value == "doc"
    assert any(
        "no query has an effective label at the doc level" in plain(e)
        for e in texts_of(at, "error")
    )


def test_link_values_the_database_lacks_are_left_out_and_said(store: Store) -> None:
    at = opened(
        "compare",
        {
            "judge": "nobody",
            "k": "many",
            "baseline": "gone",
            "candidate": ["weak", "nope"],
            "measure": "P@3",
        },
    )
    assert not at.exception
    (warning,) = [plain(w) for w in texts_of(at, "warning") if "left out" in w]
    assert "The link's judge='nobody' was left out: this database has no such judge" in warning
    assert "k='many' was left out: it is not a whole number from 1 to 1000" in warning
    assert "baseline='gone' was left out: this database has no such run" in warning
    assert "candidate='nope' was left out" in warning
    assert at.selectbox(key="judge").value == "any judge" and at.number_input(key="k").value == 10
    assert at.selectbox(key="compare_baseline").value == "base"
    assert at.multiselect(key="compare_candidates").value == ["weak"]  # refused: under the gate
    at.checkbox(key="compare_anyway").check().run()
    (warning,) = [plain(w) for w in texts_of(at, "warning") if "left out" in w]
    assert "measure='P@3' was left out: it is not a measure in this comparison" in warning
    assert at.selectbox(key="compare_chart_measure").value == "nDCG@10"
    at.button(key="link_problems_dismiss").click().run()
    assert not [w for w in texts_of(at, "warning") if "left out" in w]


def test_other_pages_keep_only_their_own_part_of_the_link(store: Store) -> None:
    at = opened("audit", {"level": "chunk", "qid": "q1", "doc_id": "q1-d00", "baseline": "cand"})
    assert not at.exception
    assert at.selectbox(key="audit_pair").value == ("q1", "q1-d00")
    assert params_of(at) == {"level": ["chunk"], "qid": ["q1"], "doc_id": ["q1-d00"]}
    at.switch_page("dashboard/export.py").run()
    assert params_of(at) == {"level": ["chunk"]}
