"""Start-up warm-up: what the first person would otherwise wait for, done once per server
in a background thread.

``start()`` (called at launch by serve.py, and by app.py on every run; only the first call
does anything) waits for the first page to be answered (often from stored runs, without
TensorFlow: ``lab.stored``), or at most ``FIRST_PAGE_WAIT_S``. It then loads the configured
BERT and ELMo into the same cache the pages use (``ui.model_cache``; a server's BERT
answers eagerly until its graphs are traced and from its plain graph until its common
length buckets are compiled, both in the background: ``BertEncoder.serve``), traces ELMo's
graphs, builds one figure of each kind (Plotly imports and validates its trace classes on
first use) and one Arrow table, and prints ``ANSWERING_LINE``. Once the common BERT lengths
are compiled it prints ``READY_LINE``, and ``status()`` says "ready" (serve.py's
``/_lab/ready``): until then the compiles take most of a small machine's CPU.

Before ``ANSWERING_LINE`` it freezes the garbage collector's view of everything loaded so
far (``gc.freeze``): with TensorFlow, the models and Plotly on the heap, a full collection
takes a large part of a second of CPU. Streamlit forces one after every script run unless
``runner.postScriptGC`` is off (it is, in ``.streamlit/config.toml``), and Keras's
``clear_session`` another (``keep_kernel_cache`` skips it). Python still collects on its
own; frozen objects are still freed when their last reference goes; the collector just
stops walking them.

``LAB_WARMUP=0`` turns it off: the page tests do, so that every BERT number they check
comes from the compiled programs the tests compute with (a bucket answered from the plain
graph can differ from its compiled program in the last bits, about 1e-6, enough to reorder
tied cosines).
"""

from __future__ import annotations

import logging
import sys
import threading
import time

import numpy as np

from lab.serving import enabled
from ui.memory import freeze_heap

_LOG = logging.getLogger(__name__)
_started = threading.Event()
done = threading.Event()  # set when the warm-up has finished (benchmarks wait on it)
_first_page = threading.Event()  # set when app.py's first run has ended
# How long the warm-up waits for that first run before going on anyway. It starts at launch
# (serve.py): a server that a person opens at once draws its first page before TensorFlow
# loads; one that nobody opens (behind a proxy, before the lesson) warms itself soon after.
FIRST_PAGE_WAIT_S = 10.0
# And then, for the browser to fetch the page's code and draw it: importing TensorFlow
# holds the interpreter lock for long stretches, and the server's event loop, which sends
# the page's messages and serves the chart code, waits for it. Of the pauses tried, this
# one drew a relaunched server's first chart soonest (bench/HISTORY.md).
FIRST_VIEW_GRACE_S = 6.0


def keep_kernel_cache() -> None:
    """Stop Streamlit from clearing TensorFlow's kernel cache after every script run.

    Streamlit ends each run with ``keras.backend.clear_session()`` whenever ``keras`` is in
    ``sys.modules`` (``script_runner._clean_problem_modules``), and importing TensorFlow
    puts it there. With TensorFlow as Keras's backend that clears TensorFlow's kernel
    cache, so the next model call builds every kernel of its functions again: a
    two-sentence BERT or ELMo run then costs several times its CPU. The app builds no Keras models, so there is no Keras
    state to clear; the rest of that clean-up (closing matplotlib figures) is kept.
    Idempotent; if this Streamlit has no such hook, nothing changes.
    """
    from streamlit.runtime.scriptrunner import script_runner

    original = getattr(script_runner, "_clean_problem_modules", None)
    if original is None or getattr(original, "keeps_kernel_cache", False):
        return

    def clean_problem_modules() -> None:
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is not None:
            plt.close("all")

    clean_problem_modules.keeps_kernel_cache = True
    clean_problem_modules.streamlit_original = original
    script_runner._clean_problem_modules = clean_problem_modules


def start() -> None:
    """Start the warm-up thread, once per process (unless ``LAB_WARMUP=0``): at launch
    (serve.py's lifespan), or at the first run of app.py where that did not start it (a
    bare `streamlit run app.py`)."""
    if _started.is_set() or not enabled():
        return
    _started.set()
    threading.Thread(target=_warm, name="lab-warmup", daemon=True).start()


def first_page_done() -> None:
    """Called by app.py when a run ends. Until the first one has ended, and for
    ``FIRST_VIEW_GRACE_S`` after, the warm-up waits, so that importing TensorFlow and
    loading the models do not take turns with the first view's Python work and messages
    for the one interpreter lock (a page that needs a model loads it itself:
    ``ui.model_cache.load``); after ``FIRST_PAGE_WAIT_S`` it goes on anyway."""
    _first_page.set()


# Printed to the server's console: the first when the models are loaded and the server
# answers every page from them, the second when it is warm (the common BERT lengths
# compiled, the CPU quiet). Benchmarks and administrators wait for the second; so does the
# readiness route (``status``, serve.py).
ANSWERING_LINE = "Context Lab: answering"
READY_LINE = "Context Lab: ready"
ready = threading.Event()  # set with READY_LINE
# How long the warm-up waits for the compiles before it calls the server ready all the
# same (a compile that never ends must not keep a server out of its pool for ever).
COMPILE_WAIT_S = 600.0


def status() -> str:
    """"ready" (warm, or no warm-up to wait for: ``LAB_WARMUP=0``), "answering" (the models
    are loaded and the common BERT lengths compile) or "starting"."""
    if ready.is_set() or not enabled():
        return "ready"
    return "answering" if done.is_set() else "starting"


def _warm() -> None:
    t0 = time.monotonic()
    bert = None
    try:
        from ui.imports import import_serially

        import_serially()  # not at the same time as a first session's imports (ui.imports)
        bert = _warm_models()
        _warm_figures()
    except Exception:  # noqa: BLE001 - a failed warm-up only means a slower first view
        _LOG.warning("warm-up failed; the first views will be slower", exc_info=True)
    finally:
        freeze_heap()
        done.set()
        print(f"{ANSWERING_LINE} (models loaded in {time.monotonic() - t0:.1f} s; the common BERT lengths "
              "compile in the background)", file=sys.stderr, flush=True)
    settled = bert is None or bert.encoder.wait_settled(COMPILE_WAIT_S)
    ready.set()
    compiled = "" if bert is None else f"; {len(bert.encoder.compiled)} BERT lengths compiled"
    late = "" if settled else f" (compiling still, after {COMPILE_WAIT_S:.0f} s)"
    print(f"{READY_LINE} in {time.monotonic() - t0:.1f} s{compiled}{late}", file=sys.stderr, flush=True)


def _warm_models():
    """Load the configured BERT and ELMo into the pages' cache and run each once; returns
    the BERT when it compiles its common lengths in the background (else None)."""
    from lab import sources
    from lab.serving import lower_thread_priority
    from ui import frame, model_cache

    _first_page.wait(FIRST_PAGE_WAIT_S)
    time.sleep(FIRST_VIEW_GRACE_S)  # a page that needs a model meanwhile loads it itself
    bert, _ = model_cache.load("bert", sources.default_source("bert"))  # the next view may be waiting for it
    serve = getattr(bert, "serve", None)  # the embedded BERT has it (already serving: ui.model_cache.load)
    lower_thread_priority()  # the rest is for later views: let the ones being answered go first
    if serve:
        # a batch and a packed pair, eagerly (the first page may have been another page):
        # each graph is then traced with the arguments of a real request and run once, so
        # no later request waits for its first-run optimization
        for pair in (False, True):
            bert.run([frame.DEFAULT_A, frame.DEFAULT_B], pair=pair)
        serve()  # trace the graphs, then compile the common buckets, in the background
    elif bert is not None:
        bert.run([frame.DEFAULT_A, frame.DEFAULT_B])  # a TF Hub BERT: its first call, done in advance
    elmo, _ = model_cache.load("elmo", sources.default_source("elmo"))
    if elmo is not None:
        from lab.models.elmo_io import repeat_runs  # imported by the load

        elmo.run([["Warm", "up", "."], ["The", "bank", "."]])  # traces the stateless graph
        repeat_runs(elmo, ["The", "bank", "."], 2, 0.1)  # and what the ELMo page runs when its section 4 opens
    return bert if serve else None


def _warm_figures() -> None:
    import pandas as pd
    import plotly.io
    from streamlit import dataframe_util

    from lab import figures

    z = np.eye(3)
    tokens = ["a", "b", "c"]
    built = [
        figures.layer_curve(tokens, {"x": [0.1, 0.2, 0.3]}, "t", "m"),
        figures.bar_by_layer(tokens, [0.1, 0.2, 0.3], "t", "m"),
        figures.heatmap(z, tokens, tokens, "t", "m"),
        figures.attention_heatmap(z, tokens, "t", "m"),
        figures.model_view(z[None, None], tokens, "t", "m"),
        figures.attention_lines(z[0], tokens, 0, "t", "m"),
    ]
    for fig in built:
        plotly.io.to_json(fig.to_dict(), validate=False)
    dataframe_util.convert_anything_to_arrow_bytes(pd.DataFrame({"a": tokens, "b": [0.1, 0.2, 0.3]}))
