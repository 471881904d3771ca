"""Context Lab: see contextual word embeddings change layer by layer.

Run with `make run` (or `streamlit run app.py`). The pages live in pages/; each draws
the shared sidebar itself (ui.frame), so every page also runs alone in tests. Each URL
path equals its file's stem: with a pages/ folder present, Streamlit's browser client
checks a requested path against the folder's file names first and shows "Page not
found" for any other name, even though st.navigation would route it.

The home page is the default page, served at `/`. A link to `/home` (its file's stem)
reaches a hidden page that switches to it, so that old or hand-typed link works too.
"""

import sys

import streamlit as st

from ui import route

route.import_serially("ui.charts")  # Plotly's figure classes, no pandas: 30 ms
from ui import charts  # noqa: E402

st.set_page_config(page_title="Context Lab", page_icon=":material/biotech:", layout="wide")
preload = None
# a session's first run on a cold server: its browser has no chart code yet, and the page's
# imports take seconds it can use (a later run of the session, or a warm server, sends none)
if "tensorflow" not in sys.modules and not st.session_state.get("_lab_preloaded"):
    st.session_state["_lab_preloaded"] = True
    # before pandas (0.6 s), so that the browser starts fetching Plotly's code that much
    # sooner; one session at a time, as an import: its table imports pandas, which Plotly
    # must never find half-built (ui.route)
    preload = route.serially(charts.preload)
# pandas whole before any other Plotly figure (ui.route); a fresh server's sessions take turns
route.import_serially("pandas", "ui.warmup", "ui.pages")
from ui import errors, memory, state, warmup  # noqa: E402
from ui.pages import PAGES  # noqa: E402
warmup.keep_kernel_cache()  # TensorFlow's kernels outlive a script run (Streamlit would clear them)
warmup.start()  # once per server: load and compile the models, in the background
memory.start()  # once per server: closed tabs' sessions swept out, their memory given back
pages = {p: st.Page(p.path, title=p.title, icon=p.icon, default=p.default,
                    url_path="index" if p.default else p.url_path)  # the default page lives at `/`
         for p in PAGES}
home = next(page for p, page in pages.items() if p.default)
to_home = st.Page(lambda: st.switch_page(home), title="Home", url_path=next(p.url_path for p in PAGES if p.default),
                  visibility="hidden")
state.rerun_after_reconnect()  # a tab whose session has gone gets its view back, and its clicks work
try:
    with errors.guard():  # a page that fails shows the app's message; the log keeps the traceback
        st.navigation([*pages.values(), to_home]).run()
finally:
    if preload is not None:
        preload.empty()  # the page has been drawn: the hidden box has done its work
    warmup.first_page_done()  # the warm-up goes on once the first page has been answered
