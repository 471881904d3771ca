"""What a server needs to answer a request at once: work done in advance runs at the
lowest thread priority, and a ``tf.function`` answers eagerly until its graph is traced.

Used by BERT's encoder and tokenizer (``lab.models.bert``, ``lab.wordpiece``) and by a
server's model cache and warm-up; ``LAB_WARMUP=0`` turns that way of serving off. Outside
``lab.models`` so that ``lab.wordpiece`` needs nothing of that package, whose ``load`` imports
``lab.models.bert``, which imports ``lab.wordpiece``.
Importing it does not import TensorFlow.
"""

from __future__ import annotations

import os
import threading


def enabled() -> bool:
    """Whether a server answers at once and prepares in the background (default: yes);
    False when ``LAB_WARMUP`` is 0/false/no/off. The page tests turn it off, so that every
    BERT number they check comes from the compiled programs the tests compute with."""
    return os.environ.get("LAB_WARMUP", "1").strip().lower() not in ("0", "false", "no", "off")


def lower_thread_priority() -> None:
    """Give the calling thread the lowest CPU priority, for work done in advance (Linux:
    niceness is per thread); elsewhere, or when not allowed, nothing changes."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):
        pass


class EagerUntilTraced:
    """A ``tf.function`` with an input signature that a server can call before its graph
    exists: after ``eager()``, calls run the function's Python body eagerly until
    ``trace()`` (typically in a background thread) has built the graph; from then on they
    go through the graph. Not switched to eager (tests, the command line), it is the
    ``tf.function`` itself, called through its concrete function.

    A call goes to the traced graph's concrete function rather than to the ``tf.function``:
    the same graph, without the ``tf.function``'s argument binding and trace-cache lookup,
    which cost a noticeable share of a short call.

    Tracing is Python building a graph op by op: for the first BERT request of a server,
    tracing the tokenizer and the encoder takes several times as long as running the same
    ops eagerly. Eager and graph runs use the same kernels; the
    graph may fuse some ops, so float results can differ in the last bits.
    """

    def __init__(self, fn):
        self.fn = fn
        self._eager = False
        self._traced = threading.Event()
        self._example = None  # the arguments of the first call answered eagerly
        self._graph = None  # the concrete function, once asked for

    def eager(self) -> None:
        """From now on, run eagerly until traced."""
        self._eager = True

    def trace(self) -> None:
        """Build the graph (its one trace: the input signature fixes the types). Given the
        arguments of a call answered eagerly, it also runs the graph once with them:
        TensorFlow optimizes and instantiates a graph at its first run, which the next
        request would otherwise wait for."""
        if self._example is not None:
            self.fn(*self._example)
        else:
            self.fn.get_concrete_function()
        self._example = None
        self._traced.set()

    @property
    def traced(self) -> bool:
        return self._traced.is_set()

    def graph(self):
        """The traced graph as a concrete function (tracing it on the first call)."""
        if self._graph is None:
            self._graph = self.fn.get_concrete_function()  # the input signature fixes the one trace
        return self._graph

    def __call__(self, *args):
        import tensorflow as tf

        if not self._eager or self._traced.is_set():
            return self.graph()(*(a if isinstance(a, tf.Tensor) else tf.convert_to_tensor(a, spec.dtype)
                                  for a, spec in zip(args, self.fn.input_signature)))
        # the graph's argument types, so that both paths compute in the same dtypes
        args = [tf.convert_to_tensor(a, spec.dtype) for a, spec in zip(args, self.fn.input_signature)]
        if self._example is None:
            self._example = args
        return self.fn.python_function(*args)
