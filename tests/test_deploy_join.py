"""The students' join page through the shipped nginx site with its sub-path enabled: an
app server under ``/lab/`` (``server.baseUrlPath``) behind ``deploy/nginx/context-lab.conf``
with the site's ``/lab/`` locations in place of the root ones, as its comment says. A phone
opens the join link (``LAB_PUBLIC_URL`` ends in ``/lab``), its script and stylesheet load
from under the sub-path, and its sentence is stored; the plain form (no script) posts
through nginx too.

Without nginx these tests skip, except where LAB_REQUIRE_NGINX=1 (CI), where that is a
failure.
"""

from __future__ import annotations

import re
import shutil
import time
import urllib.parse
import urllib.request

import pytest

from harness.served import Server, free_port
from deploy.nginx import SITE, Nginx, main_config, nginx_missing, site_config
from lab.board import links
from lab.board.store import BoardStore
from tests.test_browser_board import MONEY, join, maps_hold, submit
from tests import test_deploy
from tests.test_deploy import _require, _run_dir, get, upstreams
from ui.cookies import COOKIE

SUB_PATH = "lab"
# test_deploy's two servers on PostgreSQL behind the site, and their tabs (fixtures)
room, tab = test_deploy.room, test_deploy.tab


def sub_path_site() -> str:
    """The shipped site with its commented ``/lab/`` locations in use and its root ones
    out, as the site's comment tells an operator to do."""
    text = SITE.read_text()
    root = re.search(r"(?ms)^    location / \{\n.*?^    location /_stcore/stream \{\n.*?^    \}\n", text)
    assert root, "the site's root locations are not where this test looks for them"
    text = text[:root.start()] + text[root.end():]
    commented = re.search(r"(?m)^    # location /lab/ \{\n(?:^    #.*\n)+", text)
    assert commented, "the site's sub-path locations are not where this test looks for them"
    enabled = re.sub(r"(?m)^    # ?", "    ", commented.group())
    return text[:commented.start()] + enabled + text[commented.end():]


class SubPathNginx(Nginx):
    def write_config(self):
        (self.run_dir / "temp").mkdir(parents=True, exist_ok=True)
        site = site_config(self.upstreams, self.port, self.host, self.tls, log_dir=self.run_dir,
                           site=sub_path_site())
        path = self.run_dir / "nginx.conf"
        path.write_text(main_config(site, self.run_dir))
        return path


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """An app server under /lab/ behind nginx; yields (nginx's base URL with the sub-path,
    a ``BoardStore`` on the server's database)."""
    _require(nginx_missing(), "LAB_REQUIRE_NGINX")
    run_dir = _run_dir()
    port = free_port()
    data = tmp_path_factory.mktemp("boards")
    base = f"http://127.0.0.1:{port}/{SUB_PATH}"
    server = Server(env={"LAB_WARMUP": "0", "LAB_DATA_DIR": str(data), "LAB_PUBLIC_URL": base,
                         "STREAMLIT_SERVER_BASE_URL_PATH": SUB_PATH},
                    log=tmp_path_factory.mktemp("server") / "server.log").start(wait=False)
    nginx = SubPathNginx([f"127.0.0.1:{server.port}"], port, run_dir)
    store = None
    try:
        deadline = time.monotonic() + 120
        while get_status(f"{server.url}/{SUB_PATH}/_stcore/health") != 200:
            assert server.proc.poll() is None and time.monotonic() < deadline, server.log.read_text()[-3000:]
            time.sleep(0.2)
        nginx.start()
        store = BoardStore(f"sqlite:///{data / 'boards.sqlite3'}")
        yield base, store, server
    finally:
        if store is not None:
            store.dispose()
        nginx.stop()
        server.stop()
        shutil.rmtree(run_dir, ignore_errors=True)


def get_status(url: str) -> int | None:
    try:
        return get(url)[0]
    except OSError:
        return None


def test_the_sites_sub_path_serves_the_join_page(lab):
    base, store, _ = lab
    board, _ = store.create("bank", ["money", "river"], bert_source="embedded", elmo_source="embedded")
    status, body, headers = get(links.join_link(base, board.code), Accept="text/html")
    assert status == 200 and "Write a sentence with “bank”" in body
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert headers["Set-Cookie"].startswith(f"{COOKIE}=")
    script = re.search(r'<script src="([^"]+)"', body)[1]
    assert script.startswith("join/")  # relative: under /lab/ through nginx
    assert get(f"{base}/{script}")[0] == 200
    # the plain form (no script) posts through nginx to the route under the sub-path
    cookie = headers["Set-Cookie"].split(";")[0]
    fields = dict(re.findall(r'name="(code|csrf|token)" value="([^"]*)"', body))
    request = urllib.request.Request(f"{base}/join", data=urllib.parse.urlencode(
        fields | {"text": "The bank by the river.", "sense": "river"}).encode(),
        headers={"Cookie": cookie, "Accept": "text/html"}, method="POST")
    with urllib.request.urlopen(request, timeout=20) as r:
        answered = r.read().decode()
    assert "Accepted: your sentence is number 1 on the board." in answered
    assert [(e.text, e.sense) for e in store.entries(board.id)] == [("The bank by the river.", "river")]


@pytest.mark.browser
def test_a_phone_joins_through_the_sub_path(lab, browser):
    base, store, server = lab
    board, _ = store.create("bank", ["money", "river"], bert_source="embedded", elmo_source="embedded")
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    try:
        pg = context.new_page()
        errors = []
        pg.on("pageerror", lambda exc: errors.append(str(exc)))
        pg.goto(f"{base}/join")  # the code step first, as a student typing the address does
        pg.get_by_label("Board code").fill(board.code.lower())
        pg.get_by_role("button", name="Join").tap()
        pg.get_by_label("Your sentence").fill("She paid the cheque into the bank.")
        assert pg.url.startswith(f"{base}/join?code=")
        assert pg.locator("#count").inner_text().startswith("34 / ")  # the script loaded through nginx
        pg.locator("#join-form label.sense").get_by_text("money", exact=True).tap()
        pg.locator("#join-form button[type=submit]").tap()
        pg.locator("#answer").filter(has_text="Accepted").wait_for()
        assert [(e.text, e.sense) for e in store.entries(board.id)] == [("She paid the cheque into the bank.", "money")]
        see = pg.get_by_role("link", name="See the board")
        assert urllib.parse.urljoin(pg.url, see.get_attribute("href")).startswith(f"{base}/board?board=")
        assert errors == []
    finally:
        context.close()
    assert "Traceback" not in server.log.read_text(errors="replace")


@pytest.mark.browser
def test_a_student_posts_to_one_server_and_the_projector_on_the_other_shows_it(room, tab, postgres_url):
    """Two servers on PostgreSQL behind the shipped site (root locations): a student's
    page and post go to the server its cookie picks (nginx's access log says which), and
    the sentence reaches a projector served by the other. The student's page opens no
    websocket: its page load and its post are its only requests."""
    store = BoardStore(postgres_url)
    try:
        board, _ = store.create("bank", ["money", "river"], bert_source="embedded", elmo_source="embedded")
        cookies = room.cookies_by_server()
        one, two = room.upstreams
        projector = tab(cookies[two])
        projector.goto(links.projector_link(room.nginx.url, board.code))
        projector.get_by_text("No sentences yet").wait_for()
        before = len(room.log_lines())
        student = tab(cookies[one])
        join(student, links.join_link(room.nginx.url, board.code))
        submit(student, MONEY, sense="money")
        [entry] = store.entries(board.id)
        lines = [line for line in room.wait_lines(before, 4) if '"POST /join ' in line or '"GET /join' in line]
        assert any('"POST /join ' in line for line in lines), lines
        assert set(upstreams(lines)) == {one}, lines  # the student's page, script, style and post
        assert not any("_stcore/stream" in line and upstreams([line]) == [one] for line in room.log_lines(before))
        maps_hold(projector, [entry.id], time.monotonic(), 90)  # the first sentence: models load, no time asked
        for server in room.servers:
            assert "Traceback" not in server.log.read_text(errors="replace")
    finally:
        store.dispose()
