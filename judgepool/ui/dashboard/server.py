"""The dashboard's web server: Streamlit's own (an `st.App` served by `streamlit run`), with the
page that loads the dashboard made to ask nothing of any other address, and its figures warmed
up before the first visitor comes.

Two things the stock server does that a person behind a firewall (or reading the browser's
console) sees, both fixed here without touching Streamlit:

- Streamlit's web page, opened at a page's own URL (/runs, /compare ...), first looks for its
  server under that path (/runs/_stcore/health, /runs/_stcore/host-config: two 404s and two
  console errors on every load, streamlit/streamlit#7074) before trying the root. The page's
  HTML is served here with `window.__streamlit.BACKEND_BASE_URL` set to the server's root, so
  the web page asks the right address first and only.
- A `:material/...:` page icon is fetched from fonts.gstatic.com: app.py uses an emoji, which
  the web page draws itself.

The warm-up (`warm_up`) runs in the background once the server listens: it imports what the
pages import and computes the Runs page's figures into the same cache the pages read, so the
first visitor does not wait for either (a page still computes what is not cached yet).
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import BaseRoute

APP = Path(__file__).resolve().parent.parent / "app.py"
#: The URL paths of the dashboard's pages (app.py's PAGES, the hidden start page, the bare URL).
PAGE_PATHS = ("/", "/start", "/runs", "/compare", "/audit", "/export")
_MARK = "<head>"


def _base_path() -> str:
    """Streamlit's server.baseUrlPath as a path: '' or '/prefix'."""
    from streamlit import config

    base = str(config.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}" if base else ""


def page_html(index: str, base: str) -> str:
    """Streamlit's index.html with the server's root given to the web page before it starts
    (its module script runs after this inline one, and reads the setting once)."""
    script = (
        "<script>window.__streamlit = Object.assign(window.__streamlit || {}, "
        f"{{BACKEND_BASE_URL: window.location.origin + {_js_string(base + '/')}}});"
        "</script>"
    )
    if _MARK not in index:
        raise RuntimeError("Streamlit's index.html has no <head>: the dashboard cannot load")
    return index.replace(_MARK, _MARK + script, 1)


def _js_string(text: str) -> str:
    """`text` as a JavaScript string literal that cannot end the <script> it is in."""
    return json.dumps(text).replace("<", "\\u003c")


@cache
def _index() -> str:
    import streamlit

    found = Path(streamlit.__file__).parent / "static" / "index.html"
    return page_html(found.read_text(encoding="utf-8"), _base_path())


async def _page(request: Request) -> Response:
    from starlette.responses import HTMLResponse

    return HTMLResponse(_index(), headers={"Cache-Control": "no-cache"})


def routes() -> Sequence[BaseRoute]:
    """The dashboard's page URLs, answered with the page HTML (page_html)."""
    from starlette.routing import Route

    base = _base_path()
    return [Route(f"{base}{path}" if path != "/" else f"{base}/", _page) for path in PAGE_PATHS]


def _warm() -> None:
    """Import the pages' modules and fill the Runs page's cached figures (see the module
    docstring); any failure is left for the page to say when it is opened."""
    import importlib

    try:
        from judgepool.defaults import DEPTH, K
        from judgepool.ui.dashboard import data
        from judgepool.ui.dashboard.view import database

        for name in ("runs", "compare", "audit", "export"):
            importlib.import_module(f"judgepool.ui.dashboard.{name}")
        db = database()
        found = data.db_state(db)
        if found is None:
            return
        version = found[0]
        level = data.default_level(db, version)
        data.evaluation(db, version, level, None, K)
        data.pool(db, version, level, None, DEPTH)
        data.run_names(db, version)
    except Exception:  # a page opened later reads again, and says what failed
        return


@asynccontextmanager
async def warm_up(_app: Any) -> AsyncIterator[None]:
    """The server's lifespan: start the warm-up beside it, never delaying it."""
    threading.Thread(target=_warm, name="judgepool-warm-up", daemon=True).start()
    yield
