"""Clicks on chart cells: one way for every page to turn a clicked cell into a selection.

Streamlit reports a click on a Plotly chart as a selection event in
``st.session_state[chart_key]``; the cell's x and y are token positions (``lab.figures``
puts numeric axes under token labels). ``on_click(key, x=..., y=...)`` gives the
``on_select`` callback that hands the clicked column to ``x`` and row to ``y``.
"""

from __future__ import annotations

from functools import partial
from typing import Callable, Sequence

import streamlit as st

from ui import state


def clicked_cell(chart_key: str) -> tuple[int, int] | None:
    """(x, y) of the first clicked point of a chart, or None."""
    event = st.session_state.get(chart_key) or {}
    points = event.get("selection", {}).get("points", [])
    if not points:
        return None
    return int(points[0]["x"]), int(points[0]["y"])


def _apply(chart_key: str, x: Callable[[int], None] | None, y: Callable[[int], None] | None) -> None:
    cell = clicked_cell(chart_key)
    if cell is None:
        return
    for take, index in ((x, cell[0]), (y, cell[1])):
        if take is not None:
            take(index)


def on_click(chart_key: str, x: Callable[[int], None] | None = None,
             y: Callable[[int], None] | None = None) -> Callable[[], None]:
    """The ``on_select`` callback for chart ``chart_key``: clicked column -> ``x(i)``,
    clicked row -> ``y(i)``."""
    return partial(_apply, chart_key, x, y)


def pick(key: str, values: Sequence[int], store: Callable[[int], None] | None = None) -> Callable[[int], None]:
    """A taker that puts ``values[i]`` into the persistent ``key`` (or hands it to ``store``);
    out-of-range indices and negative values ([CLS], [SEP]: no word) are ignored."""

    def take(i: int) -> None:
        if 0 <= i < len(values) and values[i] >= 0:
            (store or partial(state.put, key))(int(values[i]))

    return take
