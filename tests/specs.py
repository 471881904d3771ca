"""The figures a page drew, read back from AppTest: the Plotly JSON of a chart, found by its
title or its key, and its arrays as NumPy."""

from __future__ import annotations

import base64
import json

import numpy as np


def values(v) -> np.ndarray:
    """A Plotly JSON array: a plain list, or the typed-array form {dtype, bdata[, shape]}."""
    if isinstance(v, dict) and "bdata" in v:
        arr = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
        if "shape" in v:
            arr = arr.reshape([int(n) for n in str(v["shape"]).split(",")])
        return arr
    return np.asarray(v, dtype=float)


def chart(at, title_part: str) -> dict:
    """The first chart whose title holds ``title_part``, as JSON."""
    for el in at.get("plotly_chart"):
        spec = json.loads(el.proto.spec)
        if title_part in json.dumps(spec.get("layout", {}).get("title", {})):
            return spec
    raise AssertionError(f"no chart titled with {title_part!r}")


def chart_keyed(at, key: str) -> dict:
    """The chart the page drew under ``key``, as JSON."""
    (el,) = [c for c in at.get("plotly_chart") if c.key == key]
    return json.loads(el.proto.spec)
