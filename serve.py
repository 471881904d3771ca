"""The server: Context Lab's app (app.py) as an ASGI app, `streamlit run serve.py`.

Streamlit runs app.py for every session as it would under `streamlit run app.py`; this
entry adds what only the server can: the app's own message for an exception no page
caught, widget callbacks' included (``ui.errors.on_script_error``), and the anonymous
cookie that tells the class board's students' browsers apart (``ui.server.cookies``).
"""

import streamlit as st
from starlette.middleware import Middleware

from ui.errors import on_script_error
from ui.server.cookies import BrowserCookie

app = st.App("app.py", on_script_error=on_script_error, middleware=[Middleware(BrowserCookie)])
