"""Where a click's time goes in Chromium: the request, the server's answer, and the page's own work.

    python bench/click_profile.py [--page elmo] [--clicks 12] [--sentences N] [--save FILE.cpuprofile]
                                  [--no-profile] [--root CHECKOUT]

Serves the app, opens one page (``bert``, ``elmo``, ``attention`` or ``compare``) in
Debian's Chromium and clicks a word pill ``--clicks`` times, as ``bench/browser.py`` does.
For each click it records, from the pointerdown, when the browser sent its request over
the websocket, when the first answer, the one carrying the chart that follows the word,
and the last answer arrived, and when that chart showed its new drawing (a hook on the
page's WebSocket stamps every message as it arrives), and how many times heatmaps were
drawn. With ``--sentences N`` it types N new sentences A instead (Ctrl+Enter, as
``bench/browser.py`` does), each timed from the key press until every chart of the page
shows its final drawing. Meanwhile Chrome's sampling profiler (over the DevTools
protocol) records the page's main thread; the table splits its time per input by script
(Plotly, React, styles...) and lists the functions that took most. The profiler slows
the page, so its times are longer than ``bench/browser.py``'s: read them side by side,
not against the targets; ``--no-profile`` gives the same timeline without it. Prints
figures; asserts nothing.
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.browser import PAGES, chart_with, timed_in_page, wait_idle, word_pills
from harness.served import Server, new_sentences
from bench.session import parser
from harness.chromium import CHROMIUM, CHROMIUM_ARGS, COUNT_HEATMAP_DRAWS

# Every websocket message, stamped on arrival (bytes) or on sending (-1), before the app's
# own handler sees it: this listener is added first. A message whose bytes hold
# ``window.__mark`` (the watched chart's key, part of its element id) is flagged.
HOOK = """(() => {
  const Native = window.WebSocket;
  window.__ws = [];
  function Stamped(...args) {
    const ws = new Native(...args);
    const text = new TextDecoder('latin1');
    ws.addEventListener('message', e => {
      const mark = window.__mark && e.data instanceof ArrayBuffer && text.decode(e.data).includes(window.__mark);
      window.__ws.push([performance.now(), e.data.byteLength || e.data.size || 0, mark ? 1 : 0]);
    });
    const send = ws.send.bind(ws);
    ws.send = data => { window.__ws.push([performance.now(), -1, 0]); return send(data); };
    return ws;
  }
  Stamped.prototype = Native.prototype;
  Object.assign(Stamped, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
  window.WebSocket = Stamped;
})();"""
# the key of the chart that follows the clicked word (its element's id holds it)
CHART_KEYS = {"bert": "bert_curve", "elmo": "elmo_bars", "attention": "att_row_view", "compare": "cmp_curves"}
WARM_CLICKS = 2  # clicked before timing: the first clicks load code and fill caches


def timeline(pg, act, title: str | None, key: str | None) -> tuple | None:
    """One input (``act``), timed from the pointerdown (``key`` None) or the key press: (sent,
    first answer, the marked chart's message, last answer, messages, bytes, charts drawn,
    heatmap drawings), times in ms; None if the watched charts (``title``; None: every
    chart) did not change."""
    pg.evaluate("window.__ws.length = 0; window.__heatmapDraws = 0")
    drawn = timed_in_page(pg, act, title, key)
    t0, log = pg.evaluate("window.__lab.t0"), pg.evaluate("window.__ws")
    sent = [t - t0 for t, n, _ in log if n < 0]
    got = [(t - t0, n, mark) for t, n, mark in log if n >= 0]
    chart = [t for t, _, mark in got if mark]
    if np.isnan(drawn) or not got:
        return None
    return (sent[0] if sent else np.nan, got[0][0], chart[0] if chart else np.nan, got[-1][0], len(got),
            sum(n for _, n, _ in got), drawn * 1000, pg.evaluate("window.__heatmapDraws"))


def click_times(pg, page: str, clicks: int, cdp) -> tuple[np.ndarray, dict | None]:
    """One ``timeline`` row per click and the profile of the timed clicks (None without ``cdp``)."""
    rows = []
    for i, pill in enumerate(word_pills(pg, page, clicks + WARM_CLICKS)):
        if i == WARM_CLICKS and cdp:
            cdp.send("Profiler.start")
        row = timeline(pg, pill.click, PAGES[page][1], None)
        if i >= WARM_CLICKS and row:
            rows.append(row)
    return np.array(rows), cdp.send("Profiler.stop")["profile"] if cdp else None


def sentence_times(pg, page: str, n: int, cdp) -> tuple[np.ndarray, dict | None]:
    """One ``timeline`` row per new sentence A (every chart watched) and their profile (None without ``cdp``)."""
    box, rows = pg.get_by_role("textbox", name="Sentence A"), []
    for i in range(n + 1):  # the first loads code that later ones reuse: not timed
        box.fill(new_sentences(i, f"profile-{page}")[0])
        if i == 1 and cdp:
            cdp.send("Profiler.start")
        row = timeline(pg, lambda: box.press("Control+Enter"), None, "Enter")
        if i >= 1 and row:
            rows.append(row)
    return np.array(rows), cdp.send("Profiler.stop")["profile"] if cdp else None


def self_times(profile: dict) -> tuple[collections.Counter, collections.Counter]:
    """Sampled self time in ms, by script file and by function."""
    nodes = {n["id"]: n["callFrame"] for n in profile["nodes"]}
    by_script, by_function = collections.Counter(), collections.Counter()
    for node, dt in zip(profile["samples"], profile["timeDeltas"]):
        frame = nodes[node]
        script = frame["url"].rsplit("/", 1)[-1] or frame["functionName"] or "(native)"
        by_script[script] += dt / 1000
        by_function[f"{frame['functionName'] or '(anonymous)'} @ {script}:{frame['lineNumber'] + 1}"] += dt / 1000
    return by_script, by_function


def main(argv=None) -> int:
    ap = parser(__doc__, clicks=12)
    ap.add_argument("--page", choices=sorted(PAGES), default="elmo")
    ap.add_argument("--sentences", type=int, default=0,
                    help="type this many new sentences A instead of clicking (each timed until every chart is final)")
    ap.add_argument("--no-profile", action="store_true", help="the timeline alone, without Chrome's profiler")
    ap.add_argument("--save", type=Path,
                    help="write the timed clicks' profile here (a .cpuprofile for Chrome's DevTools)")
    a = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    srv = Server(root=a.root.resolve(), python=a.python).start()
    try:
        srv.wait_warm()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            ctx = browser.new_context(viewport={"width": 1280, "height": 900})
            ctx.add_init_script(HOOK)
            ctx.add_init_script(COUNT_HEATMAP_DRAWS)
            pg = ctx.new_page()
            pg.set_default_timeout(120_000)
            pg.goto(f"{srv.url}/{a.page}")
            chart_with(pg, PAGES[a.page][1]).wait_for()
            wait_idle(pg)
            cdp = None
            if not a.no_profile:
                cdp = ctx.new_cdp_session(pg)
                cdp.send("Profiler.enable")
                cdp.send("Profiler.setSamplingInterval", {"interval": 200})  # microseconds
            pg.evaluate("key => { window.__mark = key; }", CHART_KEYS[a.page])
            if a.sentences:
                rows, profile = sentence_times(pg, a.page, a.sentences, cdp)
            else:
                rows, profile = click_times(pg, a.page, a.clicks, cdp)
            browser.close()
    finally:
        srv.stop()
    if a.save and profile:
        a.save.write_text(json.dumps(profile))
    n = len(rows)
    if not n:
        print("no input changed the charts")
        return 1
    med = np.nanmedian(rows, axis=0)
    what = (f"{n} new sentences (medians, ms from the key press" if a.sentences
            else f"{n} clicks (medians, ms from the pointerdown")
    print(f"app: {srv.root}; {a.page} page, {what}{'' if a.no_profile else ', under the profiler'})")
    print(f"  request sent {med[0]:.0f} · first answer {med[1]:.0f} · the chart's message {med[2]:.0f} · "
          f"last answer {med[3]:.0f} ({med[4]:.0f} messages, {med[5] / 1000:.0f} kB) · "
          f"{'every chart' if a.sentences else 'chart'} drawn {med[6]:.0f} · heatmaps drawn {med[7]:.0f} times")
    if not profile:
        return 0
    by_script, by_function = self_times(profile)
    each = "new sentence" if a.sentences else "click"
    print(f"main thread per {each}, ms, by script ((idle) includes the waits between them):")
    for name, ms in by_script.most_common(12):
        print(f"  {ms / n:7.1f}  {name}")
    print(f"functions that took most, per {each}, ms:")
    for name, ms in [(k, v) for k, v in by_function.most_common() if not k.startswith("(")][:15]:
        print(f"  {ms / n:7.1f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
