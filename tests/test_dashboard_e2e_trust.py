"""The Audit page in headless Chromium (skipped without Chromium): the labelling queue graded with
the keyboard, a key grading only the pair that was on screen when it was pressed (issue 22: 1,
then 2 a quarter of a second later, graded the next pair before it was drawn), a skip that
survives a reload, and the page's layout: what a person works on (the queue's grade buttons,
Skip, Undo and the key help; an opened pair's override form; the save confirmation) is in view
in a 900-px-high window without scrolling, and the confirmation stays through a live refresh."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import pytest

from judgepool.api.audit import sample
from judgepool.pooling.export import export_labels
from judgepool.pooling.store.connection import Store
from tests.dashboard_browser import BrowserPage, browser_page, free_port, serve_dashboard
from tests.dashboard_db import build
from tests.test_dashboard_e2e import chromium

Writer = Callable[[str, str | bytes], Path]
HEIGHT = 900
SIZE = (1440, HEIGHT)

# The bottom edge (px from the top of the window) of the first visible element whose text
# starts with the argument, or null.
BOTTOM = """(() => {
  const wanted = %s;
  const found = [...document.querySelectorAll(
      "button, [data-testid='stAlertContainer'], h3, [data-testid='stCaptionContainer']")]
    .filter(e => e.offsetParent !== null && e.innerText.trim().startsWith(wanted));
  return found.length ? Math.round(found[0].getBoundingClientRect().bottom) : null;
})()"""
# The queue's open pair, as its heading says it ("q3 · q3-d10"), or null.
OPEN_PAIR = """(() => {
  const found = [...document.querySelectorAll("h3")].map(e => e.innerText.trim())
    .filter(t => / · /.test(t));
  return found.length ? found[0] : null;
})()"""
# From now on, note when the open pair changes and when a key goes down (page clock, ms).
OBSERVE = """(() => {
  const open = () => { OPEN_PAIR };
  window.__queue = {changes: [[performance.now(), open()]], keys: []};
  new MutationObserver(() => {
    const now = open(), seen = window.__queue.changes;
    if (now !== seen[seen.length - 1][1]) seen.push([performance.now(), now]);
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
  window.addEventListener("keydown", e => window.__queue.keys.push([performance.now(), e.key]),
                          true);
  return true;
})()""".replace("OPEN_PAIR", OPEN_PAIR.strip().removeprefix("(() => {").removesuffix("})()"))


def bottom(page: BrowserPage, text: str) -> int | None:
    value = page.evaluate(BOTTOM % json.dumps(text))
    return None if value is None else int(value)


def open_pair(page: BrowserPage) -> str | None:
    found = page.evaluate(OPEN_PAIR)
    return None if found is None else str(found)


def listening(page: BrowserPage) -> str | None:
    """The pair the queue's keys grade now, as its heading says it, or null: a key goes to the
    pair its listener was drawn with, which comes after the pair's own heading and text."""
    found = page.evaluate(
        "(() => { const h = window.__judgepoolQueueKeys;"
        " return h && h.pair ? h.pair.join(' · ') : null; })()"
    )
    return None if found is None else str(found)


def press_on(page: BrowserPage, key: str) -> None:
    """Press `key` once the queue listens for the pair on screen, as a person who has read it."""
    wait_for(lambda: ready(page) is not None, "the queue to listen")
    page.press(key)


def ready(page: BrowserPage) -> str | None:
    """The pair on screen once the queue listens for it (None: not yet)."""
    shown = open_pair(page)
    return shown if shown is not None and listening(page) == shown else None


def moved_on(page: BrowserPage, shown: str | None) -> bool:
    """Whether another pair than `shown` is on screen and listened for."""
    return ready(page) not in (None, shown)


def wait_for(check: Callable[[], bool], what: str, timeout: float = 40) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def human(store: Store) -> str:
    return export_labels(store, "chunk", "human").decode()


@contextmanager
def queue(write: Writer, browser: str) -> Iterator[tuple[Store, BrowserPage, str]]:
    """The Audit page open on its queue: q3-d10, q4-d10 and q2-d10 to grade, in that order."""
    store = build(Store(), write)
    sample(store, 3, seed=2)
    port = free_port()
    url = f"http://127.0.0.1:{port}/audit"
    with serve_dashboard(store.path, port), browser_page(browser, SIZE) as page:
        page.open(url)
        page.wait_until_drawn("12 of 15 pairs labelled")
        wait_for(lambda: ready(page) == "q3 · q3-d10", "the first pair, drawn to its end")
        yield store, page, url


@contextmanager
def held_write(store: Store, seconds: float) -> Iterator[None]:
    """Hold the database's write lock from this process for `seconds` (the dashboard's writes
    wait meanwhile, as they wait for a judge's)."""
    taken = threading.Event()

    def hold() -> None:
        with store.write():
            taken.set()
            time.sleep(seconds)

    holder = threading.Thread(target=hold)
    holder.start()
    taken.wait(10)
    try:
        yield
    finally:
        holder.join()


@pytest.mark.slow
def test_the_queue_graded_with_the_keyboard_fits_a_900_px_window(write: Writer) -> None:
    with queue(write, chromium()) as (store, page, _):
        assert "passage 10 about q3" in page.text()
        for what in ("0 · irrelevant", "3 · perfectly relevant", "Skip", "Undo", "Keys: 0-3"):
            found = bottom(page, what)
            assert found is not None and found < HEIGHT, (what, found)  # no scrolling
        press_on(page, "2")
        wait_for(lambda: "q3 0 q3-d10 2" in human(store), "the grade to be saved")
        # The listener is drawn last, after the key help: until then the page is still drawing.
        wait_for(lambda: ready(page) == "q4 · q4-d10", "the next pair, drawn to its end")
        assert "The judge had said 2." in page.text()
        shown = bottom(page, "Saved grade 2 (highly relevant) for q3 · q3-d10")
        assert shown is not None and shown < HEIGHT
        for what in ("3 · perfectly relevant", "Undo", "Keys: 0-3"):  # with the confirmation
            found = bottom(page, what)
            assert found is not None and found < HEIGHT, (what, found)
        time.sleep(6)  # a live refresh (every 5 s) keeps it
        assert "Saved grade 2 (highly relevant) for q3 · q3-d10" in page.text()
        press_on(page, "u")
        wait_for(lambda: "q3-d10" not in human(store), "the undo")
        wait_for(lambda: open_pair(page) == "q3 · q3-d10", "the undone pair to come back")
        press_on(page, "1")
        wait_for(lambda: "q3 0 q3-d10 1" in human(store), "the new grade")


@pytest.mark.slow
def test_a_key_pressed_before_the_next_pair_is_drawn_is_ignored_and_said(write: Writer) -> None:
    """The issue's case, made certain: the save of the first key waits for another process's
    write (as it does while a judge writes), so the second key, 250 ms later, is pressed while
    the graded pair is still on screen. It must not grade the next pair, nor regrade this one."""
    with queue(write, chromium()) as (store, page, _):
        with held_write(store, 2.0):
            press_on(page, "1")
            time.sleep(0.25)
            assert open_pair(page) == "q3 · q3-d10"  # the next pair is not drawn yet
            page.press("2")
        wait_for(lambda: open_pair(page) == "q4 · q4-d10", "the next pair")
        wait_for(lambda: "Ignored grade 2 for q3 · q3-d10" in page.text(), "the ignored key said")
        time.sleep(2)  # anything still on its way
        labels = [line for line in human(store).splitlines() if "-d10 " in line]
        assert labels == ["q3 0 q3-d10 1"]
        assert "it was already graded: the next pair was not on screen yet" in page.text()
        assert open_pair(page) == "q4 · q4-d10"


@pytest.mark.slow
def test_a_second_key_250_ms_after_the_first_grades_only_what_was_on_screen(
    write: Writer,
) -> None:
    """The same two keys at full speed: the second grades the next pair only if that pair was
    on screen when it went down, and is said to be ignored otherwise."""
    with queue(write, chromium()) as (store, page, _):
        assert page.evaluate(OBSERVE) is True
        press_on(page, "1")
        time.sleep(0.25)
        page.press("2")
        wait_for(lambda: "q3 0 q3-d10 1" in human(store), "the first grade")
        time.sleep(3)  # both keys answered
        seen = page.evaluate("window.__queue")
        downs = [at for at, key in seen["keys"] if key == "2"]
        assert len(downs) == 1, seen
        on_screen = [pair for at, pair in seen["changes"] if at <= downs[0]][-1]
        labels = [line for line in human(store).splitlines() if "-d10 " in line]
        what = (on_screen, labels, seen, page.text()[:600])  # said when an assertion fails
        # Pressed before the next pair was drawn: on the graded pair, or between the two (the
        # queue redraws, and for a moment no pair is on screen).
        if on_screen in ("q3 · q3-d10", None):
            assert labels == ["q3 0 q3-d10 1"], what
            assert "Ignored grade 2 for q3 · q3-d10" in page.text(), what
        else:  # drawn first: graded (or, pressed in the frame it appeared, ignored and said)
            assert on_screen == "q4 · q4-d10", what
            assert labels in (["q3 0 q3-d10 1", "q4 0 q4-d10 2"], ["q3 0 q3-d10 1"]), what
            if len(labels) == 1:
                assert "Ignored grade 2" in page.text(), what


@pytest.mark.slow
def test_a_skipped_pair_stays_skipped_after_a_reload(write: Writer) -> None:
    with queue(write, chromium()) as (store, page, url):
        press_on(page, "s")
        wait_for(lambda: open_pair(page) == "q4 · q4-d10", "the next pair")
        wait_for(lambda: "skip=" in str(page.evaluate("location.search")), "the link")
        assert "q3+q3-d10" in str(page.evaluate("location.search"))
        page.evaluate("window.__before = true")
        page.open(str(page.evaluate("location.href")))  # a reload: a new session
        wait_for(lambda: page.evaluate("window.__before") is None, "the reload")
        page.wait_until_drawn("12 of 15 pairs labelled")
        wait_for(lambda: open_pair(page) is not None, "the queue")
        assert open_pair(page) == "q4 · q4-d10"  # q3-d10 is still after the others
        press_on(page, "3")
        wait_for(lambda: "q4 0 q4-d10 3" in human(store), "the grade")
        wait_for(lambda: open_pair(page) == "q2 · q2-d10", "the pair after it")
        press_on(page, "3")
        wait_for(lambda: open_pair(page) == "q3 · q3-d10", "the skipped pair, last")
        assert url in str(page.evaluate("location.href"))


@pytest.mark.slow
def test_an_opened_pair_shows_its_override_form_and_confirmation_in_view(
    write: Writer,
) -> None:
    browser = chromium()
    store = build(Store(), write)
    port = free_port()
    with serve_dashboard(store.path, port), browser_page(browser, (1400, 1000)) as page:
        page.open(f"http://127.0.0.1:{port}/audit?qid=q2&doc_id=q2-d10")
        page.wait_until_drawn("Save override")
        form = bottom(page, "Save override")
        assert form is not None and form < 1000, form  # it was about 1,550 px below the fold
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
        assert shown is not None and shown < 1000, shown
        time.sleep(6)  # through a live refresh
        assert "it is now the effective label everywhere" in page.text()


@pytest.mark.slow
def test_the_queue_keeps_a_pace_of_20_pairs_a_minute(write: Writer) -> None:
    """Issue 24: 9.2 pairs a minute by keyboard, a key taking 4-8 s to reach the next pair. Here
    each key goes down as soon as the next pair is drawn and listening: the queue itself must
    keep 20 pairs a minute even on a loaded machine (3 s a pair). Its redraw on an idle machine
    (target 0.5 s) is measured by bench/bench_dashboard.py; this test is a floor, not the
    target."""
    store = build(Store(), write)
    sample(store, 6, seed=2)  # every query's d10: six pairs
    port = free_port()
    with serve_dashboard(store.path, port), browser_page(chromium(), SIZE) as page:
        page.open(f"http://127.0.0.1:{port}/audit")
        page.wait_until_drawn("24 of 30 pairs labelled")
        waits = []
        for n in range(6):
            wait_for(lambda: ready(page) is not None, "the queue to listen")
            shown = ready(page)
            down = time.monotonic()
            page.press(str(n % 4))  # at once: the pair is drawn and listening
            if n < 5:
                wait_for(partial(moved_on, page, shown), "the next pair", timeout=20)
            else:
                wait_for(lambda: "Every pair of the audit sample" in page.text(), "the end", 20)
            waits.append(time.monotonic() - down)
        graded = [line for line in human(store).splitlines() if "-d10 " in line]
        assert len(graded) == 6, graded
        waits.sort()
        median = (waits[2] + waits[3]) / 2
        print(f"key to next pair: median {median:.2f} s, slowest {waits[-1]:.2f} s")
        assert 60 / (sum(waits) / len(waits)) >= 20, waits
