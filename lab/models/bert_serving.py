"""How BERT's forward pass is run: padded to a few shape buckets, each compiled once by
XLA, and answered from a plain graph while a bucket compiles in the background.

One trace serves every shape (both dimensions unknown); XLA then compiles one fused
program per padded shape (seconds, the first time a bucket is used), and padding to a few
buckets means a new sentence rarely needs a new program. The plain graph is the same
function without XLA: slower per call on short inputs, but no compilation per shape, so a
server answers from it while a bucket compiles (``serve``), eagerly until the graph is
traced; it alone runs inputs longer than ``XLA_MAX_LENGTH``. Padded keys are masked, so
padding to a bucket leaves the real tokens' outputs unchanged.

Shape letters: B batch, T tokens.
"""

from __future__ import annotations

import atexit
import queue
import threading
import time
from typing import Callable, Sequence

import numpy as np
import tensorflow as tf

from lab.serving import EagerUntilTraced, lower_thread_priority

# Steps of 4 up to 24 positions, where classroom sentences fall: the encoder's time grows
# with T, so a bucket much longer than the sentences wastes time.
LENGTH_BUCKETS = (8, 12, 16, 20, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64)
# XLA only up to this many positions. It fuses a short input's many small ops, but past
# that the matrix products dominate and it gains nothing, while a compiled program's
# concurrent runs keep their buffers for good (several times what the plain graph keeps),
# so a class pasting paragraphs would grow the server by gigabytes.
XLA_MAX_LENGTH = 128
# A server compiles a new bucket on demand only up to this batch size: what the pages ask
# for (two sentences, or one packed pair). Larger batches are the reference corpus's and
# the sense pairs' runs (``lab.reference``, ``lab.elmo_vs_bert.run_sense_test``), made once per
# server and cached: they run on the plain graph rather than have a program built, in the
# background, for each of their shapes (seconds of CPU each, and it stays in memory).
XLA_ON_DEMAND_BATCH = 2
# The buckets the pages use most, most likely first: two sentences as a padded batch
# (B = 2) or packed as one pair (B = 1), up to 128 pieces. A server compiles these at start.
COMMON_BUCKETS = tuple((B, T) for T in (12, 16, 20, 24, 32, 48, 64, 8, 96, 128) for B in (2, 1))


def bucket(n: int, buckets: Sequence[int]) -> int:
    """The smallest bucket >= n (n itself past the last bucket)."""
    return next((b for b in buckets if b >= n), n)


class BucketedForward:
    """``graph(input_word_ids, input_mask, input_type_ids) -> dict of tensors`` run on
    inputs padded to a (B, T) bucket: XLA's program of the bucket, or the plain graph."""

    def __init__(self, graph: Callable):
        spec = tf.TensorSpec([None, None], tf.int32)
        # never switched to eager: the tf.function itself, called through its concrete function
        self._forward = EagerUntilTraced(tf.function(graph, input_signature=[spec, spec, spec], jit_compile=True,
                                                     autograph=False))
        self._plain = EagerUntilTraced(tf.function(graph, input_signature=[spec, spec, spec], autograph=False))
        self._compiled: set[tuple[int, int]] = set()  # (B, T) buckets XLA has built
        self._queue: queue.Queue | None = None  # set by ``serve``: graphs to trace, buckets to compile
        self._graphs: list[EagerUntilTraced] = []  # what ``serve`` runs eagerly until traced
        self._prepare = False  # set by ``serve(buckets)``: work in the background from now on

    def serve(self, buckets: Sequence[tuple[int, int]] = (), graphs: Sequence[EagerUntilTraced] = ()) -> None:
        """Never make a caller wait for a trace or for XLA. From now on a bucket without a
        compiled program runs on the plain graph while one background thread compiles it
        (a batch of at most ``XLA_ON_DEMAND_BATCH``; larger ones stay on the plain graph),
        and before that graph is traced, eagerly; so do ``graphs`` (the tokenizer's, which
        a request goes through first). When ``buckets`` ((B, T) pairs, most likely first)
        are given, the background thread traces every graph not traced yet, then compiles
        them. A server calls ``serve(())`` before its first request (answered eagerly, far
        sooner than tracing would) and ``serve(COMMON_BUCKETS)`` once it is answered.

        The paths compute the same function; their float32 results can differ in the last
        bits (about 1e-6), so a run may differ that much from the same run before its bucket
        was compiled. Without ``serve`` (tests, the command line) every call up to
        ``XLA_MAX_LENGTH`` positions uses XLA.
        """
        if self._queue is None:
            self._queue = queue.Queue()
            self._stop = threading.Event()
            worker = threading.Thread(target=self._compile_worker, name="bert-xla-compile", daemon=True)
            worker.start()
            # a compilation still running when the interpreter shuts down can crash it: stop first
            atexit.register(self._stop_compiling, worker)
        self._graphs += [g for g in (*graphs, self._plain) if g not in self._graphs]  # in a request's order
        for g in self._graphs:
            g.eager()
        if buckets:
            self._prepare = True
            for g in self._graphs:
                if not g.traced:
                    self._queue.put(g.trace)
        for shape in buckets:
            if shape[1] <= XLA_MAX_LENGTH:  # past it every call runs on the plain graph (``_program``)
                self._queue.put(shape)

    def _stop_compiling(self, worker: threading.Thread) -> None:
        self._stop.set()
        worker.join(timeout=30)

    @property
    def serving(self) -> bool:
        """True once ``serve`` was called (a bucket without a program uses the plain graph)."""
        return self._queue is not None

    @property
    def compiled(self) -> frozenset[tuple[int, int]]:
        """The (B, T) buckets the background thread has compiled so far."""
        return frozenset(self._compiled)

    def _compile_worker(self) -> None:
        lower_thread_priority()  # compiling in advance must not slow down the calls answered now
        while not self._stop.is_set():
            try:
                job = self._queue.get(timeout=0.1)
            except queue.Empty:
                continue
            try:
                if callable(job):  # a graph to trace
                    job()
                    continue
                B, T = job
                if (B, T) in self._compiled:
                    continue
                zeros = tf.zeros((B, T), tf.int32)
                self._forward(zeros, tf.ones((B, T), tf.int32), zeros)  # traces once, compiles (B, T)
                self._compiled.add((B, T))
            finally:
                self._queue.task_done()

    def wait_settled(self, timeout: float | None = None) -> bool:
        """Wait until the background thread has done everything queued so far (traced the
        graphs, compiled the buckets); True when it has, False on ``timeout`` (seconds).
        A server is warm only then: until it is, the thread takes most of a small machine's
        CPU, and a request of a bucket not compiled yet runs on the slower plain graph."""
        if self._queue is None:
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._queue.all_tasks_done:  # Queue.join() with a timeout
            while self._queue.unfinished_tasks:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._queue.all_tasks_done.wait(left)
        return True

    def _program(self, B: int, T: int):
        """The compiled program when it is there (or when not serving), else the plain graph
        (eagerly until traced), queueing the bucket for compiling when it is a page's
        (``XLA_ON_DEMAND_BATCH``); the plain graph always past ``XLA_MAX_LENGTH``."""
        if T > XLA_MAX_LENGTH:
            return self._plain
        if self._queue is None or (B, T) in self._compiled:
            return self._forward
        if self._prepare and B <= XLA_ON_DEMAND_BATCH:  # (until then, the first request is being answered)
            self._queue.put((B, T))
        return self._plain

    def padded_shape(self, B: int, T: int, max_positions: int) -> tuple[int, int]:
        """The (B, T) bucket that inputs of shape (B, T) are padded to."""
        return bucket(B, BATCH_BUCKETS), min(bucket(T, LENGTH_BUCKETS), max_positions)

    def uses_xla(self, B: int, T: int) -> bool:
        """Whether a call padded to bucket (B, T) runs XLA's program now (else the plain graph)."""
        return T <= XLA_MAX_LENGTH and (self._queue is None or (B, T) in self._compiled)

    def __call__(self, ids: np.ndarray, mask: np.ndarray, types: np.ndarray, max_positions: int) -> dict:
        """The graph's outputs as NumPy, for inputs (B, T) padded to their bucket (at most
        ``max_positions`` long): the caller cuts them back to (B, T)."""
        B, T = ids.shape
        Bp, Tp = self.padded_shape(B, T, max_positions)
        pad = ((0, Bp - B), (0, Tp - T))
        out = self._program(Bp, Tp)(*(tf.constant(np.pad(a, pad)) for a in (ids, mask, types)))
        return {k: v.numpy() for k, v in out.items()}
