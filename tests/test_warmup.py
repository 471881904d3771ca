"""The server's start-up warm-up (``ui/warmup.py``) and BERT answering without waiting for
XLA (``BertEncoder.serve``)."""

import dataclasses
import json
import os
import subprocess
import sys
import time

import numpy as np

from lab.models.bert import BertConfig, BertEncoder, random_weights
from lab.models.bert_serving import XLA_MAX_LENGTH, XLA_ON_DEMAND_BATCH
from tests.conftest import ROOT


def _batch():
    ids = np.array([[2, 10, 11, 12, 3, 0, 0], [2, 13, 14, 15, 16, 17, 3]], np.int32)  # bucket (2, 8)
    return ids, (ids > 0).astype(np.int32)


def _wait_compiled(encoder, buckets, timeout_s=180):
    deadline = time.monotonic() + timeout_s
    while not set(buckets) <= encoder.compiled:
        assert time.monotonic() < deadline, f"not compiled in {timeout_s} s: {set(buckets) - encoder.compiled}"
        time.sleep(0.05)


def test_serve_answers_a_new_bucket_from_the_plain_graph_then_from_its_compiled_program():
    config = BertConfig.tiny()
    weights = random_weights(config, seed=1)
    reference = BertEncoder(config, weights)(*_batch())  # not serving: every call this short on XLA
    encoder = BertEncoder(config, weights)
    assert not encoder.serving
    encoder.serve([(1, 16)])
    assert encoder.serving
    plain = encoder(*_batch())  # bucket (2, 8) has no program yet: the plain graph answers
    _wait_compiled(encoder, [(1, 16), (2, 8)])  # asked for at serve, and the one just used
    compiled = encoder(*_batch())
    for out in (plain, compiled):
        np.testing.assert_allclose(out.hidden_states, reference.hidden_states, atol=1e-5)
        np.testing.assert_allclose(out.attentions.sum(-1), 1.0, atol=1e-5)
        assert (out.attentions[:, 0, :, :, 5:] == 0.0).all()  # padded keys: exactly 0 on both paths
    np.testing.assert_array_equal(compiled.hidden_states, reference.hidden_states)  # the same program


def test_inputs_past_the_xla_limit_run_on_the_plain_graph_and_are_never_compiled():
    config = dataclasses.replace(BertConfig.tiny(), max_positions=XLA_MAX_LENGTH + 64)
    weights = random_weights(config, seed=2)
    T, pad = XLA_MAX_LENGTH + 20, 30  # bucket (2, XLA_MAX_LENGTH + 64); sentence B padded
    ids = np.random.default_rng(0).integers(5, config.vocab_size, (2, T)).astype(np.int32)
    ids[1, T - pad:] = 0
    mask = (ids > 0).astype(np.int32)
    plain_only = BertEncoder(config, weights)  # not serving: XLA up to the limit, not past it
    assert plain_only.forward._program(2, XLA_MAX_LENGTH) is plain_only.forward._forward
    assert plain_only.forward._program(2, XLA_MAX_LENGTH + 64) is plain_only.forward._plain
    encoder = BertEncoder(config, weights)
    encoder.serve([(2, XLA_MAX_LENGTH + 64)])  # asked for, but past the limit
    long = encoder(ids, mask)
    time.sleep(0.5)  # time for the worker to take a queued bucket, had there been one
    assert encoder.compiled == frozenset() and encoder.forward._queue.empty()
    np.testing.assert_allclose(long.attentions.sum(-1)[:, 0], 1.0, atol=1e-5)
    assert (long.attentions[:, 1, :, :, T - pad:] == 0.0).all()  # padded keys: exactly 0
    # sentence B's real tokens (under the limit) on XLA: the same vectors as on the plain graph
    alone = plain_only(ids[1:, : T - pad], mask[1:, : T - pad])
    np.testing.assert_allclose(long.hidden_states[:, 1, : T - pad], alone.hidden_states[:, 0], atol=1e-5)


def test_a_serving_encoder_compiles_on_demand_only_the_pages_batch_sizes():
    config = BertConfig.tiny()
    weights = random_weights(config, seed=3)
    ids, mask = _batch()
    big_ids, big_mask = np.tile(ids, (2, 1)), np.tile(mask, (2, 1))  # 4 rows: bucket (4, 8)
    assert XLA_ON_DEMAND_BATCH < 4
    reference = BertEncoder(config, weights)(big_ids, big_mask)  # not serving: XLA
    encoder = BertEncoder(config, weights)
    encoder.serve([(1, 16)])
    _wait_compiled(encoder, [(1, 16)])
    big = encoder(big_ids, big_mask)  # a corpus-sized batch: the plain graph, nothing queued
    encoder(ids, mask)  # a page's batch (2, 8): queued, then compiled
    _wait_compiled(encoder, [(2, 8)])
    time.sleep(0.5)  # time for the worker to take another queued bucket, had there been one
    assert encoder.compiled == {(1, 16), (2, 8)} and encoder.forward._queue.empty()
    np.testing.assert_allclose(big.hidden_states, reference.hidden_states, atol=1e-5)
    assert (big.attentions[:, 0, :, :, 5:] == 0.0).all()  # padded keys: exactly 0
    np.testing.assert_allclose(big.hidden_states[:, 2:], big.hidden_states[:, :2], atol=1e-6)  # same rows, same vectors


def test_the_warm_up_loads_both_models_serves_bert_and_freezes_the_heap():
    code = """
import gc, json
from lab import sources
from ui import model_cache
from ui.server import warmup
warmup.start()
warmup.first_page_done()  # as app.py says after its first run
finished = warmup.done.wait(600)
answering = warmup.status()
ready = warmup.ready.wait(600)
bert, bert_error = model_cache.load("bert", sources.EMBEDDED)  # the pages' cache: no second load
elmo, elmo_error = model_cache.load("elmo", sources.EMBEDDED)
from lab.models.bert_serving import COMMON_BUCKETS
print(json.dumps({"finished": finished, "errors": [bert_error, elmo_error], "serving": bert.encoder.serving,
                  "frozen": gc.get_freeze_count(), "tracked": len(gc.get_objects()), "answering": answering,
                  "ready": ready, "status": warmup.status(),
                  "compiled": set(COMMON_BUCKETS) <= bert.encoder.compiled,
                  "queued": bert.encoder.forward._queue.unfinished_tasks}))
"""
    env = dict(os.environ, LAB_WARMUP="1", LAB_BERT_SOURCE="", LAB_ELMO_SOURCE="", TF_CPP_MIN_LOG_LEVEL="2")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    assert facts["finished"] and facts["errors"] == [None, None] and facts["serving"]
    from ui.server.warmup import ANSWERING_LINE, READY_LINE

    # the console (and the benchmarks, and an administrator) learn first that the server
    # answers, then that it is warm: every common BERT length compiled, nothing left queued
    assert facts["answering"] in ("answering", "ready") and ANSWERING_LINE in done.stderr
    assert facts["ready"] and facts["status"] == "ready" and READY_LINE in done.stderr
    assert done.stderr.index(ANSWERING_LINE) < done.stderr.index(READY_LINE)
    assert facts["compiled"] and facts["queued"] == 0, facts
    # what keeps each of Streamlit's collections cheap: the collector walks only what is new
    assert facts["frozen"] > 10 * facts["tracked"], facts


def test_lab_warmup_0_turns_it_off(monkeypatch):
    from ui.server import warmup

    monkeypatch.setenv("LAB_WARMUP", "0")
    assert not warmup.enabled()
    monkeypatch.setenv("LAB_WARMUP", "1")
    assert warmup.enabled()


def test_streamlit_keeps_tensorflow_kernels_between_runs(monkeypatch):
    """Streamlit's clean-up after a run calls ``keras.backend.clear_session()`` (importing
    TensorFlow imports Keras), which throws TensorFlow's kernels away; the app stops that."""
    import keras
    from streamlit.runtime.scriptrunner import script_runner

    from ui.server import warmup

    cleared = []
    monkeypatch.setattr(keras.backend, "clear_session", lambda *a, **k: cleared.append(1))
    current = script_runner._clean_problem_modules  # already replaced if app.py ran in this process
    monkeypatch.setattr(script_runner, "_clean_problem_modules", getattr(current, "streamlit_original", current))
    script_runner._clean_problem_modules()
    assert cleared == [1]  # Streamlit's own clean-up: the reason for the fix
    warmup.keep_kernel_cache()
    warmup.keep_kernel_cache()  # idempotent
    script_runner._clean_problem_modules()
    assert cleared == [1]


def test_before_its_graph_is_traced_a_serving_encoder_answers_eagerly():
    """``serve(())`` (a server before its first request): no trace and no compilation is
    waited for or started; ``serve(buckets)`` then traces and compiles in the background."""
    config = BertConfig.tiny()
    weights = random_weights(config, seed=1)
    reference = BertEncoder(config, weights)(*_batch())
    encoder = BertEncoder(config, weights)
    encoder.serve(())
    eager = encoder(*_batch())
    time.sleep(0.5)
    assert not encoder.forward._plain.traced and not encoder.compiled  # nothing done in the background yet
    np.testing.assert_allclose(eager.hidden_states, reference.hidden_states, atol=1e-5)
    np.testing.assert_allclose(eager.attentions, reference.attentions, atol=1e-6)
    assert (eager.attentions[:, 0, :, :, 5:] == 0.0).all()  # padded keys: exactly 0 eagerly too
    encoder.serve([(2, 8)])
    _wait_compiled(encoder, [(2, 8)])
    assert encoder.forward._plain.traced  # traced before the compilation, by the same thread
    np.testing.assert_array_equal(encoder(*_batch()).hidden_states, reference.hidden_states)


def test_a_graph_is_traced_with_the_first_eager_calls_arguments_and_run_once():
    """``EagerUntilTraced.trace`` runs the graph once with what it answered eagerly first (so
    TensorFlow's first-run optimization is not left to a later request); without such a
    call it only traces."""
    import tensorflow as tf

    from lab.serving import EagerUntilTraced

    runs = tf.Variable(0)

    def body(x):
        runs.assign_add(1)
        return x * 2

    spec = [tf.TensorSpec([None], tf.int32)]
    fn = EagerUntilTraced(tf.function(body, input_signature=spec, autograph=False))
    fn.eager()
    assert fn([1, 2]).numpy().tolist() == [2, 4] and int(runs.numpy()) == 1  # eagerly
    fn.trace()
    assert fn.traced and int(runs.numpy()) == 2  # traced and run once with [1, 2]
    assert fn([3]).numpy().tolist() == [6] and int(runs.numpy()) == 3 and fn.fn.experimental_get_tracing_count() == 1
    untouched = EagerUntilTraced(tf.function(body, input_signature=spec, autograph=False))
    untouched.eager()
    untouched.trace()
    assert untouched.traced and int(runs.numpy()) == 3  # nothing to run it with: traced only
