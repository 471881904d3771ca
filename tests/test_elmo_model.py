"""The biLM on the tiny config: shapes, invariants, modes, the scalar mix, the loaders."""

import json

import numpy as np
import pytest
import tensorflow as tf

from lab.models.elmo import ElmoConfig, ElmoModel, char_ids
from lab.vectors import INPUT_LAYER, LayerVectors

from lab.models.elmo_io import (
    ElmoRunner,
    HubElmoRunner,
    export_saved_model,
    load_allennlp,
    load_elmo,
    repeat_runs,
    save_allennlp,
)
from lab.analysis import context_only, scalar_mix
from lab.sources import SourceError

SENTENCES = [
    ["The", "bank", "raised", "its", "interest", "rates", "."],
    ["We", "sat", "on", "the", "bank", "of", "the", "river", "."],
    ["bank"],
]


@pytest.fixture(scope="module")
def tiny():
    model = ElmoModel(ElmoConfig.tiny(), seed=3)
    return ElmoRunner(model, "tiny", "tiny random biLM")


def test_output_shapes(tiny):
    out = tiny.run(SENTENCES)
    B, T, P, C = 3, 9, 16, 32
    assert isinstance(out, LayerVectors)
    assert out.elmo.word_emb.shape == (B, T, P)
    for a in (out.layer("lstm_outputs1"), out.layer("lstm_outputs2"), out.elmo.elmo):
        assert a.shape == (B, T, C) and a.dtype == np.float32
    assert out.elmo.default.shape == (B, C)
    assert out.layers.shape == (3, B, T, C)
    assert out.layer_names == [INPUT_LAYER, "lstm_outputs1", "lstm_outputs2"]
    assert out.lengths.tolist() == [7, 9, 1]
    assert out.mask.sum(axis=1).tolist() == [7, 9, 1]
    assert out.tokens == SENTENCES


def test_padding_positions_are_zero_and_default_is_mean_of_real_tokens(tiny):
    out = tiny.run(SENTENCES)
    assert (out.layers[:, 0, 7:] == 0).all() and (out.elmo.elmo[2, 1:] == 0).all()
    assert np.allclose(out.elmo.default[0], out.elmo.elmo[0, :7].mean(axis=0), atol=1e-6)
    assert np.allclose(out.layers[0], np.concatenate([out.elmo.word_emb, out.elmo.word_emb], -1))


def test_word_emb_is_context_free_and_lstm_layers_are_not(tiny):
    out = tiny.run(SENTENCES)
    a, b, c = out.layers[:, 0, 1], out.layers[:, 1, 4], out.layers[:, 2, 0]  # "bank" x3
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[0], c[0])
    for layer in (1, 2):
        assert np.abs(a[layer] - b[layer]).max() > 1e-3
        assert np.abs(a[layer] - c[layer]).max() > 1e-3


def v3(out, name: str) -> np.ndarray:
    """An ELMo v3 output of a run by its key: a layer, or one of the ELMo-only parts."""
    if name in out.layer_names:
        return out.layer(name)
    return {"mask": out.mask, "sequence_len": out.lengths}.get(name, getattr(out.elmo, name, None))


def test_padding_in_a_batch_does_not_change_a_sentence(tiny):
    alone = tiny.run([SENTENCES[0]])
    batched = tiny.run([["a"] * 30, SENTENCES[0], ["x"]])
    for name in ("word_emb", "lstm_outputs1", "lstm_outputs2", "elmo"):
        diff = np.abs(v3(alone, name)[0] - v3(batched, name)[1, :7]).max()
        assert diff <= 1e-5, name
    assert np.abs(alone.elmo.default[0] - batched.elmo.default[1]).max() <= 1e-5


def test_stateless_runs_are_identical(tiny):
    first, second = tiny.run(SENTENCES), tiny.run(SENTENCES)
    assert np.array_equal(first.layers, second.layers)


def test_empty_sentence_gives_zeros(tiny):
    out = tiny.run([[], ["bank"]])
    assert out.lengths.tolist() == [0, 1]
    assert (out.elmo.default[0] == 0).all() and (out.layers[:, 0] == 0).all()


def test_stateful_runs_drift_then_settle():
    runner = load_elmo("embedded")  # the trained ELMo-mini: a state that settles is a trained model's property
    runner.reset_state()
    sentence = [["The", "bank", "of", "the", "river", "was", "muddy", "."]]
    stateless = runner.run(sentence).layer("lstm_outputs2")
    runs = [runner.run(sentence, stateful=True).layer("lstm_outputs2") for _ in range(8)]
    assert np.array_equal(runs[0], stateless)  # the first stateful run starts from zeros
    steps = [float(np.abs(runs[i + 1] - runs[i]).max()) for i in range(len(runs) - 1)]
    print("stateful change between consecutive runs:", [f"{s:.2e}" for s in steps])
    assert steps[0] > 1e-3  # the carried state moves the vectors
    assert steps[-1] < steps[0] / 5  # and they settle
    runner.reset_state()
    assert np.array_equal(runner.run(sentence, stateful=True).layer("lstm_outputs2"), stateless)


def test_stateful_state_is_per_row(tiny):
    tiny.reset_state()
    tiny.run([SENTENCES[0], SENTENCES[1]], stateful=True)
    second = tiny.run([SENTENCES[2]], stateful=True)  # row 0 carries the state of row 0
    tiny.reset_state()
    tiny.run([SENTENCES[0]], stateful=True)
    again = tiny.run([SENTENCES[2]], stateful=True)
    tiny.reset_state()
    assert np.allclose(second.layer("lstm_outputs2"), again.layer("lstm_outputs2"), atol=1e-6)
    assert not np.allclose(second.layer("lstm_outputs2"), tiny.run([SENTENCES[2]]).layer("lstm_outputs2"), atol=1e-4)


def test_dropout_runs_differ_and_keep_word_emb(tiny):
    a, b = tiny.run(SENTENCES, dropout=0.3), tiny.run(SENTENCES, dropout=0.3)
    assert np.abs(a.layer("lstm_outputs2") - b.layer("lstm_outputs2")).max() > 1e-3
    assert np.array_equal(a.elmo.word_emb, b.elmo.word_emb)
    with pytest.raises(ValueError):
        tiny.run(SENTENCES, dropout=1.0)


def test_repeat_runs_match_runs_one_at_a_time(tiny):
    """The page's "Same sentence, same vectors?": stateless and dropout runs go as one batch
    of copies; each copy is one run (the norm a single run gives, or its own dropout mask)."""
    sentence = SENTENCES[1]

    def norm(out):
        return float(np.linalg.norm(out.layer("lstm_outputs2")[0, : len(sentence)]))

    res = repeat_runs(tiny, sentence, 5, 0.3)
    assert sorted(res) == ["dropout", "stateful", "stateless"] and all(v.shape == (5,) for v in res.values())
    single = norm(tiny.run([sentence]))
    assert np.all(res["stateless"] == res["stateless"][0])
    np.testing.assert_allclose(res["stateless"], single, rtol=1e-6)
    tiny.reset_state()
    one_by_one = [norm(tiny.run([sentence], stateful=True)) for _ in range(5)]
    tiny.reset_state()
    np.testing.assert_allclose(res["stateful"], one_by_one, rtol=1e-6)
    assert res["stateful"][0] == pytest.approx(single, rel=1e-6) and len(set(res["stateful"].round(6))) > 1
    assert len(set(res["dropout"].round(6))) == 5  # every copy drew its own mask


def test_forward_pass_is_traced_once(tiny):
    tiny.run(SENTENCES)
    before = tiny._fn.experimental_get_tracing_count()
    for batch in ([["a"]], [["a", "b", "c"]] * 5, SENTENCES, [["word"] * 40, ["x"]]):
        tiny.run(batch)
    assert tiny._fn.experimental_get_tracing_count() == before == 1


def test_scalar_mix_numpy_matches_the_model(tiny):
    layers = np.arange(3 * 2 * 4 * 5, dtype=np.float32).reshape(3, 2, 4, 5)
    np.testing.assert_allclose(scalar_mix(layers, [0, 0, 0]), layers.mean(0), rtol=1e-6)
    w = np.array([1.0, -2.0, 0.5])
    s = np.exp(w) / np.exp(w).sum()
    np.testing.assert_allclose(scalar_mix(layers, w, 2.0), 2.0 * np.tensordot(s, layers, 1), rtol=1e-5)
    np.testing.assert_allclose(scalar_mix(layers, [0, 0, 50.0]), layers[2], rtol=1e-5)
    with pytest.raises(ValueError):
        scalar_mix(layers, [1.0, 2.0])
    out = tiny.run(SENTENCES)  # the model's elmo is the uniform mix (gamma 1)
    np.testing.assert_allclose(scalar_mix(out.layers, [0, 0, 0]), out.elmo.elmo, atol=1e-6)


def test_options_json_round_trip(tmp_path):
    config = ElmoConfig.tiny()
    (tmp_path / "options.json").write_text(json.dumps(config.to_options_json()))
    assert ElmoConfig.from_options_json(tmp_path / "options.json") == config
    assert ElmoConfig.from_options_json(config.to_options_json()).n_filters == 124


def test_allennlp_save_and_load_round_trip(tiny, tmp_path):
    tiny.model.mix_weights.assign([0.5, -0.5, 1.0])
    tiny.model.mix_gamma.assign(1.5)
    tiny.model.mix_learned = True
    try:
        save_allennlp(tiny.model, tmp_path)
        runner = load_elmo(str(tmp_path))
        assert isinstance(runner, ElmoRunner) and runner.source == str(tmp_path)
        weights, gamma = runner.mix_weights
        np.testing.assert_allclose(weights, [0.5, -0.5, 1.0])
        assert gamma == 1.5
        np.testing.assert_array_equal(runner.run(SENTENCES).elmo.elmo, tiny.run(SENTENCES).elmo.elmo)
        hub_runner = load_elmo(str(export_saved_model(tiny.model, tmp_path / "saved_model")))
        weights, gamma = hub_runner.mix_weights  # read back from the SavedModel's variables
        np.testing.assert_allclose(weights, [0.5, -0.5, 1.0])
        assert gamma == 1.5
        np.testing.assert_allclose(hub_runner.run(SENTENCES).elmo.elmo, tiny.run(SENTENCES).elmo.elmo, atol=1e-5)
    finally:
        tiny.model.mix_weights.assign([0.0, 0.0, 0.0])
        tiny.model.mix_gamma.assign(1.0)
        tiny.model.mix_learned = False


def test_hub_path_on_an_exported_saved_model(tiny, tmp_path):
    """The TF Hub code path, offline: export the tiny model with ELMo v3 signatures and
    load it back through load_elmo like any hub handle."""
    path = export_saved_model(tiny.model, tmp_path / "elmo_hub")
    hub_runner = load_elmo(str(path))
    assert isinstance(hub_runner, HubElmoRunner) and not hub_runner.supports_state
    assert hub_runner.label == f"TF Hub ELMo: {path}"
    keras_out, hub_out = tiny.run(SENTENCES), hub_runner.run(SENTENCES)
    for name in ("word_emb", "lstm_outputs1", "lstm_outputs2", "elmo", "default", "mask", "sequence_len"):
        np.testing.assert_allclose(v3(hub_out, name), v3(keras_out, name), atol=1e-5, err_msg=name)
    info = hub_runner.info()
    assert info["signatures"] == ["default", "tokens"]
    assert {"word_emb", "lstm_outputs1", "lstm_outputs2", "elmo", "default"} <= set(info["output_keys"])
    assert info["outputs"]["elmo"] == "float32 (None, None, 32)"
    assert info["parameters"] == tiny.model.num_parameters() + 3 + 1  # + mix weights and gamma
    assert hub_runner.mix_weights is None  # the tiny model's mix was not learned
    with pytest.raises(ValueError):
        hub_runner.run(SENTENCES, stateful=True)


def test_hub_default_signature_splits_on_spaces(tiny, tmp_path):
    import tensorflow_hub as hub

    module = hub.load(str(export_saved_model(tiny.model, tmp_path / "m")))
    text = ["The bank raised its interest rates .", "bank"]
    out = module.signatures["default"](tf.constant(text))
    expected = tiny.run([t.split(" ") for t in text])
    np.testing.assert_allclose(out["elmo"].numpy()[:, :7], expected.elmo.elmo, atol=1e-5)
    np.testing.assert_allclose(out["default"].numpy(), expected.elmo.default, atol=1e-5)
    assert out["sequence_len"].numpy().tolist() == [7, 1]


def test_char_ids_of_padding_tokens_do_not_matter(tiny):
    ids = char_ids(SENTENCES)
    junk = ids.copy()
    junk[2, 1:] = 77  # garbage past the end of sentence 2
    lens = np.array([7, 9, 1], np.int32)
    c = tiny.model.config
    zc = np.zeros((2, 2, 3, c.lstm_dim), np.float32)
    zm = np.zeros((2, 2, 3, c.projection_dim), np.float32)
    a, _ = tiny._fn(ids, lens, zc, zm)
    b, _ = tiny._fn(junk, lens, zc, zm)
    assert np.array_equal(a["lstm_outputs2"].numpy(), b["lstm_outputs2"].numpy())


def test_load_elmo_errors_are_clear(tmp_path):
    with pytest.raises(SourceError, match="not found"):
        load_elmo(str(tmp_path / "nowhere"))
    with pytest.raises(SourceError, match="neither saved_model.pb"):
        load_elmo(str(tmp_path))
    (tmp_path / "options.json").write_text(json.dumps(ElmoConfig.tiny().to_options_json()))
    import h5py

    with h5py.File(tmp_path / "weights.hdf5", "w") as f:
        f.create_dataset("char_embed", data=np.zeros((261, 4), np.float32))
    with pytest.raises(SourceError, match="lacks the dataset"):
        load_elmo(str(tmp_path))
    (tmp_path / "weights.hdf5").write_text("not hdf5")
    with pytest.raises(SourceError, match="Could not read"):
        load_elmo(str(tmp_path))


def test_weights_shape_mismatch_is_reported(tiny, tmp_path):
    save_allennlp(tiny.model, tmp_path)
    options = ElmoConfig.tiny().to_options_json()
    options["lstm"]["dim"] = 32
    with pytest.raises(SourceError, match="the options want"):
        load_allennlp(options, tmp_path / "weights.hdf5")


def test_context_only_is_the_states_next_to_the_word(tiny, tmp_path):
    """The context-only view at word k is the forward LM's state after reading the words
    before k and the backward LM's state after reading the words after k: the same as
    running the prefix and the suffix alone, and unchanged when word k is replaced."""
    tokens = SENTENCES[1]
    k, n = 4, len(SENTENCES[1])  # "bank"
    swapped = tokens[:k] + ["xylophone"] + tokens[k + 1 :]
    out = tiny.run([tokens, swapped, tokens[:k], tokens[k + 1 :]])
    half = out.layer("lstm_outputs1").shape[-1] // 2
    for name in ("lstm_outputs1", "lstm_outputs2"):
        layer = out.layer(name)
        view = context_only(layer, out.lengths)
        # the prefix's last forward state, and the suffix's first backward state
        np.testing.assert_allclose(view[0, k, :half], layer[2, k - 1, :half], atol=1e-6)
        np.testing.assert_allclose(view[0, k, half:], layer[3, 0, half:], atol=1e-6)
        np.testing.assert_allclose(view[1, k], view[0, k], atol=1e-6)  # the word itself is left out
        assert not np.allclose(layer[1, k], layer[0, k])  # while its standard output changes
        assert (view[0, 0, :half] == 0).all() and (view[0, n - 1, half:] == 0).all()
    hub_out = load_elmo(str(export_saved_model(tiny.model, tmp_path / "hub"))).run(SENTENCES)
    keras_out = tiny.run(SENTENCES)
    for name in ("lstm_outputs1", "lstm_outputs2"):
        np.testing.assert_allclose(context_only(hub_out.layer(name), hub_out.lengths),
                                   context_only(keras_out.layer(name), keras_out.lengths), atol=1e-5)
