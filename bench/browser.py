"""What a person waits for, in Chromium: a click, a new sentence, the first chart after start.

    python bench/browser.py [--clicks 15] [--sentences 5] [--links 5] [--long 3 [--words 400]] [--links-only]
                            [--root CHECKOUT]
                            [--skip-cold | --cold-only] [--cold-page bert|elmo|...]

Serves the app on a free loopback port and drives Debian's Chromium with Playwright
(as tests/browser.py does). Every time is taken on what is drawn, inside the page: from
the person's input (the pointerdown of a click, the key press of Ctrl+Enter) to the first
DOM change after which the text and path geometry of the watched
``[data-testid="stPlotlyChart"]`` elements differ from before (a MutationObserver checks
after every change). Playwright's own round trips are not counted, and neither is the
status widget (a fragment rerun often never shows it).

1. Cold start: from launching the server to the BERT page's per-layer chart drawn (the
   browser asks for ``/bert`` as soon as the server answers its health check; with
   ``--cold-page elmo``, the ELMo page's; with ``--cold-page compare``, the ELMo vs BERT
   page's curves and then its last chart, the sense test), twice: a
   first launch with nothing stored, then a relaunch that finds what its first launch
   stored (the runs, ``lab.stored``, and the reference corpus's baselines and neighbour
   index, ``lab.reference``, in a cache folder of the benchmark's own), as a classroom server
   started again the next day does; and, where the checkout has ``python -m lab prepare``,
   a first launch after it (as ``make run`` does once after its set-up: the command's own
   time is printed apart). Every later figure comes from the last server launched, which
   computes every new sentence (the store holds only the default views).
2. After the start-up warm-up (its end in the server's log, then its CPU quiet): on the
   BERT, ELMo and attention pages, click a word pill (``--clicks`` times, a different word each time)
   until the chart that follows the word has changed: p50 / p95 / max. ``--pages`` may
   also name ``compare`` (ELMo vs BERT), where the click is timed until every chart of the
   page shows its final drawing.
3. A new sentence A (typed, Ctrl+Enter; ``--sentences`` times, each new) until the
   page's charts show their final drawing: p50 / p95 / max.
4. A shared link opened in a new tab (``--links`` times a page, each a new session, with
   sentences no one used yet, in a browser that has opened the app once): from the
   navigation's start to every chart *settled*: the last change inside any chart, timed at that change, once half a
   second has passed with no further change and the page is idle: p50 / p95 / max.
5. A long sentence A (``--words`` words, 400 by default; ``--long`` times a page, each new)
   typed (Ctrl+Enter) until every chart of the page shows its final drawing, timed as 3.
   On the ELMo pages the models read the first 150 words (``lab.tokenize.ELMO_MAX_WORDS``)
   and the page says so; BERT reads the first 510 pieces.

With ``--against OTHER`` (another checkout, e.g. a worktree of main) it times no cold start:
it serves both checkouts at once and, in one Chromium, times 2, 3 and 4 on each in turns,
``--rounds`` times (the order of the two swapped every round), and prints each checkout's
figures over all rounds and its p50 in each round. The 2-core machines here drift: one
commit's click p50 moved from 206 to 321 ms within 15 minutes (bench/HISTORY.md), so a
change is measured this way, not against an earlier run.

Prints figures; asserts nothing.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.served import Server, new_sentences
from bench.session import parser
from harness.chromium import CHROMIUM, CHROMIUM_ARGS

CHARTS = '[data-testid="stPlotlyChart"]'
# page -> (the pills clicked, text in the title of the chart that follows the clicked word)
PAGES = {
    "bert": ("Word in sentence A", "Cosine similarity at every layer"),
    "elmo": ("Word in sentence A", "at each layer"),
    "attention": ("Query token", "head by head"),
    "compare": ("Word in sentence A", "at every layer of both models"),  # ELMo vs BERT: not by default
}
# A cold start's last chart, where it comes well after the first: the ELMo vs BERT page's
# sense test, below its neighbours (both read the reference corpus)
LAST = {"compare": "Same or different sense"}
# The charts a click is timed on, where not only the one named above: on the ELMo vs BERT
# page the word in A also sets the self-similarity chart and the sense-pair strip below it
WATCHED = {"compare": None}
# What is drawn: every text and every path of a chart, as one string.
SIGNATURE = """el => el.textContent + '|' + Array.from(el.querySelectorAll('path'))
    .map(p => p.getAttribute('d') || '').join(';')"""
# Timed inside the page, so that Playwright's own round trips are not counted: from the
# person's input (pointerdown, or the key press) to the first moment the watched charts
# show what they finally show (a MutationObserver records each drawn state; Plotly draws
# in steps, so a state in between, say the axes without the curve, does not count).
ARM = """([title, key]) => {
  const sig = """ + SIGNATURE + """;
  const hash = (text) => {
    let h = 0;
    for (let i = 0; i < text.length; i++) h = (h * 31 + text.charCodeAt(i)) | 0;
    return h + ':' + text.length;
  };
  const watched = () => Array.from(document.querySelectorAll('[data-testid="stPlotlyChart"]'))
    .filter(el => title === null || el.textContent.includes(title)).slice(0, title === null ? undefined : 1);
  const state = () => watched().map(el => hash(sig(el)));
  const old = window.__lab;
  if (old) { old.observer.disconnect(); document.removeEventListener(old.type, old.start, {capture: true}); }
  const lab = window.__lab = {t0: null, before: state(), seen: [], state,
                              type: key === null ? 'pointerdown' : 'keydown'};
  lab.start = (e) => {
    if (lab.t0 === null && (key === null || (e.key === key && e.ctrlKey))) lab.t0 = performance.now();
  };
  document.addEventListener(lab.type, lab.start, {capture: true});
  lab.observer = new MutationObserver(() => {
    if (lab.t0 !== null) lab.seen.push([performance.now(), state().join('|')]);
  });
  lab.observer.observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
}"""
# Once the page is idle again: the first recorded state equal to the final one, if that
# differs from before (on the attention page a new sentence also adds a chart).
SETTLED = """() => {
  const lab = window.__lab, final = lab.state().join('|');
  const first = lab.seen.find(([t, s]) => s === final);
  return final !== lab.before.join('|') && first ? (first[0] - lab.t0) / 1000 : null;
}"""


# Installed before the page's own scripts: the time (performance.now(), from the start of
# the navigation) of every change inside a chart.
DRAWS = """window.__draws = [];
new MutationObserver((records) => {
  for (const r of records) {
    const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
    if (el && el.closest && el.closest('[data-testid="stPlotlyChart"]')) {
      window.__draws.push(performance.now());
      break;
    }
  }
}).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});"""
QUIET_S = 0.5  # settled: this long without a change inside any chart


def shared_links(browser, base: str, page: str, n: int, salt: str = "link") -> list[float]:
    """``n`` links to ``page`` with new sentences, each opened in a new tab (a new session)
    of one browser that has opened the app before (its HTTP cache holds Streamlit's code, as
    a class's browsers do after the first link): seconds from the navigation's start to the
    last chart drawing after which nothing changed for ``QUIET_S`` (nan where no chart was
    drawn in 60 s)."""
    import urllib.parse

    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.add_init_script(DRAWS)
    first = ctx.new_page()
    first.goto(f"{base}/{page}")  # the browser's first visit: Streamlit's code into its cache
    wait_idle(first)
    first.close()
    times = []
    for i in range(n):
        a, b = new_sentences(i, f"{salt}-{page}")
        pg = ctx.new_page()
        pg.goto(f"{base}/{page}?{urllib.parse.urlencode({'a': a, 'b': b})}", wait_until="commit")
        end = time.monotonic() + 60
        settled = float("nan")
        while time.monotonic() < end:
            pg.wait_for_timeout(100)
            draws = pg.evaluate("() => [window.__draws.length ? window.__draws[window.__draws.length - 1] : null, "
                                "performance.now(), !!document.querySelector('[data-testid=\"stStatusWidget\"]')]")
            last, now, busy = draws
            if last is not None and not busy and now - last >= QUIET_S * 1000:
                settled = last / 1000
                break
        times.append(settled)
        pg.close()
    ctx.close()
    return times


def timed_in_page(pg, act, title: str | None, key: str | None = None) -> float:
    """Seconds from the person's input to the watched charts showing their new drawing,
    timed in the page (nan if they did not change). ``title``: the chart whose title has
    that text (None: every chart)."""
    pg.evaluate(ARM, [title, key])
    act()
    wait_idle(pg)
    pg.wait_for_timeout(500)  # late redraws (a resize, a second layout pass) are part of it
    seconds = pg.evaluate(SETTLED)
    return float("nan") if seconds is None else seconds


def wait_idle(pg, timeout_s: float = 120) -> None:
    pg.wait_for_timeout(300)
    pg.wait_for_selector('[data-testid="stStatusWidget"]', state="detached", timeout=timeout_s * 1000)
    pg.wait_for_timeout(300)


def chart_with(pg, title_part: str):
    return pg.locator(CHARTS, has_text=title_part).first


def cold_start(browser, root: Path, python: str, cache: Path, page: str = "bert") -> tuple[float, float, float, Server]:
    """(seconds to a healthy server, to the first chart of ``page`` drawn that follows a word,
    the per-layer chart, and to its last chart drawn), all from launch, with the app's cache
    folder (``LAB_CACHE_DIR``: the stored runs, ``lab.stored``, and the reference corpus's
    baselines and neighbour index, ``lab.reference``) at ``cache``."""
    pg = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    srv = Server(root=root, python=python, env={"LAB_STORED_RUNS": "1", "LAB_CACHE_DIR": str(cache)}).start(wait=False)
    healthy = srv.wait_healthy()
    pg.goto(f"{srv.url}/{page}")
    times = []
    for title in (PAGES[page][1], LAST.get(page, PAGES[page][1])):
        line = pg.locator(CHARTS, has_text=title).locator("g.trace path").first
        line.wait_for(state="attached", timeout=300_000)  # the curve or bars themselves, not just the axes
        times.append(time.monotonic() - srv.started)
    pg.context.close()
    return healthy, *times, srv


def prepare_then_launch(browser, root: Path, python: str,
                        page: str = "bert") -> tuple[float, float, float, float, Server]:
    """``python -m lab prepare`` into a new cache folder (timed), then a first launch on it:
    (the command's seconds, then ``cold_start``'s figures and server)."""
    cache = Path(tempfile.mkdtemp(prefix="lab-bench-prepared-"))
    env = dict(os.environ, LAB_STORED_RUNS="1", LAB_CACHE_DIR=str(cache), TF_CPP_MIN_LOG_LEVEL="2")
    t0 = time.monotonic()
    subprocess.run([python, "-m", "lab", "prepare"], cwd=root, env=env, check=True, capture_output=True)
    took = time.monotonic() - t0
    return (took, *cold_start(browser, root, python, cache, page))


def word_pills(pg, page: str, n: int):
    """The word pills of ``page`` to click, ``n`` of them one after another, each another
    word than the one selected (read when the next one is asked for), scrolled into view."""
    radios = pg.get_by_role("radiogroup", name=PAGES[page][0]).get_by_role("radio")
    radios.first.wait_for()  # drawn with the page, but not always by the time it is idle
    count, target = radios.count(), 0
    for _ in range(n):
        target = (target + 1) % count
        if radios.nth(target).get_attribute("aria-checked") == "true":  # already selected
            target = (target + 1) % count
        radios.nth(target).scroll_into_view_if_needed()
        yield radios.nth(target)


def clicks(pg, url: str, page: str, n: int) -> list[float]:
    """``n`` clicks on ``page``'s word pills, at ``url`` (the page's address), each timed."""
    title = PAGES[page][1]
    pg.goto(url)
    chart_with(pg, title).wait_for(timeout=120_000)
    # the page's last chart too, where it comes well after the first (a click before it
    # would be timed against a page still drawing)
    chart_with(pg, LAST.get(page, title)).wait_for(timeout=120_000)
    wait_idle(pg)
    times = []
    for pill in word_pills(pg, page, n):
        times.append(timed_in_page(pg, pill.click, WATCHED.get(page, title)))
        wait_idle(pg)
    return times


def new_sentence(pg, url: str, page: str, n: int, salt: str = "", words: int = 0) -> list[float]:
    """``n`` new sentences A typed on ``page`` at ``url``, each timed until every chart is
    final (``words``: each that many words long)."""
    pg.goto(url)
    chart_with(pg, PAGES[page][1]).wait_for(timeout=120_000)
    wait_idle(pg)
    box = pg.get_by_role("textbox", name="Sentence A")
    times = []
    for i in range(n):
        box.fill(new_sentences(i, salt or f"browser-{page}", words=words)[0])
        times.append(timed_in_page(pg, lambda: box.press("Control+Enter"), None, key="Enter"))
        wait_idle(pg)
    return times


def row(name: str, times: list[float]) -> str:
    t = np.asarray(times, float)
    bad = int(np.isnan(t).sum())
    t = t[~np.isnan(t)] * 1000
    if not len(t):
        return f"{name:44s} no change seen ({bad} timeouts)"
    return (f"{name:44s} p50 {np.percentile(t, 50):6.0f} ms  p95 {np.percentile(t, 95):6.0f} ms  "
            f"max {t.max():6.0f} ms  (n={len(t)}{f', {bad} timeouts' if bad else ''})")


def main(argv=None) -> int:
    ap = parser(__doc__, clicks=15, sentences=5, links=5, long=3, words=400)
    ap.add_argument("--skip-cold", action="store_true", help="start the server without timing it")
    ap.add_argument("--cold-only", action="store_true", help="time the cold starts alone")
    ap.add_argument("--cold-page", default="bert", choices=sorted(PAGES), help="the page the cold starts open")
    ap.add_argument("--pages", default="bert,elmo,attention", help="comma-separated, of: " + ", ".join(PAGES))
    ap.add_argument("--against", type=Path, help="another checkout, timed in turns with --root (no cold start)")
    ap.add_argument("--rounds", type=int, default=3, help="with --against: how many turns each")
    ap.add_argument("--links-only", action="store_true",
                    help="time the shared links alone (4), on any page of the app, e.g. --pages bert,probes")
    a = ap.parse_args(argv)
    if a.against:
        return in_turns(a)
    from playwright.sync_api import sync_playwright

    root = a.root.resolve()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        srv = None
        try:
            if a.skip_cold:
                srv = Server(root=root, python=a.python).start()
            else:
                cache = Path(tempfile.mkdtemp(prefix="lab-bench-cache-"))
                healthy, drawn, whole, srv = cold_start(browser, root, a.python, cache, a.cold_page)
                srv.wait_quiet()
                srv.stop()
                stored = len(list(cache.glob("runs/*.pkl")))
                healthy2, drawn2, whole2, srv = cold_start(browser, root, a.python, cache, a.cold_page)
                prepared = None
                if (root / "lab" / "prepare.py").exists():
                    srv.wait_quiet()
                    srv.stop()
                    prepared = prepare_then_launch(browser, root, a.python, a.cold_page)
                    srv = prepared[-1]
            srv.wait_warm()  # every later figure from a server whose warm-up has ended
            print(f"app: {root}")
            if not a.skip_cold:
                last = "; its last chart at {:.1f} s" if a.cold_page in LAST else ""
                print(f"{f'cold start: server launch -> first {a.cold_page} chart':44s} {drawn:.1f} s (server healthy "
                      f"after {healthy:.1f} s" + last.format(whole) + "; nothing stored)")
                print(f"{'  the same, relaunched':44s} {drawn2:.1f} s (server healthy after {healthy2:.1f} s"
                      + last.format(whole2) + f"; {stored} run(s) stored by the first launch)")
                if prepared:
                    print(f"{'  the same, after python -m lab prepare':44s} {prepared[2]:.1f} s (server healthy "
                          f"after {prepared[1]:.1f} s" + last.format(prepared[3])
                          + f"; the command took {prepared[0]:.1f} s before the launch)")
            if a.cold_only:
                return 0
            ctx = browser.new_context(viewport={"width": 1280, "height": 900})
            pg = ctx.new_page()
            pg.set_default_timeout(120_000)
            results = {}
            for page in () if a.links_only else a.pages.split(","):
                results[f"click a word -> chart changed ({page})"] = clicks(pg, f"{srv.url}/{page}", page, a.clicks)
            for page in () if a.links_only else a.pages.split(","):
                results[f"new sentence -> charts redrawn ({page})"] = new_sentence(pg, f"{srv.url}/{page}", page,
                                                                                   a.sentences)
            for page in a.pages.split(",") if a.long and not a.links_only else ():
                results[f"{a.words} words typed -> charts redrawn ({page})"] = new_sentence(
                    pg, f"{srv.url}/{page}", page, a.long, f"long-{page}", a.words)
            ctx.close()
            for page in a.pages.split(","):
                results[f"shared link -> every chart settled ({page})"] = shared_links(browser, srv.url, page,
                                                                                       a.links)
            for name, times in results.items():
                print(row(name, times))
            clicked = [t for k, v in results.items() if "click" in k for t in v]
            print(f"server RSS after: {srv.rss_mb():.0f} MB"
                  + (f"; median click over pages: {statistics.median(clicked) * 1000:.0f} ms" if clicked else ""))
        finally:
            if srv:
                srv.stop()
            browser.close()
    return 0


def in_turns(a) -> int:
    """``--against``: both checkouts served at once, each page's clicks, new sentences and links
    timed on one and then the other, ``a.rounds`` times, the order swapped every round."""
    roots = [a.root.resolve(), a.against.resolve()]
    servers = [Server(root=r, python=a.python) for r in roots]
    try:
        for srv in servers:
            srv.start()
        for srv in servers:
            srv.wait_warm()
        # one group a page: its two checkouts take turns on it
        groups = [[((i, page), f"{srv.url}/{page}", page) for i, srv in enumerate(servers)]
                  for page in a.pages.split(",")]
        results = timed_in_turns(groups, a.clicks, a.sentences, a.rounds, swap=True)
        if a.links:
            results |= links_in_turns([[((i, page), srv.url, page) for i, srv in enumerate(servers)]
                                       for page in a.pages.split(",")], a.links, a.rounds, swap=True)
    finally:
        for srv in servers:
            srv.stop()
    print(f"in turns, {a.rounds} rounds: [1] {roots[0]}  [2] {roots[1]}")
    for ((i, page), what), rounds in results.items():  # clicks then sentences, page by page
        p50s = ", ".join(f"{np.nanmedian(t) * 1000:.0f}" for t in rounds)
        print(f"{row(f'[{i + 1}] {what} ({page})', [t for ts in rounds for t in ts])}  p50 by round: {p50s} ms")
    return 0


def timed_in_turns(groups, n_clicks: int, n_sentences: int, rounds: int, swap: bool) -> dict:
    """Times, in one Chromium, ``n_clicks`` clicks on the word pills of every target, then
    ``n_sentences`` new sentences A on every target, ``rounds`` times. ``groups`` holds lists
    of targets ``(key, url, page)`` (``page`` names the pills and chart, as in ``PAGES``); the
    targets of a group are timed one after the other, so that they meet the same machine, in
    the order given, or, with ``swap``, reversed every other round. Each target's sentences
    are new to its server. Returns ``{(key, "click a word -> chart changed" | "new sentence
    -> charts redrawn"): [the times of round 1, of round 2, ...]}``."""
    from playwright.sync_api import sync_playwright

    results: dict[tuple, list[list[float]]] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            pg = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            pg.set_default_timeout(120_000)
            for r in range(rounds):
                turn = [g[::-1] if swap and r % 2 else g for g in groups]
                for key, url, page in (t for g in turn for t in g):
                    results.setdefault((key, "click a word -> chart changed"), []).append(
                        clicks(pg, url, page, n_clicks))
                for n, (key, url, page) in enumerate(t for g in turn for t in g):
                    salt = f"turns-{r}-{n}"  # a target's own, so new to its server every round
                    results.setdefault((key, "new sentence -> charts redrawn"), []).append(
                        new_sentence(pg, url, page, n_sentences, salt))
        finally:
            browser.close()
    return results


def links_in_turns(groups, n: int, rounds: int, swap: bool) -> dict:
    """``n`` shared links (``shared_links``) to each target of ``groups`` a round, ``rounds``
    times, in one Chromium. ``groups`` holds lists of targets ``(key, base URL, page)``, timed
    one after the other in the order given or, with ``swap``, reversed every other round.
    Returns ``{(key, "shared link -> every chart settled"): [round 1's times, ...]}``."""
    from playwright.sync_api import sync_playwright

    results: dict[tuple, list[list[float]]] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for r in range(rounds):
                turn = [g[::-1] if swap and r % 2 else g for g in groups]
                for n_target, (key, base, page) in enumerate(t for g in turn for t in g):
                    results.setdefault((key, "shared link -> every chart settled"), []).append(
                        shared_links(browser, base, page, n, salt=f"links-{r}-{n_target}"))
        finally:
            browser.close()
    return results


if __name__ == "__main__":
    sys.exit(main())
