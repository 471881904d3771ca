"""The figures and tables a page drew, read back from AppTest: the Plotly JSON of a chart,
found by its title or its key, and its arrays as NumPy; every table as a reader sees it;
a vectors file (a page's download, ``python -m lab export``'s file) checked against its run.
And a click on a chart's cell, which AppTest cannot make."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa


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


# Names the input layer had before it had one (``lab.vectors.INPUT_LAYER``): no chart shows them
OLD_INPUT_NAMES = {"embeddings", "embedding", "word_emb", "layer 0", "Layer 0", "input"}


def ticks(spec: dict) -> list[str]:
    """Every tick label of a chart's axes, a label of several lines ("<br>") split into them."""
    return [line for axis in ("xaxis", "yaxis") for t in spec["layout"].get(axis, {}).get("ticktext") or []
            for line in str(t).split("<br>")]


def chart_keyed(at, key: str) -> dict:
    """The chart the page drew under ``key``, as JSON."""
    (el,) = [c for c in at.get("plotly_chart") if c.key == key]
    return json.loads(el.proto.spec)


def use_map_dots(spec: dict) -> list[dict]:
    """A use map's dots (``lab.figures.use_map_chart``: the traces whose dots carry their
    corpus sentence), one dict each: ``sentence``, ``x``, ``y``, its trace's ``name`` and
    marker ``colour``, in corpus order."""
    dots = []
    for t in spec["data"]:
        if "customdata" in t:
            for s, x, y in zip(values(t["customdata"]), values(t["x"]), values(t["y"])):
                dots.append({"sentence": int(s), "x": float(x), "y": float(y), "name": t["name"],
                             "colour": t["marker"]["color"]})
    return sorted(dots, key=lambda d: d["sentence"])


def click_cell(at, key: str, x: int, y: int):
    """Click cell (x, y) of the chart shown under ``key``, as the browser reports it: a
    selection of one point, sent with the other widgets' values on the next run (AppTest
    has no interaction for a chart); returns the rerun page."""
    (el,) = [c for c in at.get("plotly_chart") if c.key == key]
    states = at._tree.get_widget_states()
    clicked = states.widgets.add()
    clicked.id = el.proto.id
    clicked.string_value = json.dumps({"selection": {"points": [{"x": x, "y": y}], "point_indices": [0],
                                                     "box": [], "lasso": []}})
    return at._run(states)


def _unescaped(v):
    return re.sub(r"\\(.)", r"\1", v) if isinstance(v, str) else v


def tables(at) -> list[pd.DataFrame]:
    """Every table the page showed, the interactive grids (``st.dataframe``) first, then the
    plain ones (``st.table``), as a reader sees them: the backslashes that keep a plain
    table's text from being read as Markdown (``ui.frame.plain_table``) taken out."""
    out = [d.value for d in at.dataframe]
    for t in at.table:
        df = t.value.map(_unescaped)
        df.index, df.columns = df.index.map(_unescaped), df.columns.map(_unescaped)
        out.append(df)
    return out


def grid_formats(grid) -> dict[str, str]:
    """The number format of each column of an interactive grid (``st.dataframe``) that has
    one (``ui.frame.number_formats``): the grid prints its numbers with it."""
    columns = json.loads(grid.proto.columns or "{}")
    return {name: config["type_config"]["format"] for name, config in columns.items()
            if config.get("type_config", {}).get("format")}


def printed(table) -> pd.DataFrame:
    """A plain table's (``st.table``) cells as the page prints them: the text of its
    Styler's display values (``ui.frame.plain_table`` formats the numbers)."""
    styler = table.proto.arrow_data.styler
    assert styler.display_values, "the table was not formatted"
    return pa.ipc.open_stream(styler.display_values).read_pandas()


def use_source(at, family: str, source: str):
    """Pick a model from ``source`` (a folder, a handle) in the sidebar's menu of ``family``
    ("bert" or "elmo"), as a person does: "custom", then the path; returns the rerun page."""
    at.sidebar.selectbox(key=f"_w_{family}_src").set_value("custom").run()
    return at.sidebar.text_input(key=f"_w_{family}_custom").input(str(source)).run()


def vectors_file(file: bytes | Path, out, extra=()) -> dict[str, np.ndarray]:
    """Every array of a vectors ``.npz`` (its bytes or its path), loaded as anyone can load
    it (``numpy.load`` without ``allow_pickle``, which refuses pickled arrays), checked
    against ``out``, the ``LayerVectors`` it should hold (``lab.vectors.to_arrays``'s
    contract), with the names ``extra`` besides; returns the arrays."""
    with np.load(io.BytesIO(file) if isinstance(file, bytes) else file, allow_pickle=False) as z:
        arrays = {name: z[name] for name in z.files}
    optional = {"attentions": out.attentions is not None, "input_word_ids": out.bert is not None}
    names = {"tokens", "layers", "mask", "layer_names", "model"} | {k for k, has in optional.items() if has}
    assert set(arrays) == names | set(extra)
    tokens, mask = arrays["tokens"], arrays["mask"]
    assert tokens.dtype.kind == "U" and tokens.shape == out.mask.shape  # (B, T)
    assert mask.dtype == np.int32 and mask.tolist() == out.mask.tolist()
    assert [row[m > 0].tolist() for row, m in zip(tokens, mask)] == out.tokens
    assert (tokens[mask == 0] == "").all()  # padding
    assert arrays["layers"].dtype == np.float32
    np.testing.assert_array_equal(arrays["layers"], out.layers)
    assert arrays["layer_names"].tolist() == out.layer_names
    assert arrays["model"].shape == () and str(arrays["model"]) == out.model_label
    if out.attentions is not None:
        assert arrays["attentions"].dtype == np.float32
        np.testing.assert_array_equal(arrays["attentions"], out.attentions)
    if out.bert is not None:
        np.testing.assert_array_equal(arrays["input_word_ids"], out.bert.input_word_ids)
    return arrays
