"""The ELMo layers page, headless with AppTest: values follow clicks, sliders and sources."""

import json

import numpy as np
import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest

from lab import analysis, figures, senses, views
from lab.models.elmo import ElmoConfig, ElmoModel
from lab.models.elmo_io import export_saved_model, load_elmo
from lab.sources import embedded_metrics
from lab.analysis import context_only, scalar_mix
from lab.tokenize import split_words
from lab.vectors import INPUT_LAYER
from tests.conftest import ROOT
from tests.specs import (OLD_INPUT_NAMES, chart, chart_keyed, click_cell, grid_formats, printed, tables, ticks,
                         use_source, values, vectors_file)

A = "The central bank raised interest rates yesterday."
B = "A fisherman rested on the river bank at sunset."
NAMES = [INPUT_LAYER, "lstm_outputs1", "lstm_outputs2", "elmo (mix)", "context-only 1", "context-only 2"]


@pytest.fixture(scope="module")
def elmo():
    return load_elmo("embedded")


@pytest.fixture(scope="module")
def defaults_out(elmo):
    return elmo.run([split_words(A), split_words(B)])


def run_page(**params) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages/elmo.py"), default_timeout=300)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def runs_table(at):
    """The determinism panel's table: one row per mode, one column per run."""
    return next(d.value for d in at.dataframe if "stateless" in list(d.value.index))


def curve(at) -> np.ndarray:
    df = next(t for t in tables(at) if list(t.index)[:1] == ["cosine"])
    assert list(df.columns) == NAMES
    return df.iloc[0].to_numpy(float)


def stack_of(out, weights, gamma) -> np.ndarray:
    """The page's layers (NAMES): ELMo's three, the mix and the two context-only views, (6, B, T, C)."""
    context = [context_only(out.layers[j], out.lengths) for j in (1, 2)]  # lstm_outputs1, lstm_outputs2
    return np.concatenate([out.layers, scalar_mix(out.layers, weights, gamma)[None], np.stack(context)])


def expected(out, ia, ib, weights, gamma):
    stack = stack_of(out, weights, gamma)
    return analysis.layerwise_cosine(stack[:, 0, ia], stack[:, 1, ib])


def mix_of(elmo):
    learned = elmo.mix_weights
    return (np.round(learned[0], 3), round(learned[1], 3)) if learned is not None else (np.zeros(3), 1.0)


def test_default_view_and_selecting_other_words(elmo, defaults_out):
    at = run_page()
    assert not at.exception
    assert [p.value for p in at.pills] == [2, 6]  # the two "bank"s
    w, g = mix_of(elmo)
    np.testing.assert_allclose(curve(at), expected(defaults_out, 2, 6, w, g), atol=1e-4)
    assert curve(at)[0] == pytest.approx(1.0, abs=1e-5)  # the input layer is context-free
    at.pills[0].set_value(4).run()  # "interest"
    at.pills[1].set_value(5).run()  # "river"
    np.testing.assert_allclose(curve(at), expected(defaults_out, 4, 5, w, g), atol=1e-4)
    assert at.query_params["elmo_word_a"] == "4:interest" and at.query_params["elmo_word_b"] == "5:river"
    assert any("ELMo-mini" in c.value for c in at.caption)


def test_the_vectors_download_loads_without_pickle(downloads, defaults_out):
    """Every array of the download loads with plain np.load and equals lab's run; the
    shorter sentence's row ends in padding ("" tokens, mask 0)."""
    z = vectors_file(downloads(run_page(), "elmo_npz"), defaults_out)
    assert z["tokens"][0].tolist() == split_words(A) + ["", ""]
    assert z["layer_names"][0] == INPUT_LAYER


def test_another_word_moves_the_a_by_b_outline_and_leaves_the_map_as_it_was():
    at = run_page()

    def cross_map() -> dict:
        return next(json.loads(c.proto.spec) for c in at.get("plotly_chart")
                    if "Every word of A against" in json.dumps(json.loads(c.proto.spec)["layout"]["title"]))

    def on_cell(row: int, col: int) -> bool:
        box = figures.outline_box(fig, row, col)
        text = at.get_by_key("elmo_ab_outline").markdown[0].value
        return f"top: {box['top']:.2f}px" in text and f"* {box['x0']:.6f})" in text

    spec = cross_map()
    fig = go.Figure(spec)
    assert on_cell(2, 6) and not on_cell(2, 5)  # the two "bank"s
    at.pills[1].set_value(5).run()  # "river"
    assert cross_map() == spec and on_cell(2, 5)  # the same figure: the browser keeps the drawn map
    at.pills[0].set_value(4).run()  # "interest"
    assert cross_map() == spec and on_cell(4, 5)


def test_the_embedded_model_states_how_well_it_separates_senses():
    at = run_page()
    metrics = embedded_metrics()
    by_layer = metrics["sense_pair_auc"]["by_layer"]
    best = max(by_layer["lstm_outputs1"], by_layer["lstm_outputs2"], by_layer["elmo"])
    (note,) = [i.value for i in at.info if "ROC AUC" in i.value]
    assert f"ROC AUC {best:.2f}" in note and "72 same- or different-sense" in note
    assert ("only weakly" in note) == (best < senses.SENSE_AUC_TARGET)
    static = metrics.get("stage_options", {}).get("word_table") == "static"
    assert ("context-free word vectors from MiniLM's input embeddings" in note) == static
    assert f"Its context-only view reaches {senses.best_context_auc(by_layer):.2f}" in note


def bar_values(at) -> dict[str, float]:
    """The ELMo bar chart's value at each layer, by the layer's name."""
    bars = [t for t in chart_keyed(at, "elmo_bars")["data"] if t["type"] == "bar"]
    return {n: float(y) for t in bars for n, y in zip(t["customdata"], values(t["y"]))}


@pytest.mark.parametrize("a, b, words", [(A, B, "the two “bank”s"),
                                         ("He swung the bat and hit the ball.", "A bat flew out of the cave at dusk.",
                                          "the two “bat”s")])
def test_the_note_quotes_the_plotted_default_pair(a, b, words):
    """The note's cosines are the chart's for the words the page selects first, at the
    layers where the model scored best on the sense pairs: whatever the sentences."""
    at = run_page(a=a, b=b)
    (note,) = [i.value for i in at.info if "ROC AUC" in i.value]
    by_layer = embedded_metrics()["sense_pair_auc"]["by_layer"]
    std = views.RECORDED_NAMES[senses.best_layer(by_layer, senses.CONTEXTUAL)]
    ctx = views.RECORDED_NAMES[senses.best_layer(by_layer, senses.CONTEXT)]
    plotted = bar_values(at)
    assert f"{words} have cosine {plotted[std]:.3f} at `{std}`" in note
    assert f"and {plotted[ctx]:.3f} at `{ctx}`, its best context-only view" in note
    quiz = run_page(a=a, b=b, quiz="1")  # the cosines would answer the quiz: the note leaves them out
    (note,) = [i.value for i in quiz.info if "ROC AUC" in i.value]
    assert "have cosine" not in note


def test_the_bar_legend_names_every_kind_of_bar_and_the_input_layer_its_name():
    at = run_page()
    spec = chart_keyed(at, "elmo_bars")
    assert spec["layout"]["showlegend"]
    named = {t["name"]: list(t["customdata"]) for t in spec["data"] if t["type"] == "bar"}
    assert named == {views.LAYER_KINDS[0]: NAMES[:4], views.LAYER_KINDS[1]: list(views.CONTEXT_LAYERS)}
    assert ticks(spec)[0] == INPUT_LAYER and INPUT_LAYER in ticks(chart_keyed(at, "elmo_lt"))
    for c in at.get("plotly_chart"):
        assert not OLD_INPUT_NAMES & set(ticks(json.loads(c.proto.spec))), c.key
    assert f"w · {INPUT_LAYER}" in [s.label for s in at.slider]
    assert any(f"`{INPUT_LAYER}` sees only the characters" in c.value for c in at.caption)


def test_mix_slider_changes_elmo_similarity_to_the_hand_computed_value(defaults_out):
    at = run_page()
    sliders = {s.label: s for s in at.slider}
    sliders["w · lstm_outputs2"].set_value(3.0).run()
    sliders = {s.label: s for s in at.slider}
    w = np.array([sliders[f"w · {n}"].value for n in NAMES[:3]], float)
    g = sliders["γ (scale)"].value
    assert w[2] == 3.0
    # by hand: softmax weights, then the weighted sum of the three layers
    p = np.exp(w) / np.exp(w).sum()
    layers = defaults_out.layers  # (3, B, T, C)
    mixed_a = g * sum(p[j] * layers[j, 0, 2] for j in range(3))
    mixed_b = g * sum(p[j] * layers[j, 1, 6] for j in range(3))
    assert curve(at)[3] == pytest.approx(analysis.cosine(mixed_a, mixed_b), abs=1e-4)
    at.button(key="elmo_top").click().run()  # top layer only: elmo equals lstm_outputs2
    assert curve(at)[3] == pytest.approx(curve(at)[2], abs=1e-4)
    at.button(key="elmo_uniform").click().run()
    assert [s.value for s in at.slider][:4] == [0.0, 0.0, 0.0, 1.0]


def test_determinism_panel_runs_only_when_open():
    at = run_page()
    assert "Run it: stateless, stateful and with dropout" in [e.label for e in at.expander]
    assert not any("stateless" in list(d.value.index) for d in at.dataframe)  # closed: nothing run
    assert not any(s.label == "Runs" for s in at.slider)
    at = run_page(elmo_repeats="1")  # open (a shared link keeps it open)
    runs = runs_table(at)
    assert list(runs.columns) == [f"run {i}" for i in range(1, 7)]
    stateless, stateful, dropout = (runs.loc[m].to_numpy(float) for m in ("stateless", "stateful", "dropout"))
    assert np.all(stateless == stateless[0])  # identical, run after run
    assert len(set(np.round(dropout, 6))) == len(dropout)  # every dropout run differs
    assert stateful[0] == pytest.approx(stateless[0], abs=1e-5)  # from a zero state, run 1 is stateless
    assert abs(stateful[1] - stateful[0]) > abs(stateful[-1] - stateful[-2])  # drifts, then settles
    axis = chart(at, "run 6 times")["layout"]["xaxis"]
    assert axis["title"]["text"] == "run" and axis["ticktext"] == list(runs.columns)  # its steps are runs
    next(s for s in at.slider if s.label == "Runs").set_value(3).run()
    again = runs_table(at)
    assert list(again.columns) == ["run 1", "run 2", "run 3"]
    np.testing.assert_allclose(again.loc["stateful"].to_numpy(float), stateful[:3], atol=1e-6)


def test_each_bar_beside_its_baseline_and_the_mix_s_follows_the_weights(elmo, defaults_out, small_corpus):
    at = run_page()
    base = small_corpus.baseline(elmo)
    w, _ = mix_of(elmo)
    mix = analysis.mix_baseline(base.grams, w)
    want = np.concatenate([base.values, [mix], [base.views[n] for n in NAMES[4:]]])
    df = next(t for t in tables(at) if list(t.index)[:1] == ["cosine"])
    assert list(df.index) == ["cosine", "baseline", "adjusted"] and list(df.columns) == NAMES
    np.testing.assert_allclose(df.loc["baseline"].to_numpy(float), want, atol=1e-4)
    cos = df.loc["cosine"].to_numpy(float)
    np.testing.assert_allclose(df.loc["adjusted"].to_numpy(float), (cos - want) / (1 - want), atol=3e-4)
    (line,) = [t for t in chart(at, "at each layer")["data"] if t["name"] == figures.BASELINE_NAME]
    np.testing.assert_allclose([y for y in values(line["y"]) if np.isfinite(y)][::2], want, atol=1e-6)
    # all the weight on the top layer: the mix's baseline is lstm_outputs2's
    at.button(key="elmo_top").click().run()
    df = next(t for t in tables(at) if list(t.index)[:1] == ["cosine"])
    assert df.loc["baseline", "elmo (mix)"] == pytest.approx(base.values[2], abs=1e-4)
    assert abs(df.loc["baseline", "elmo (mix)"] - round(mix, 4)) > 1e-3  # it moved with the weights


def test_tables_show_the_decimals_the_page_rounded_to():
    # st.table prints every float with four decimals: the runs' norms (rounded to 6) would
    # lose the digits where stateless runs agree and stateful ones drift; the grid prints
    # each number as short as it goes (0.815 under 0.6544)
    normal = run_page(elmo_repeats="1")
    grid = runs_table(normal)
    runs = next(d for d in normal.dataframe if "stateless" in list(d.value.index))
    assert set(grid_formats(runs).values()) == {"%.6f"} and len(grid_formats(runs)) == grid.shape[1]
    cosines = next(d for d in normal.dataframe if list(d.value.index)[:1] == ["cosine"])
    assert set(grid_formats(cosines).values()) == {"%.4f"}
    at = run_page(elmo_repeats="1", proj="1")
    table = next(t for t in at.table if "stateless" in list(t.value.index))
    assert printed(table).loc["stateful"].tolist() == [f"{v:.6f}" for v in grid.loc["stateful"]]
    cosines = next(t for t in at.table if list(t.value.index)[:1] == ["cosine"])
    assert printed(cosines).iloc[0].tolist() == [f"{v:.4f}" for v in curve(run_page())]


def test_the_same_page_runs_a_tf_hub_style_savedmodel(tmp_path):
    path = export_saved_model(ElmoModel(ElmoConfig.tiny(), seed=3), tmp_path / "elmo_hub")
    at = use_source(run_page(elmo_repeats="1"), "elmo", path)
    assert not at.exception and not at.error
    assert any("TF Hub ELMo" in c.value for c in at.caption)
    hub = load_elmo(str(path))
    out = hub.run([split_words(A), split_words(B)])
    w, g = mix_of(hub)
    np.testing.assert_allclose(curve(at), expected(out, 2, 6, w, g), atol=1e-4)
    assert any("only the stateless runs" in i.value for i in at.info)
    assert not any("ROC AUC" in i.value for i in at.info)  # the ELMo-mini note is about ELMo-mini only
    assert list(runs_table(at).index) == ["stateless"]


def test_an_embedded_model_that_cannot_be_loaded_says_so(unloadable_models):
    # the page asks for its model lazily (a stored run can answer first): here there is
    # none, and loading fails, so the page says why and stops, without a traceback
    unloadable_models("ELMo-mini's weights.hdf5 is damaged: reinstall the app.")
    at = run_page()
    assert not at.exception
    assert [e.value for e in at.error] == ["ELMo-mini's weights.hdf5 is damaged: reinstall the app."]
    assert not at.pills and not at.get("plotly_chart")


def test_a_weight_that_is_not_a_number_in_a_link_is_said_and_replaced():
    at = run_page(elmo_w0="nan", elmo_runs="50", elmo_repeats="1")
    assert not at.exception
    w0, runs = at.slider(key="_w_elmo_w0").value, at.slider(key="_w_elmo_runs").value
    assert runs == 6
    notices = [i.value for i in at.info if "The link's" in i.value]
    assert notices == [f"The link's `elmo_w0=nan` cannot be shown in “w · input (layer 0)”: it is not a number; "
                       f"showing {w0} instead.",
                       "The link's `elmo_runs=50` cannot be shown in “Runs”: it is outside its range, 2 to 12; "
                       "showing 6 instead."]


def test_an_unreachable_hub_handle_is_said_in_words(monkeypatch, tmp_path):
    import socket

    def no_network(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    monkeypatch.setenv("TFHUB_CACHE_DIR", str(tmp_path))
    handle = "https://tfhub.dev/google/elmo/3"
    at = run_page(elmo_src="custom", elmo_custom=handle)
    assert not at.exception
    assert [e.value for e in at.error] == [
        f"Could not download the model from `{handle}`: this machine cannot reach the internet (name lookup "
        "failed). Run `python -m lab fetch` on a connected machine and copy the folder it fills (TFHUB_CACHE_DIR), "
        "or pick the embedded model."]
    assert "Showing the embedded model instead." in [w.value for w in at.warning]
    shown = [e.value for kind in ("error", "warning", "info", "markdown", "caption") for e in at.get(kind)]
    assert not any("URLError" in text or "Errno" in text for text in shown)
    assert at.pills  # the page goes on with the embedded model


@pytest.mark.parametrize("text, expect", [
    ("", "empty"), ("  \t ", "empty"), ("🙂🙂", "no letters"),
])
def test_bad_input_gives_messages(text, expect):
    at = run_page()
    at.sidebar.text_area[1].input(text).run()  # one sentence only
    assert not at.exception
    assert any(expect in w.value for w in at.warning)


def test_a_selected_word_missing_from_the_sentence():
    at = run_page(elmo_word_a="3:zebra")
    assert not at.exception
    assert any("`zebra` is not in sentence A" in i.value for i in at.info)
    assert at.pills[0].value == 2
    # the word comes from the URL: shown as typed in a code span, where Markdown, HTML and
    # bare web addresses are not read (Streamlit makes any address elsewhere a link)
    at = run_page(elmo_word_a="3:*see* https://example.com `x`")
    assert any("`` *see* https://example.com `x` `` is not in sentence A" in i.value for i in at.info)


def test_long_and_unusual_input():
    at = run_page()
    at.sidebar.text_area[0].input(" ".join(["bank"] * 2000)).run()
    assert not at.exception
    assert any("longer than 5,000 characters" in i.value for i in at.info)
    assert any("reads the first 150" in w.value for w in at.warning)
    odd = "<script>alert(1)</script> 銀行 🏦 bank " + "x" * 60
    at.sidebar.text_area[0].input(odd).run()
    assert not at.exception
    assert any("longer than 48 bytes" in i.value for i in at.info)
    assert at.pills[0].options[:3] == ["\\<", "script", "\\>"]  # shown as typed, not as HTML
    assert "銀行" in at.pills[0].options and len(at.pills[0].options) == len(split_words(odd))
    # (a pill whose label starts with an emoji shows it as the pill's icon)


def test_a_link_with_values_off_a_sliders_scale_gets_the_defaults():
    # a slider raises on a value outside its min and max: a link's value, hand-edited or
    # garbled, falls back to the default as any other unusable link value does
    at = run_page()
    defaults = {s.label: s.value for s in at.slider}
    at = run_page(elmo_w0="50", elmo_w1="nan", elmo_gamma="inf", elmo_repeats="1", elmo_runs="100",
                  elmo_dropout="0.9")
    assert not at.exception, [e.value for e in at.exception]
    got = {s.label: s.value for s in at.slider}
    assert {k: got[k] for k in defaults} == defaults
    assert got["Runs"] == 6 and got["Dropout rate at inference"] == pytest.approx(0.2)
    assert list(runs_table(at).columns) == [f"run {i}" for i in range(1, 7)]
    assert not {"elmo_w0", "elmo_w1", "elmo_gamma", "elmo_runs", "elmo_dropout"} & set(at.query_params)
    assert not any("nan" in m.value for m in at.markdown)
    at = run_page(elmo_repeats="1", elmo_runs="-3")
    assert not at.exception and next(s for s in at.slider if s.label == "Runs").value == 6


LONG = " ".join(["The bank by the river raised its rates again"] * 45)  # 405 words: the page reads 150


def test_a_long_sentence_s_word_picker_is_a_select_box(elmo):
    words, words_b = split_words(LONG)[:150], split_words(B)
    out = elmo.run([words, words_b])
    at = run_page(a=LONG)
    assert not at.exception
    picker = at.selectbox(key="_w_elmo_ia")
    assert picker.label == "Word in sentence A"
    assert picker.options == [f"{i} · {w}" for i, w in enumerate(words)]  # a repeated word's are distinct
    assert picker.options[1] == "1 · bank" and picker.options[10] == "10 · bank"
    assert [p.label for p in at.pills] == ["Word in sentence B"]  # B is short: pills
    assert picker.value == 1 and at.pills[0].value == 6  # "bank" in each
    w, g = mix_of(elmo)
    picker.set_value(82).run()  # the tenth "bank"
    assert at.selectbox(key="_w_elmo_ia").value == 82 and at.query_params["elmo_word_a"] == "82:bank"
    np.testing.assert_allclose(curve(at), expected(out, 82, 6, w, g), atol=1e-4)
    at.selectbox(key="_w_elmo_ia").set_value(85).run()  # "river"
    np.testing.assert_allclose(curve(at), expected(out, 85, 6, w, g), atol=1e-4)
    assert at.query_params["elmo_word_a"] == "85:river"


def test_a_long_sentence_s_maps_show_a_window_around_the_selected_words(elmo):
    words, words_b = split_words(LONG)[:150], split_words(B)
    out = elmo.run([words, words_b])
    stack = stack_of(out, *mix_of(elmo))
    at = run_page(a=LONG, elmo_word_a="82:bank")
    # A against both sentences: all 10 words of B, the other 38 of the 48 around A's word
    spec = chart(at, "against words 63-100 of A and 0-9 of B")
    z = values(spec["data"][0]["z"])
    assert z.shape == (len(NAMES), 48)
    np.testing.assert_allclose(z[:, :38], analysis.token_vs_tokens(stack[:, 0, 82], stack[:, 0, 63:101]), atol=1e-5)
    np.testing.assert_allclose(z[:, 38:], analysis.token_vs_tokens(stack[:, 0, 82], stack[:, 1, :10]), atol=1e-5)
    assert spec["layout"]["xaxis"]["ticktext"][:2] == ["A·The", "A·bank"]
    assert any("the map shows 48 words, 63-100 of A and 0-9 of B" in c.value for c in at.caption)
    # A × B at the mix: 48 words of A around the selected one, every word of B
    spec = chart(at, "Words 58-105 of A against words 0-9 of B: elmo (mix)")
    z = values(spec["data"][0]["z"])
    assert z.shape == (48, 10)
    np.testing.assert_allclose(z, analysis.cosine_matrix(stack[3, 0, 58:106], stack[3, 1, :10]), atol=1e-5)
    assert any("at most 48 words of each sentence" in c.value for c in at.caption)
    box = figures.outline_box(go.Figure(spec), 82 - 58, 6)
    assert f"top: {box['top']:.2f}px" in at.get_by_key("elmo_ab_outline").markdown[0].value


def test_a_click_on_a_long_sentence_s_maps_selects_the_word_clicked():
    at = run_page(a=LONG, elmo_word_a="82:bank")
    click_cell(at, "elmo_lt", 38 + 5, 2)  # the column of B's "river", after 38 of A
    assert at.pills[0].value == 5 and at.query_params["elmo_word_b"] == "5:river"
    click_cell(at, "elmo_lt", 3, 2)  # a column of A: only B's words are picked here
    assert at.pills[0].value == 5 and at.selectbox(key="_w_elmo_ia").value == 82
    click_cell(at, "elmo_ab", 0, 30)  # A's rows start at word 58: the row of word 88, "rates"
    assert at.selectbox(key="_w_elmo_ia").value == 88 and at.query_params["elmo_word_a"] == "88:rates"
    assert at.pills[0].value == 0 and at.query_params["elmo_word_b"] == "0:A"
    assert chart(at, "Words 64-111 of A against words 0-9 of B")  # the window follows the word


def test_in_projector_mode_a_long_sentence_s_maps_show_fewer_words():
    # 48 slanted labels in projector type overlap: half as many
    at = run_page(a=LONG, elmo_word_a="82:bank", proj="1")
    spec = chart(at, "against words 75-88 of A")  # and all 10 of B
    assert values(spec["data"][0]["z"]).shape == (len(NAMES), 24)
    assert values(chart(at, "Words 70-93 of A against words 0-9 of B")["data"][0]["z"]).shape == (24, 10)
    assert any("at most 24 words of each sentence" in c.value for c in at.caption)


def test_in_projector_mode_the_sections_above_the_chart_fold_away(defaults_out):
    """On a projector the first screen is section 3's chart: the model's details and the
    download, sections 1 and 2 and the scalar mix's sliders fold into one line each."""
    at = run_page(proj="1")
    assert not at.exception
    folds = {e.label: e for e in at.expander}
    sections = ("1 · Inspect the model", "2 · One vector per sentence, or one per word")
    assert {"Model and downloads", *sections} <= set(folds)
    assert [h.value for h in at.header][:1] == ["3 · One word through the layers"]
    assert any(c.value.startswith("Model: **ELMo-mini") for c in folds["Model and downloads"].caption)
    assert folds["2 · One vector per sentence, or one per word"].table  # the section, whole, inside
    (mix,) = [e for e in at.expander if e.label.startswith("The scalar mix")]
    assert not mix.proto.expanded and at.slider  # folded, its sliders in it
    at = run_page()  # and on a screen of its own, as it was
    assert [h.value[0] for h in at.header][:3] == ["1", "2", "3"]
    (mix,) = [e for e in at.expander if e.label.startswith("The scalar mix")]
    assert mix.proto.expanded
