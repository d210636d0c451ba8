"""The labelling queue's keyboard: keys 0-3, S and U, each press sent with the pair that was on
screen when it was pressed, so that a press can only ever grade that pair.

Streamlit's button shortcuts click whatever button holds the key when the press reaches the
server: pressing 1 and then 2 a quarter of a second later graded the next pair with 2 before it
was drawn (issue 22). Here a small component (inline JavaScript, no file and no request) listens
to the keys in the page and sends `{key, pair}`, `pair` being the one it was drawn with; the
queue (audit_queue.py) acts on a press only when that pair is still the one it shows, and says so
when it is not. Keys typed into a text field are the field's, not the queue's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

KEY = "queue_keys"
#: The keys the queue answers (lower case, as `KeyboardEvent.key` gives them).
KEYS = ("0", "1", "2", "3", "s", "u")

_JS = """
export default function (component) {
  const { data, setTriggerValue } = component;
  const keys = new Set(data.keys);
  const previous = window.__judgepoolQueueKeys;
  if (previous) window.removeEventListener("keydown", previous);
  const handler = (event) => {
    if (event.repeat || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) {
      return;
    }
    const key = String(event.key).toLowerCase();
    if (!keys.has(key)) return;
    event.preventDefault();
    setTriggerValue("press", { key: key, pair: data.pair });
  };
  handler.pair = data.pair;  // which pair the keys now grade (the browser tests wait for it)
  window.__judgepoolQueueKeys = handler;
  window.addEventListener("keydown", handler);
  return () => {
    window.removeEventListener("keydown", handler);
    if (window.__judgepoolQueueKeys === handler) delete window.__judgepoolQueueKeys;
  };
}
"""

_listener = st.components.v2.component("judgepool_queue_keys", js=_JS)


def listen(pair: tuple[str, str] | None, on_press: Callable[[], None]) -> None:
    """Listen to the queue's keys while `pair` is on screen (None: only U, nothing to grade);
    `on_press` runs before the queue redraws, and reads the press with `pressed()`."""
    keys = KEYS if pair is not None else ("u",)
    _listener(
        key=KEY,
        data={"pair": list(pair) if pair is not None else None, "keys": list(keys)},
        height=0,
        on_press_change=on_press,
    )


def pressed() -> tuple[str, tuple[str, str] | None] | None:
    """The press being handled: (key, the pair on screen when it was pressed), or None."""
    state: Any = st.session_state.get(KEY)
    press = state.get("press") if state is not None else None
    if not isinstance(press, dict) or str(press.get("key")) not in KEYS:
        return None
    pair = press.get("pair")
    shown = (str(pair[0]), str(pair[1])) if isinstance(pair, list) and len(pair) == 2 else None
    return str(press["key"]), shown
