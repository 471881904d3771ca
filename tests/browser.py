"""Real-browser fixtures: the app served by `streamlit run`, driven by Playwright in Chromium.

Debian's Chromium at /usr/bin/chromium is used (Playwright cannot download browsers on
offline machines). Without it these tests skip with the reason, except where
LAB_REQUIRE_BROWSER=1 (CI), where a missing browser is a failure.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from harness.chromium import CHROMIUM, CHROMIUM_ARGS, COUNT_HEATMAP_DRAWS
from harness.served import Server

ROOT = Path(__file__).resolve().parents[1]


def _require_browser() -> None:
    if CHROMIUM.exists():
        return
    message = f"Chromium not found at {CHROMIUM}; install Debian's chromium package to run browser tests"
    if os.environ.get("LAB_REQUIRE_BROWSER") == "1":
        pytest.fail(message)
    pytest.skip(message)


@contextlib.contextmanager
def serve_app(tmp_path_factory, script: str = "", env: dict | None = None, port: int = 0):
    """Start the app (serve.py, or another ``script``) with `streamlit run` on ``port`` (a
    free one when 0) (``harness.served.Server``), ``env`` added to its environment; yield the
    ``Server`` (``.url`` its base URL, ``.log`` its output)."""
    _require_browser()
    # the ELMo vs BERT page reads a small reference corpus into a fresh cache: its first
    # computation takes seconds, not the minutes of the shipped corpus
    srv = Server(env={"LAB_REFERENCE_CORPUS": str(ROOT / "tests" / "fixtures" / "small_corpus.txt"),
                      "LAB_CACHE_DIR": str(tmp_path_factory.mktemp("reference_cache"))} | (env or {}),
                 log=tmp_path_factory.mktemp("streamlit") / "server.log", script=script, port=port)
    try:
        try:
            srv.start()
        except RuntimeError as exc:  # exited, or no health answer within 120 s: the log's tail says why
            pytest.fail(f"streamlit did not start: {exc}")
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="session")
def served_app(tmp_path_factory):
    """The app, started once for all browser tests: its ``harness.served.Server``."""
    with serve_app(tmp_path_factory) as srv:
        yield srv


@pytest.fixture(scope="session")
def app_server(served_app):
    """The base URL of the app that all browser tests share."""
    return served_app.url


@pytest.fixture(scope="session")
def browser():
    _require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh 1280x900 page (own context: own cookies and Streamlit session)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.set_default_timeout(120_000)
    yield pg
    context.close()




def maps_and_draws_for_a_new_sentence(pg, url: str, shown: str, sentence: str,
                                      then: str | None = None) -> tuple[int, int]:
    """Open ``url`` (counting heatmap drawings), wait for ``shown``, type ``sentence`` as
    sentence A and wait for ``then`` (``shown`` when omitted): the maps on the page, and how
    many drawings the new sentence made (a second drawing came 0.1-0.3 s after the first, so
    it waits 1.5 s more)."""
    pg.add_init_script(COUNT_HEATMAP_DRAWS)
    pg.goto(url)
    pg.wait_for_selector(shown)
    wait_idle(pg)
    # on a server that has just started, the page's text can come before Plotly's code has
    # drawn the maps: wait until there are maps and no drawing has come for a second
    pg.wait_for_selector('[data-testid="stPlotlyChart"] g.heatmaplayer')
    before, drawn = None, pg.evaluate("window.__heatmapDraws")
    while drawn != before:
        pg.wait_for_timeout(1000)
        before, drawn = drawn, pg.evaluate("window.__heatmapDraws")
    maps = pg.locator('[data-testid="stPlotlyChart"] g.heatmaplayer').count()
    pg.evaluate("window.__heatmapDraws = 0")
    type_sentence(pg, "Sentence A", sentence)
    pg.wait_for_selector(then or shown)
    pg.wait_for_timeout(1500)
    return maps, pg.evaluate("window.__heatmapDraws")


def wait_idle(pg, settle_ms: int = 500) -> None:
    """Wait until Streamlit has finished running the script (no 'Running...' status)."""
    pg.wait_for_timeout(settle_ms)
    pg.wait_for_selector('[data-testid="stStatusWidget"]', state="detached", timeout=120_000)
    pg.wait_for_timeout(settle_ms)


def click_pill(pg, group: str, text: str) -> None:
    """Click the pill ``text`` in the st.pills group labelled ``group`` (a radio group)."""
    pg.get_by_role("radiogroup", name=group).get_by_role("radio", name=text, exact=True).click()
    wait_idle(pg)


def type_sentence(pg, label: str, text: str) -> None:
    """Replace a sidebar sentence and submit it (Ctrl+Enter), as a person does."""
    box = pg.get_by_role("textbox", name=label)
    box.fill(text)
    box.press("Control+Enter")
    wait_idle(pg)


def click_cell(page, chart_title: str, row: int, col: int, cols: int) -> None:
    """Click one cell of a heatmap drawn by figures.heatmap (its click markers, row-major)."""
    chart = page.locator('[data-testid="stPlotlyChart"]', has_text=chart_title)
    point = chart.locator("g.trace.scatter path.point").nth(row * cols + col)
    point.scroll_into_view_if_needed()
    box = point.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    wait_idle(page)


# Where the outline drawn over a chart (ui.charts.outline, a ::after box on the chart's
# keyed element) lies, in page pixels: the start of the functions below, which also find
# the box it should lie on (as ``target``) from the drawn heatmap.
_OUTLINE = """const box = el.getBoundingClientRect(), line = getComputedStyle(el, '::after');
  const gd = el.querySelector('.js-plotly-plot'),
    cells = el.querySelector('g.heatmaplayer image').getBoundingClientRect();
  const outline = {top: box.top + parseFloat(line.top), height: parseFloat(line.height),
                   left: box.left + parseFloat(line.left), right: box.right - parseFloat(line.right)};"""

# One cell of a heatmap (a row or column given by index or by its tick label; no column:
# the whole row).
_OUTLINE_AND_CELL = """(el, [row, col]) => {
  """ + _OUTLINE + """
  const ys = gd.layout.yaxis.ticktext, xs = gd.layout.xaxis.ticktext;
  const r = typeof row === 'string' ? ys.indexOf(row) : row;
  const c = col === null ? null : typeof col === 'string' ? xs.indexOf(col) : col;
  const h = cells.height / ys.length, w = cells.width / xs.length;
  return {outline, color: line.borderTopColor,
          target: {top: cells.top + r * h, height: h, left: c === null ? cells.left : cells.left + c * w,
                   right: c === null ? cells.right : cells.left + (c + 1) * w}};
}"""


def _outline_on(pg, chart_key: str, script: str, where: list) -> dict:
    """Run ``script`` on the chart shown under ``chart_key`` and check that its outline lies
    on the box it found, within 1.5 px; returns what was measured."""
    found = pg.locator(f".st-key-{chart_key}").evaluate(script, where)
    for side in ("top", "height", "left", "right"):
        assert found["outline"][side] == pytest.approx(found["target"][side], abs=1.5), side
    return found


def outline_over(pg, chart_key: str, row: int | str, col: int | str | None = None) -> dict:
    """Check that the outline over the chart shown under ``chart_key`` lies on cell (row,
    col) of its heatmap (the whole row when ``col`` is None), within 1.5 px; returns what
    was measured."""
    return _outline_on(pg, chart_key, _OUTLINE_AND_CELL, [row, col])


# One tile of a model view (from the drawn grid and its tiling: the tiles' size, as
# figures.model_view_tiling reads it, up to the first blank row and column).
_OUTLINE_AND_TILE = """(el, [layer, head]) => {
  """ + _OUTLINE + """
  const z = gd._fullData[0].z, rows = z.length, cols = z[0].length, blank = v => v == null || Number.isNaN(v);
  const firstBlank = (n, isBlank) => { for (let i = 0; i < n; i++) if (isBlank(i)) return i; return n; };
  const m = {gap: 1, queries: firstBlank(rows, r => Array.from(z[r]).every(blank)),
             keys: firstBlank(cols, c => z.every(row => blank(row[c])))};
  const h = cells.height / rows, w = cells.width / cols;
  const top = cells.top + layer * (m.queries + m.gap) * h, left = cells.left + head * (m.keys + m.gap) * w;
  return {outline, target: {top, height: m.queries * h, left, right: left + m.keys * w}};
}"""


def tile_outlined(pg, chart_key: str, layer: int, head: int) -> dict:
    """Check that the outline over the model view shown under ``chart_key`` lies on the
    tile of ``layer`` and ``head`` (0-based), within 1.5 px; returns the tile's box."""
    return _outline_on(pg, chart_key, _OUTLINE_AND_TILE, [layer, head])["target"]


def click_tile(pg, chart_key: str, layer: int, head: int, at: tuple[float, float] = (0.5, 0.5)) -> None:
    """Click the tile of ``layer`` and ``head`` (0-based) of the model view shown under
    ``chart_key``, at ``at`` (fractions of its width and height)."""
    chart = pg.locator(f".st-key-{chart_key}")
    chart.scroll_into_view_if_needed()
    tile = chart.evaluate(_OUTLINE_AND_TILE, [layer, head])["target"]
    pg.mouse.click(tile["left"] + at[0] * (tile["right"] - tile["left"]), tile["top"] + at[1] * tile["height"])
    wait_idle(pg)


def _record(pg, event: str, kind) -> list[str]:
    """``kind(payload)`` of every binary frame of ``event`` ("framesent", "framereceived") on
    the page's websockets from now on, in order."""
    got: list[str] = []

    def on_frame(payload) -> None:
        if isinstance(payload, (bytes, bytearray)):
            got.append(kind(bytes(payload)))

    pg.on("websocket", lambda ws: ws.on(event, on_frame))
    return got


def record_requests(pg) -> list[str]:
    """Record what the page asks of the server from now on: the kind of each message it
    sends over Streamlit's websocket (``BackMsg``: "rerun_script", "backend_operation_request"
    for a deferred download ...), in order. Call before ``goto``."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    return _record(pg, "framesent", lambda payload: BackMsg.FromString(payload).WhichOneof("type"))


def record_answers(pg) -> list[str]:
    """Record what the server sends the page from now on: the kind of each message
    (``ForwardMsg``: "new_session", "delta" ...), in order; a run's end as
    "script_finished:" and its status ("FINISHED_SUCCESSFULLY", "FINISHED_EARLY_FOR_RERUN" ...)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    def kind(payload: bytes) -> str:
        msg = ForwardMsg.FromString(payload)
        name = msg.WhichOneof("type")
        if name == "script_finished":
            return f"{name}:{ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished)}"
        return name

    return _record(pg, "framereceived", kind)


def download(page, click, sent: list[str] | None = None) -> tuple[str, bytes]:
    """The file a click downloads; with ``sent`` (``record_requests``), also checks that the
    click ran no script: a rerun is wasted work, and its sweep of unreferenced files can
    delete the built file before the browser fetches it."""
    ran = sent.count("rerun_script") if sent is not None else 0
    with page.expect_download(timeout=60_000) as info:
        click()
    d = info.value
    data = open(d.path(), "rb").read()
    if sent is not None:
        assert sent.count("rerun_script") == ran
    return d.suggested_filename, data


@pytest.fixture
def person(browser):
    """``person(cookies=())``: a new tab in a browser of its own (own cookies, own sessions),
    holding ``cookies`` (Playwright's cookie dicts) from the start; every one is closed after
    the test."""
    made = []

    def new_tab(cookies=()):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        if cookies:
            context.add_cookies(list(cookies))
        made.append(context)
        tab = context.new_page()
        tab.set_default_timeout(60_000)
        return tab

    yield new_tab
    for context in made:
        context.close()
