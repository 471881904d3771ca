"""``streamlit run`` with timers on the parts of a script run, for ``bench/server_cpu.py``.

    python bench/profiled_server.py OUT.jsonl run app.py --server.port N ...

Wraps (once their modules are imported) the model runs, ``lab.views``, the figure
builders, ``st.plotly_chart`` (Plotly -> dict -> JSON), ``st.dataframe`` / ``st.table``
(pandas -> Arrow), Streamlit's cached-function calls (hashing and lookups), and each script
run; every run appends one JSON line to OUT: the page, whether it was a fragment run, the
CPU time of each part (the process's, so TensorFlow's worker threads count) excluding
the parts nested in it, the bytes of the ForwardMsgs it sent, and the run's total.
"""

from __future__ import annotations

import cProfile
import functools
import os
import json
import sys
import threading
import time
from pathlib import Path

_local = threading.local()
_lock = threading.Lock()
OUT: Path
PSTATS = os.environ.get("BENCH_PSTATS")  # a folder: also dump each run's cProfile stats there


def _timed(category: str, fn):
    """``fn`` adding its process CPU time to ``category``, minus what nested parts took."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        parts = getattr(_local, "parts", None)
        if parts is None:
            return fn(*args, **kwargs)
        stack = _local.stack
        stack.append(0.0)
        t0 = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent = time.process_time() - t0
            nested = stack.pop()
            parts[category] = parts.get(category, 0.0) + spent - nested
            if stack:
                stack[-1] += spent

    run.__timed__ = True
    return run


def _wrap(owner, name: str, category: str) -> None:
    # a name the app no longer has fails here (tests/test_bench_profiled.py), not as a
    # profile with a part silently missing
    fn = getattr(owner, name)
    if not getattr(fn, "__timed__", False):
        setattr(owner, name, _timed(category, fn))


def _install() -> None:
    """Wrap whatever of the app's modules are imported by now (idempotent). A module another
    thread is still importing (the warm-up's) is left to a later script run."""
    mods = {name: m for name, m in sys.modules.items()
            if not getattr(getattr(m, "__spec__", None), "_initializing", False)}
    if "lab.models.bert_io" in mods:
        m = mods["lab.models.bert_io"]
        _wrap(m.EmbeddedBert, "run", "model runs")
        _wrap(m.HubBert, "run", "model runs")
    if "lab.models.elmo_io" in mods:
        m = mods["lab.models.elmo_io"]
        _wrap(m.ElmoRunner, "run", "model runs")
        _wrap(m.HubElmoRunner, "run", "model runs")
    if "lab.models.transformer" in mods:
        _wrap(mods["lab.models.transformer"], "run_block", "model runs")
    if "lab.views" in mods:
        m = mods["lab.views"]
        for name in ("word_pair", "token_map", "cross_map", "wordpiece_table", "sentence_measures",
                     "embedding_parts", "mix", "elmo_outputs", "sentence_vectors", "attention_view",
                     "padding_check"):
            _wrap(m, name, "lab.views")
    if "lab.elmo_vs_bert" in mods:
        m = mods["lab.elmo_vs_bert"]
        for name in ("align", "model_curve", "neighbours", "placed", "at_best"):
            _wrap(m, name, "lab.elmo_vs_bert")
    if "lab.reference" in mods:
        m = mods["lab.reference"].ReferenceStore
        for name in ("baseline", "self_similarity", "index"):
            _wrap(m, name, "reference corpus (baseline, self-similarity, index)")
    if "lab.figures" in mods:
        m = mods["lab.figures"]
        for name in ("layer_curve", "bar_by_layer", "heatmap", "attention_heatmap", "model_view",
                     "attention_lines", "depth_chart", "pair_strip"):
            _wrap(m, name, "figure construction")
    from streamlit.elements.arrow import ArrowMixin
    from streamlit.elements.plotly_chart import PlotlyMixin
    from streamlit.elements.table import TableMixin
    from streamlit.runtime.caching.cache_utils import CachedFunc

    import streamlit as st

    for owner in (PlotlyMixin, st):  # st.x is a method bound at import: wrap it too
        _wrap(owner, "plotly_chart", "st.plotly_chart (to dict, JSON)")
    for owner in (ArrowMixin, st):
        _wrap(owner, "dataframe", "tables to Arrow")
    for owner in (TableMixin, st):
        _wrap(owner, "table", "tables to Arrow")
    _wrap(CachedFunc, "__call__", "cache lookups (hashing)")


def main() -> None:
    global OUT
    OUT = Path(sys.argv[1])
    from streamlit.runtime.scriptrunner import script_runner as sr

    original_run = sr.ScriptRunner._run_script
    original_enqueue = sr.ScriptRunner._enqueue_forward_msg

    def enqueue(self, msg):
        if getattr(_local, "parts", None) is not None:
            _local.bytes += msg.ByteSize()
        return original_enqueue(self, msg)

    def run_script(self, rerun_data):
        _install()
        _local.parts, _local.stack, _local.bytes = {}, [], 0
        profile = cProfile.Profile() if PSTATS else None
        t0, w0 = time.process_time(), time.perf_counter()
        try:
            if profile:
                profile.enable()
            return original_run(self, rerun_data)
        finally:
            if profile:
                profile.disable()
                fragment = bool(rerun_data.fragment_id_queue or rerun_data.fragment_id)
                profile.dump_stats(f"{PSTATS}/{time.time():.3f}-{rerun_data.page_name}"
                                   f"{'-fragment' if fragment else ''}.pstats")
            total, wall = time.process_time() - t0, time.perf_counter() - w0
            parts, sent = _local.parts, _local.bytes
            _local.parts = None
            parts["rest of the script (Streamlit elements, widgets, protobuf)"] = total - sum(parts.values())
            line = {"page": rerun_data.page_name or rerun_data.page_script_hash,
                    "query": rerun_data.query_string,
                    "fragment": bool(rerun_data.fragment_id_queue or rerun_data.fragment_id),
                    "cpu_s": total, "wall_s": wall,
                    "bytes": sent, "parts": parts}
            with _lock, OUT.open("a") as f:
                f.write(json.dumps(line) + "\n")

    sr.ScriptRunner._run_script = run_script
    sr.ScriptRunner._enqueue_forward_msg = enqueue
    from streamlit.web import cli

    sys.argv = ["streamlit", *sys.argv[2:]]
    cli.main()


if __name__ == "__main__":
    main()
