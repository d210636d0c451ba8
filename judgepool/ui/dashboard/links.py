"""The URL says what is on screen, so a view can be shared as a link.

The page is the URL's path (/runs, /compare, /audit, /export); the query string holds the
sidebar's level (always), judge, depth and k (when not the defaults), and the page's own choices
(Compare: baseline, candidate (repeated), measure, chart, query; Audit: qid and doc_id). On the
first run of a session the values of the link are taken into the widgets; after that, every run
writes the current choices back (only when they changed), so the address bar can be copied at
any moment. A value the database does not have (a run, a judge) is left out and said so, once,
on the page: a link never silently shows something else than what it names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

_PROBLEMS = "_link_problems"
_TAKEN = "_link_taken"
# Streamlit's own parameters: never ours to write or drop.
_STREAMLIT = ("embed", "embed_options")

Params = Mapping[str, Sequence[str]]


def first_time(scope: str) -> bool:
    """True on the first run of the session for `scope` (the sidebar, a page): when the link's
    values are to be taken."""
    taken = st.session_state.setdefault(_TAKEN, set())
    if scope in taken:
        return False
    taken.add(scope)
    return True


def linked(name: str) -> str | None:
    """The link's value of `name` (the last one when repeated), None when absent or empty."""
    value = st.query_params.get(name)
    return value if value else None


def linked_all(name: str) -> list[str]:
    """Every value of a repeated parameter (`candidate=A&candidate=B`)."""
    return [v for v in st.query_params.get_all(name) if v]


def left_out(name: str, value: str, why: str) -> None:
    """Say, on the page, that the link's `name=value` was not used and why."""
    problems: list[str] = st.session_state.setdefault(_PROBLEMS, [])
    text = f"The link's {name}={value!r} was left out: {why}."
    if text not in problems:
        problems.append(text)


def take_choice(name: str, key: str, options: Sequence[str], what: str) -> None:
    """Put the link's `name` into widget `key` if it is one of `options`; else say so."""
    value = linked(name)
    if value is None:
        return
    if value in options:
        st.session_state[key] = value
    else:
        left_out(name, value, f"this database has no such {what}")


def take_number(name: str, key: str, low: int, high: int) -> None:
    """Put the link's integer `name` into widget `key` if it is within [low, high]."""
    value = linked(name)
    if value is None:
        return
    if value.isdigit() and low <= int(value) <= high:
        st.session_state[key] = int(value)
    else:
        left_out(name, value, f"it is not a whole number from {low} to {high}")


def problems() -> list[str]:
    """The link values left out so far, each said once."""
    return list(st.session_state.get(_PROBLEMS) or [])


def dismiss() -> None:
    """The reader has seen the notice of left-out values."""
    st.session_state.pop(_PROBLEMS, None)


def share(view: Params, page: Params) -> None:
    """Make the URL's query string say the view (`View.link`) and the page's choices (written
    only when it says something else, so an unchanged page sends nothing)."""
    wanted = {name: list(values) for name, values in view.items() if values}
    wanted.update({name: list(values) for name, values in page.items() if values})
    current = {
        name: st.query_params.get_all(name) for name in st.query_params if name not in _STREAMLIT
    }
    if current != wanted:
        st.query_params.from_dict(wanted)
