"""The browser the tests, the benchmarks and the screenshots drive: Debian's Chromium
(``LAB_CHROMIUM`` names another), headless, with the settings a container needs."""

from __future__ import annotations

import os
from pathlib import Path

CHROMIUM = Path(os.environ.get("LAB_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


# An init script: counts heatmap drawings in ``window.__heatmapDraws``. Plotly draws a
# heatmap's cells on a canvas and turns it into an image once per drawing (toDataURL).
COUNT_HEATMAP_DRAWS = """(() => {
  window.__heatmapDraws = 0;
  const toDataURL = HTMLCanvasElement.prototype.toDataURL;
  HTMLCanvasElement.prototype.toDataURL = function (...args) {
    window.__heatmapDraws++;
    return toDataURL.apply(this, args);
  };
})();"""
