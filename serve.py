"""The server: Context Lab's app (app.py) as an ASGI app, `streamlit run serve.py`.

Streamlit runs app.py for every session as it would under `streamlit run app.py`; this
entry adds what only the server can:

- the app's own message for an exception no page caught, widget callbacks' included
  (``ui.errors.on_script_error``);
- the anonymous cookie that tells the class board's students' browsers apart
  (``ui.cookies``);
- the purge of expired class boards, at start and every few minutes while it runs
  (``lab.board.store.start_purging``);
- the start-up warm-up, begun at launch rather than at the first visit, so that a server
  behind a proxy is warm before its first tab (``ui.server.warmup``);
- ``/_lab/ready``, which answers 200 "ready" once the server is warm (models loaded, the
  common BERT lengths compiled) and 503 with "starting" or "answering" until then. Under
  a sub-path (``server.baseUrlPath``) it answers there too: Streamlit mounts routes given
  to ``st.App`` at the root, and answers any other path under the sub-path with the
  app's page, 200, which a proxy's check would read as "ready".
  ``/_stcore/health`` stays Streamlit's: it says the server answers, not that it is warm.
"""

import contextlib

import streamlit as st
from streamlit import config
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from lab.board.store import start_purging
from ui.errors import on_script_error
from ui.server import join, warmup
from ui.cookies import BrowserCookie
from ui.server import teach

READY_PATH = "/_lab/ready"


async def ready(request):
    state = warmup.status()
    return PlainTextResponse(state, status_code=200 if state == "ready" else 503,
                             headers={"Cache-Control": "no-store"})


def mounted(path: str) -> list[str]:
    """``path``, and the same under the server's sub-path where it has one: Streamlit
    mounts the routes given to ``st.App`` at the root only."""
    base = (config.get_option("server.baseUrlPath") or "").strip("/")
    return [path] + ([f"/{base}{path}"] if base else [])


def ready_paths() -> list[str]:
    """``READY_PATH``, and the same under the server's sub-path where it has one."""
    return mounted(READY_PATH)


routes = [Route(path, ready, methods=["GET", "HEAD"]) for path in ready_paths()]
routes += join.routes(mounted)  # the students' page, a plain form (ui.server.join)
routes += teach.routes(mounted)  # /board/teach: the teacher link keeps the key in the browser


@contextlib.asynccontextmanager
async def lifespan(app):
    warmup.start()
    purging = start_purging()  # expired class boards go while the server runs, opened or not
    yield
    purging.set()


app = st.App("app.py", on_script_error=on_script_error, middleware=[Middleware(BrowserCookie)],
             routes=routes, lifespan=lifespan)
