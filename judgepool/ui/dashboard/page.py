"""One page of the dashboard: its title, its body refreshed in a fragment, the banner that says a
judge is writing, the notice of link values left out, and the URL kept in step with the view."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from judgepool.ui.dashboard import links, live
from judgepool.ui.dashboard.view import View, current, md

Link = Callable[[], links.Params]


def render_page(title: str, body: Callable[[View], None], link: Link | None = None) -> None:
    """Title a page and draw `body` in a fragment that reruns every `run_every` seconds, so
    figures follow a backfill that writes from another process. Above the body: the "labels
    being written" banner (from the body's own read of the database); after it, the URL is
    written with the sidebar's choices and the page's (`link`)."""
    view = current()
    st.title(title)

    @st.fragment(run_every=view.run_every)
    def refreshed() -> None:
        now = current()
        top = st.container()  # filled once the body has read the database and the link
        body(now)
        last = st.session_state.get("_last_version")
        with top:
            live.writing_banner(now, last[1] if last and last[0] == now.db else None)
            left_out()
        links.share(now.link, link() if link is not None else {})

    refreshed()


def left_out() -> None:
    """The link values that were left out, until the reader dismisses them."""
    said = links.problems()
    if said:
        st.warning(md(" ".join(said)))
        st.button("Dismiss", key="link_problems_dismiss", on_click=links.dismiss)
