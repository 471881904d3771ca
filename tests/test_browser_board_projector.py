"""The class board's projector in a real browser: at 1024x768 and 1280x720 in projector mode
the first screen holds the word, the join code and both maps with their legend; the QR code
folds to a corner once sentences arrive; two projectors, and a server started afresh on the
same board, draw the same map.

The boards are filled through the store (``lab.board.store.BoardStore`` on the app's own
database); the maps are read from the drawn Plotly figures (each dot's ``customdata`` is
its sentence's id).
"""

from __future__ import annotations

import pytest

from harness.served import free_port
from lab.board import links
from lab.board.store import BoardStore
from lab.figures.board import NOT_SAID
from tests.browser import serve_app, wait_idle
from tests.test_page_board import SENTENCES

pytestmark = pytest.mark.browser

MAPS = ("board_map_bert", "board_map_elmo")
# The links the board shows phones: an address of the room's network (not this machine's
# loopback, for which the page warns that phones cannot reach it).
PUBLIC_URL = "http://192.0.2.10:8501"


@pytest.fixture(scope="module")
def board_app(tmp_path_factory):
    """The app on a boards database of its own; yields its ``Server``, a ``BoardStore`` on the
    same database and the server's environment (to start another on the same boards)."""
    data = tmp_path_factory.mktemp("boards")
    env = {"LAB_DATA_DIR": str(data), "LAB_PUBLIC_URL": PUBLIC_URL}
    with serve_app(tmp_path_factory, env=env, port=free_port()) as srv:
        store = BoardStore(f"sqlite:///{data / 'boards.sqlite3'}")
        yield srv, store, env
        store.dispose()


def new_board(store, sentences=()):
    board, _ = store.create("bank", ["money", "river"], bert_source="embedded", elmo_source="embedded")
    entries = [add(store, board, i, text, sense) for i, (text, sense) in enumerate(sentences)]
    return board, entries


def add(store, board, i: int, text: str, sense: str | None):
    return store.submit(board.id, text, sense, browser=f"b{i}", token=f"t{board.id}-{i}").entry


def projector(browser, url: str, code: str, width: int, height: int):
    """A projector's tab of ``width`` x ``height`` on the board ``code``, in projector mode."""
    context = browser.new_context(viewport={"width": width, "height": height})
    pg = context.new_page()
    pg.set_default_timeout(180_000)
    pg.goto(links.projector_link(url, code))  # the link opens in projector mode
    return pg


_HOLD = """([keys, n]) => keys.every(key => {
  const el = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  return el && el.data && el.data.reduce((k, t) => k + (t.customdata ? t.customdata.length : 0), 0) === n;
})"""

_COORDS = """(key) => {
  const el = document.querySelector(`.st-key-${key} .js-plotly-plot`), out = {};
  for (const t of el.data) (t.customdata || []).forEach((id, i) => { out[id] = [t.x[i], t.y[i]]; });
  return out;
}"""


def wait_maps(pg, n: int) -> None:
    """Wait until both maps hold ``n`` dots and the page is idle."""
    pg.wait_for_function(_HOLD, arg=[list(MAPS), n], polling=100)
    wait_idle(pg, settle_ms=800)


def coords(pg) -> dict[str, dict[int, tuple[float, float]]]:
    """Each map's dots as drawn: sentence id -> (x, y)."""
    return {key: {int(i): tuple(xy) for i, xy in pg.evaluate(_COORDS, key).items()} for key in MAPS}


def assert_same_coords(one: dict, other: dict) -> None:
    for key in MAPS:
        assert sorted(one[key]) == sorted(other[key]), key
        for i in one[key]:
            assert one[key][i] == pytest.approx(other[key][i], abs=1e-6), (key, i)


def box(pg, selector: str) -> dict:
    found = pg.locator(selector).first
    found.wait_for(state="attached")
    return found.bounding_box()


def inside(b: dict, width: int, height: int) -> bool:
    return b is not None and b["x"] >= 0 and b["y"] >= 0 and b["x"] + b["width"] <= width and \
        b["y"] + b["height"] <= height


@pytest.mark.parametrize("width, height", [(1024, 768), (1280, 720)])
def test_the_first_screen_holds_the_word_the_code_and_both_maps(board_app, browser, width, height):
    srv, store, _ = board_app
    board, _ = new_board(store, SENTENCES)
    pg = projector(browser, srv.url, board.code, width, height)
    try:
        wait_maps(pg, len(SENTENCES))
        assert pg.evaluate("document.scrollingElement.scrollTop") == 0
        heading = pg.get_by_role("heading", name="Class board: “bank”")
        assert inside(heading.bounding_box(), width, height)
        code = pg.locator(".st-key-board_code code", has_text="-").first
        assert code.inner_text().replace("-", "").replace("–", "").strip() == board.code
        assert inside(code.bounding_box(), width, height)
        size = "el => parseFloat(getComputedStyle(el).fontSize)"
        assert float(code.evaluate(size)) > float(heading.evaluate(size))  # larger than the title: read from the back
        for key in MAPS:
            plot = box(pg, f".st-key-{key} .js-plotly-plot")
            legend = box(pg, f".st-key-{key} g.legend")
            assert inside(plot, width, height) and inside(legend, width, height), (key, plot, legend)
            names = pg.locator(f".st-key-{key} g.legend text.legendtext").all_text_contents()
            assert names == ["money", "river", NOT_SAID], key
        qr = box(pg, '[data-testid="stImage"] img')  # folded to the corner: the room has joined
        assert qr["width"] <= 120 and inside(qr, width, height)
        assert not pg.get_by_test_id("stSidebar").is_visible() or \
            pg.get_by_test_id("stSidebar").bounding_box()["width"] < 50  # closed: the maps have the room
        log = srv.log.read_text(errors="replace")
        assert "Traceback" not in log, log[-3000:]
    finally:
        pg.context.close()


def test_the_qr_code_folds_to_the_corner_when_the_first_sentence_arrives(board_app, browser):
    srv, store, _ = board_app
    board, _ = new_board(store)
    pg = projector(browser, srv.url, board.code, 1024, 768)
    try:
        pg.get_by_text("No sentences yet").wait_for()
        wait_idle(pg)
        assert box(pg, '[data-testid="stImage"] img')["width"] > 250  # large while the room joins
        add(store, board, 0, *SENTENCES[0])
        wait_maps(pg, 1)
        pg.wait_for_function("""() => { const img = document.querySelector('[data-testid="stImage"] img');
                                        return img && img.getBoundingClientRect().width <= 120; }""", polling=200)
        assert inside(box(pg, ".st-key-board_map_elmo g.legend"), 1024, 768)
    finally:
        pg.context.close()


def test_two_projectors_and_a_fresh_server_draw_the_same_map(board_app, browser, tmp_path_factory):
    """One projector watches the sentences arrive one by one; a second opens afterwards; a
    third on another server process of the same boards (what a restart or a failover gives:
    empty caches, the vectors read again in one batch, the map replayed): the same
    coordinates within 1e-6."""
    srv, store, env = board_app
    board, _ = new_board(store)
    watcher = projector(browser, srv.url, board.code, 1280, 720)
    try:
        watcher.get_by_text("No sentences yet").wait_for()
        for i, (text, sense) in enumerate(SENTENCES):
            add(store, board, i, text, sense)
            wait_maps(watcher, i + 1)
        watched = coords(watcher)
        second = projector(browser, srv.url, board.code, 1024, 768)
        wait_maps(second, len(SENTENCES))
        assert_same_coords(watched, coords(second))
        second.context.close()
        with serve_app(tmp_path_factory, env=env) as fresh:
            third = projector(browser, fresh.url, board.code, 1024, 768)
            wait_maps(third, len(SENTENCES))
            assert_same_coords(watched, coords(third))
            third.context.close()
            assert "Traceback" not in fresh.log.read_text(errors="replace")
    finally:
        watcher.context.close()
