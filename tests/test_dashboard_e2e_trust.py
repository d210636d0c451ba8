"""The Audit page in headless Chromium (skipped without Chromium): the labelling queue graded with
the keyboard, and the page's layout fixed: what a person works on (the queue's grade buttons, an
opened pair's override form, the save confirmation) is in view in a 1400 x 1000 window without
scrolling, and the confirmation stays through a live refresh."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from judgepool.api.audit import sample
from judgepool.pooling.export import export_labels
from judgepool.pooling.store.connection import Store
from tests.dashboard_browser import BrowserPage, browser_page, free_port, serve_dashboard
from tests.dashboard_db import build
from tests.test_dashboard_e2e import chromium

Writer = Callable[[str, str | bytes], Path]
HEIGHT = 1000

# The bottom edge (px from the top of the window) of the first visible element whose text
# starts with the argument, or null.
BOTTOM = """(() => {
  const wanted = %s;
  const found = [...document.querySelectorAll("button, [data-testid='stAlertContainer'], h3")]
    .filter(e => e.offsetParent !== null && e.innerText.trim().startsWith(wanted));
  return found.length ? Math.round(found[0].getBoundingClientRect().bottom) : null;
})()"""


def bottom(page: BrowserPage, text: str) -> int | None:
    import json

    value = page.evaluate(BOTTOM % json.dumps(text))
    return None if value is None else int(value)


def wait_for(check: Callable[[], bool], what: str, timeout: float = 40) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.25)


def human(store: Store) -> str:
    return export_labels(store, "chunk", "human").decode()


@pytest.mark.slow
def test_the_queue_graded_with_the_keyboard(write: Writer) -> None:
    browser = chromium()
    store = build(Store(), write)
    sample(store, 3, seed=2)  # q3 q4 q2: their d10 are queued
    port = free_port()
    with serve_dashboard(store.path, port), browser_page(browser, (1400, HEIGHT)) as page:
        page.open(f"http://127.0.0.1:{port}/audit")
        page.wait_until_drawn("12 of 15 pairs labelled")
        assert "q3 · q3-d10" in page.text() and "passage 10 about q3" in page.text()
        for grade in ("0 · irrelevant", "3 · perfectly relevant", "Undo"):
            found = bottom(page, grade)
            assert found is not None and found < HEIGHT, (grade, found)  # no scrolling
        page.press("2")
        wait_for(lambda: "q3 0 q3-d10 2" in human(store), "the grade to be saved")
        wait_for(lambda: "q4 · q4-d10" in page.text(), "the next pair")
        assert "The judge had said 2." in page.text()
        shown = bottom(page, "Saved grade 2 (highly relevant) for q3 · q3-d10")
        assert shown is not None and shown < HEIGHT
        time.sleep(6)  # a live refresh (every 5 s) keeps it
        assert "Saved grade 2 (highly relevant) for q3 · q3-d10" in page.text()
        page.press("u")
        wait_for(lambda: "q3-d10" not in human(store), "the undo")
        wait_for(lambda: "q3 · q3-d10" in page.text(), "the undone pair to come back")
        page.press("1")
        wait_for(lambda: "q3 0 q3-d10 1" in human(store), "the new grade")


@pytest.mark.slow
def test_an_opened_pair_shows_its_override_form_and_confirmation_in_view(
    write: Writer,
) -> None:
    browser = chromium()
    store = build(Store(), write)
    port = free_port()
    with serve_dashboard(store.path, port), browser_page(browser, (1400, HEIGHT)) as page:
        page.open(f"http://127.0.0.1:{port}/audit?qid=q2&doc_id=q2-d10")
        page.wait_until_drawn("Save override")
        form = bottom(page, "Save override")
        assert form is not None and form < HEIGHT, form  # it was about 1,550 px below the fold
        page.evaluate(
            "[...document.querySelectorAll('label')].find(l => l.innerText.trim() === "
            "'0 irrelevant').click()"
        )
        time.sleep(0.5)
        page.evaluate(
            "[...document.querySelectorAll('button')].find(b => b.innerText.trim() === "
            "'Save override').click()"
        )
        wait_for(lambda: "q2 0 q2-d10 0" in human(store), "the override to be saved")
        wait_for(lambda: "it is now the effective label everywhere" in page.text(), "the note")
        shown = bottom(page, "Saved grade 0 for (q2, q2-d10)")
        assert shown is not None and shown < HEIGHT, shown
        time.sleep(6)  # through a live refresh
        assert "it is now the effective label everywhere" in page.text()
