"""The BERT WordPiece page, run headless with AppTest: clicks change values to lab's numbers."""

import json

import numpy as np
import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest

from lab import analysis, figures
from lab.tokenize import NUMBERS_ONLY
from lab.vectors import INPUT_LAYER
from tests.conftest import ROOT
from tests.specs import OLD_INPUT_NAMES, chart, chart_keyed, tables, ticks, use_source, values, vectors_file

A = "The central bank raised interest rates yesterday."
B = "A fisherman rested on the river bank at sunset."


def run_page(**params) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages/bert.py"), default_timeout=240)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def curve_table(at) -> dict[str, float]:
    df = next(t for t in tables(at) if list(t.index)[:1] == ["cosine"])
    return {k: float(v) for k, v in df.iloc[0].items()}


def expected_curve(out, ta, tb, pool="first"):
    va = analysis.pool_pieces(out.layers[:, 0], out.positions(0, ta), pool)
    vb = analysis.pool_pieces(out.layers[:, 1], out.positions(1, tb), pool)
    return analysis.layerwise_cosine(va, vb)


@pytest.fixture(scope="module")
def defaults_out(embedded_bert):
    return embedded_bert.run([A, B])


def test_default_view_compares_the_shared_word(defaults_out):
    at = run_page()
    assert not at.exception
    assert [p.label for p in at.pills] == ["Word in sentence A", "Word in sentence B"]
    assert at.pills[0].value == 2 and at.pills[1].value == 6  # "bank" and "bank"
    got = curve_table(at)
    want = expected_curve(defaults_out, 2, 6)
    assert list(got) == defaults_out.layer_names
    np.testing.assert_allclose(list(got.values()), want, atol=1e-4)
    assert at.metric[1].value == f"{want[-1]:.3f}"
    assert any("all-MiniLM-L6-v2" in c.value for c in at.caption)  # the view names its model


def test_the_input_layer_has_one_name_in_charts_tables_and_prose(defaults_out):
    at = run_page()
    assert defaults_out.layer_names[0] == INPUT_LAYER
    for key in ("bert_curve", "bert_lt_1"):  # the layer curve (x) and the token map (y)
        assert INPUT_LAYER in ticks(chart_keyed(at, key)), key
    for c in at.get("plotly_chart"):
        assert not OLD_INPUT_NAMES & set(ticks(json.loads(c.proto.spec))), c.key
    assert list(curve_table(at))[0] == INPUT_LAYER
    prose = [e.value for kind in ("caption", "markdown", "header") for e in at.get(kind)]
    assert sum(f"`{INPUT_LAYER}`" in p for p in prose) == 2  # the curve's caption, the embedding parts'
    assert not any(old in p for p in prose for old in ("Layer 0", "layer 0 ", "Before layer", "`embeddings`"))


def test_the_vectors_download_loads_without_pickle(downloads, defaults_out):
    """The page keeps its run without attentions; the download runs the model again, so
    it holds them too. Every array loads with plain np.load and equals lab's run."""
    z = vectors_file(downloads(run_page(), "bert_npz"), defaults_out)
    assert z["tokens"][0, :4].tolist() == ["[CLS]", "the", "central", "bank"]
    assert "attentions" in z and z["layer_names"][0] == INPUT_LAYER


def test_selecting_other_words_changes_the_plotted_values(defaults_out):
    at = run_page()
    at.pills[0].set_value(4).run()  # "interest"
    at.pills[1].set_value(5).run()  # "river"
    want = expected_curve(defaults_out, 4, 5)
    np.testing.assert_allclose(list(curve_table(at).values()), want, atol=1e-4)
    spec = chart(at, "Cosine similarity at every layer")
    np.testing.assert_allclose(values(spec["data"][0]["y"]), want, atol=1e-6)
    assert spec["data"][0]["name"] == 'A "interest" vs B "river"'
    assert at.query_params["bert_word_a"] == "4" and at.query_params["bert_word_b"] == "5"


def test_each_layer_beside_its_anisotropy_baseline(defaults_out, embedded_bert, small_corpus):
    """The chart's dashed line and the table's rows: each layer's baseline from the reference
    corpus (the module's small one) and the adjusted similarity."""
    at = run_page()
    base = small_corpus.baseline(embedded_bert)
    assert base.layer_names == defaults_out.layer_names
    df = next(t for t in tables(at) if list(t.index)[:1] == ["cosine"])
    assert list(df.index) == ["cosine", "baseline", "adjusted"]
    cos = expected_curve(defaults_out, 2, 6)
    np.testing.assert_allclose(df.loc["baseline"].to_numpy(float), base.values, atol=1e-4)
    np.testing.assert_allclose(df.loc["adjusted"].to_numpy(float), (cos - base.values) / (1 - base.values), atol=2e-4)
    assert base.values[-1] > base.values[0]  # upper layers crowd into a cone (small corpus, all the same)
    line = chart(at, "Cosine similarity at every layer")["data"][1]
    assert line["name"] == figures.BASELINE_NAME and line["line"]["dash"] == "dash"
    np.testing.assert_allclose(values(line["y"]), base.values, atol=1e-6)


def test_mean_pooling_of_a_split_word(embedded_bert, small_corpus):
    a, b = "Unaffable bankers smiled.", "The bankers were unaffable."
    at = run_page(a=a, b=b)
    assert at.pills[0].value == 0 and at.pills[1].value == 3  # "Unaffable" / "unaffable"
    at.segmented_control[0].set_value("mean").run()
    out = embedded_bert.run([a, b])
    np.testing.assert_allclose(list(curve_table(at).values()), expected_curve(out, 0, 3, "mean"), atol=1e-4)
    assert not np.allclose(expected_curve(out, 0, 3, "mean"), expected_curve(out, 0, 3, "first"))
    # the baselines follow the pooling: random words of the corpus, their pieces averaged too
    base = small_corpus.baseline(embedded_bert)
    df = next(t for t in tables(at) if list(t.index)[:1] == ["cosine"])
    np.testing.assert_allclose(df.loc["baseline"].to_numpy(float), base.mean, atol=1e-4)
    np.testing.assert_allclose(values(chart(at, "Cosine similarity at every layer")["data"][1]["y"]), base.mean,
                               atol=1e-6)
    at.segmented_control[0].set_value("first").run()
    np.testing.assert_allclose(next(t for t in tables(at) if list(t.index)[:1] == ["cosine"]).loc["baseline"]
                               .to_numpy(float), base.values, atol=1e-4)


def test_layer_slider_changes_the_a_by_b_map(defaults_out):
    at = run_page()
    at.select_slider[0].set_value(2).run()
    spec = chart(at, "at layer 2")
    n_a, n_b = len(defaults_out.tokens[0]), len(defaults_out.tokens[1])
    want = analysis.cosine_matrix(defaults_out.layers[2, 0, :n_a], defaults_out.layers[2, 1, :n_b])
    np.testing.assert_allclose(values(spec["data"][0]["z"]), want, atol=1e-5)


def test_another_word_moves_the_a_by_b_outline_and_leaves_the_map_as_it_was(defaults_out):
    at = run_page()
    spec = chart(at, "Every token of A against")
    fig = go.Figure(spec)

    def outline() -> str:
        return at.get_by_key("bert_ab_outline").markdown[0].value

    def on_cell(row: int, col: int) -> bool:
        box = figures.outline_box(fig, row, col)
        return f"top: {box['top']:.2f}px" in outline() and f"* {box['x0']:.6f})" in outline()

    bank_a, bank_b = defaults_out.positions(0, 2)[0], defaults_out.positions(1, 6)[0]
    assert on_cell(bank_a, bank_b) and not on_cell(bank_a, bank_b + 1)
    at.pills[1].set_value(5).run()  # "river"
    assert chart(at, "Every token of A against") == spec  # the same figure: the browser keeps the drawn map
    assert on_cell(bank_a, defaults_out.positions(1, 5)[0])
    at.pills[0].set_value(4).run()  # "interest"
    assert on_cell(defaults_out.positions(0, 4)[0], defaults_out.positions(1, 5)[0])
    assert ".st-key-bert_ab::after" in outline()


def test_token_map_switches_between_the_sentences(defaults_out):
    at = run_page()
    word_a = analysis.pool_pieces(defaults_out.layers[:, 0], defaults_out.positions(0, 2), "first")  # "bank"
    for sentence, row in (("B", 1), ("A", 0)):
        n = len(defaults_out.tokens[row])
        want = analysis.token_vs_tokens(word_a, defaults_out.layers[:, row, :n])
        spec = chart(at, f"against every token of {sentence}")
        np.testing.assert_allclose(values(spec["data"][0]["z"]), want, atol=1e-5)
        assert sum("(A) against every token of" in json.dumps(json.loads(c.proto.spec)["layout"]["title"])
                   for c in at.get("plotly_chart")) == 1  # one map drawn at a time
        if row == 1:
            at.segmented_control[1].set_value(0).run()
    assert at.query_params["bert_map"] == "0"


def test_wordpiece_tables_and_shapes(defaults_out):
    at = run_page()
    tables = [d.value for d in at.dataframe if "input_mask" in list(d.value.index)]
    assert len(tables) == 2
    assert tables[0].loc["token"].tolist()[:4] == ["[CLS]", "the", "central", "bank"]
    assert tables[0].loc["input_mask"].tolist()[-1] == "0"  # A is padded to B's length
    assert tables[0].loc["token"].tolist()[-1] == "[PAD]"
    assert any("(2, 12)" in m.value for m in at.markdown)


def test_embedding_decomposition(defaults_out):
    at = run_page()
    parts = next(t for t in tables(at) if "share of sum A" in t.columns)
    assert parts.loc["word", "cosine A/B"] == pytest.approx(1.0, abs=1e-4)
    assert parts.loc["position", "cosine A/B"] < 0.99
    assert parts["share of sum A"].sum() == pytest.approx(1.0, abs=1e-3)


def test_three_measures_match_lab(defaults_out):
    at = run_page()
    out = defaults_out
    pooled = analysis.cosine(out.bert.pooled[0], out.bert.pooled[1])
    last = out.layers[-1]
    means = [analysis.mean_pool(last[b, :len(out.tokens[b])],
                                analysis.content_mask(out.tokens[b], len(out.tokens[b]))) for b in (0, 1)]
    assert at.metric[0].value == f"{pooled:.3f}"
    assert at.metric[2].value == f"{analysis.cosine(*means):.3f}"


@pytest.mark.parametrize("text, expect", [
    ("", "empty"),
    ("   \n\t ", "empty"),
    ("\u200b\u200d", "empty"),
    ("🏦🙂 !!", "no letters or digits"),
])
def test_bad_input_gives_a_message_not_an_exception(text, expect):
    at = run_page()
    at.sidebar.text_area[1].input(text).run()
    assert not at.exception
    assert any(expect in w.value for w in at.warning)
    assert not at.pills  # the page stops before the comparison


def test_numbers_only_get_the_notice_and_the_page_goes_on():
    at = run_page()
    at.sidebar.text_area[1].input("1234 5678 90").run()
    assert not at.exception
    assert [i.value for i in at.info if "numbers" in i.value] == [f"Sentence B: {NUMBERS_ONLY}"]
    assert at.pills  # a notice, not a refusal: the comparison is drawn


def test_long_input_is_truncated_with_a_notice():
    at = run_page()
    at.sidebar.text_area[0].input("The bank " * 400).run()  # 800 words, 800+ pieces
    assert not at.exception
    assert any("510 pieces" in w.value for w in at.warning)
    very_long = run_page()
    very_long.sidebar.text_area[0].input("bank " * 2000).run()  # over the 5,000 characters
    assert any("longer than 5,000 characters" in i.value for i in very_long.info)


def test_a_long_input_map_shows_a_window_around_the_selected_words(embedded_bert):
    a = " ".join(f"bank{i}" for i in range(150))  # hundreds of pieces
    at = run_page(a=a)
    out = embedded_bert.run([a, B])
    word = 60  # a word far from both ends
    at.selectbox(key="_w_bert_word_a").set_value(word).run()  # a long sentence's words: a select box
    pos, n_a, n_b = out.positions(0, word)[0], len(out.tokens[0]), len(out.tokens[1])
    start = pos - 24  # the selected piece in the middle of 48
    assert 0 < start and start + 48 < n_a
    spec = chart(at, "of A against tokens")
    z = values(spec["data"][0]["z"])
    assert z.shape == (48, n_b)
    want = analysis.cosine_matrix(out.layers[-1, 0, start:start + 48], out.layers[-1, 1, :n_b])
    np.testing.assert_allclose(z, want, atol=1e-5)
    assert f"Tokens {start}-{start + 47} of A" in json.dumps(spec["layout"]["title"])
    box = figures.outline_box(go.Figure(spec), pos - start, out.positions(1, at.pills[0].value)[0])
    assert f"top: {box['top']:.2f}px" in at.get_by_key("bert_ab_outline").markdown[0].value
    assert any("at most 48 tokens" in c.value for c in at.caption)
    # the word against the tokens of its own sentence: the same window, clicks mapped through it
    at.segmented_control(key="_w_bert_map").set_value(0).run()
    own = chart(at, f'(A) against tokens {start}-{start + 47} of A')
    z = values(own["data"][0]["z"])
    vector = out.layers[:, 0, pos]  # (N, C): the selected word's first piece, every layer
    np.testing.assert_allclose(z, analysis.token_vs_tokens(vector, out.layers[:, 0, start:start + 48]), atol=1e-5)
    assert list(own["layout"]["xaxis"]["ticktext"])[24] == out.tokens[0][pos]


def test_script_emoji_and_cjk_are_shown_as_text():
    text = "<script>alert('bank')</script> 🏦 銀行 bank"
    at = run_page()
    at.sidebar.text_area[0].input(text).run()
    assert not at.exception
    assert text in [t.value for t in at.text]  # shown verbatim with st.text, never as HTML
    assert "[UNK]" in at.dataframe[0].value.loc["token"].tolist()
    assert at.pills[0].value is not None


def test_state_comes_from_the_url():
    at = run_page(a="We sat on the river bank.", b="The bank raised rates.", bert_word_a="4", proj="1")
    assert at.sidebar.text_area[0].value == "We sat on the river bank."
    assert at.sidebar.toggle[0].value is True
    assert at.pills[0].value == 4


def test_unloadable_source_says_so_and_falls_back():
    at = use_source(run_page(), "bert", "/no/such/model")
    assert not at.exception
    assert any("not found" in e.value for e in at.error)
    assert any("embedded model instead" in w.value for w in at.warning)
    assert at.pills  # the page still works


def test_a_source_from_a_link_is_shown_as_typed():
    # a link can carry any source: in the message it is a code span, never a link or markup
    at = run_page(bert_src="custom", bert_custom="[Reset the lab](https://example.com)")
    assert not at.exception
    assert any("Could not load the model from `[Reset the lab](https://example.com)`: that folder was not found."
               in e.value for e in at.error)
    assert at.pills


def test_a_word_past_the_sentences_end_in_a_link_is_said_and_replaced():
    at = run_page(bert_word_a="99")
    assert not at.exception
    notices = [i.value for i in at.info if "The link's" in i.value]
    assert notices == ["The link's `bert_word_a=99` cannot be shown in “Word in sentence A”: it is not one of its "
                       "8 choices; showing “bank” instead."]
    assert at.pills[0].value == 2 and at.query_params["bert_word_a"] == "2"  # the address bar holds what is shown
    at.pills[1].set_value(3).run()
    assert not [i for i in at.info if "The link's" in i.value]  # said once, in the run that opened the link


def test_a_link_value_of_the_wrong_type_is_said_and_replaced():
    at = run_page(bert_pool="max", bert_word_b="x")
    assert not at.exception
    notices = [i.value for i in at.info if "The link's" in i.value]
    assert notices == [
        "The link's `bert_word_b=x` cannot be shown in “Word in sentence B”: it is not a whole number; showing “bank” "
        "instead.",
        "The link's `bert_pool=max` cannot be shown in “Word vector from its pieces”: it is not one of its choices "
        "(“first piece”, “mean”); showing “first piece” instead."]


def test_a_tf_hub_source_runs_through_the_same_page(hub_bert_dirs, monkeypatch):
    enc_dir, pre_dir, _ = hub_bert_dirs
    monkeypatch.setenv("LAB_BERT_PREPROCESS", str(pre_dir))
    at = use_source(run_page(), "bert", enc_dir)
    assert not at.exception and not at.error
    assert any("TF Hub BERT" in c.value for c in at.caption)
    assert list(curve_table(at)) == ["layer 1", "layer 2"]
    assert any("does not expose its embedding parts" in i.value for i in at.info)


def test_sentences_survive_a_page_switch():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240).run()
    at.sidebar.text_area[0].input("Money in the bank.").run()
    at.switch_page("app_pages/bert.py").run()
    assert not at.exception
    assert at.sidebar.text_area[0].value == "Money in the bank."
    assert at.pills[0].options[:3] == ["Money", "in", "the"]
    at.switch_page("app_pages/home.py").run()
    assert at.sidebar.text_area[0].value == "Money in the bank."


def test_each_of_a_repeated_word_can_be_selected(embedded_bert):
    # Streamlit knows a pill by its label: of two "bank"s only one could be picked, and a
    # rerun moved the selection to the last (ui.frame.pill_labels keeps them apart)
    a = "I sat on the bank near the bank."
    out = embedded_bert.run([a, B])
    at = run_page(a=a, bert_word_a="4")  # the first "bank"
    assert not at.exception and at.pills[0].value == 4
    at.toggle(key="_w_proj").set_value(True).run()  # a rerun that changes no selection
    assert at.pills[0].value == 4
    np.testing.assert_allclose(list(curve_table(at).values()), expected_curve(out, 4, 6), atol=1e-4)
    at.pills[0].set_value(7).run()  # the second "bank"
    assert at.pills[0].value == 7 and at.query_params["bert_word_a"] == "7"
    np.testing.assert_allclose(list(curve_table(at).values()), expected_curve(out, 7, 6), atol=1e-4)
    at.pills[0].set_value(4).run()
    assert at.pills[0].value == 4 and at.query_params["bert_word_a"] == "4"
    # the labels read the same: the later ones end in zero-width spaces
    assert [o.replace("\u200b", "") for o in at.pills[0].options] == ["I", "sat", "on", "the", "bank", "near", "the",
                                                                      "bank", "."]


def test_in_projector_mode_the_word_pieces_and_the_model_fold_away(defaults_out):
    """On a projector the first screen is the figure's: the word-piece section (its tables and
    explanation), the model's details and the download fold into one line each."""
    def shown(block):
        return [m for m in block.markdown if m.value.startswith("`##` marks a piece")]

    at = run_page()
    assert len(shown(at)) == 1 and not at.expander
    assert at.title[0].value == "BERT WordPiece" and at.header[0].value == "1 · Word pieces and model inputs"
    at.toggle(key="_w_proj").set_value(True).run()
    assert not at.exception
    (folded,) = [e for e in at.expander if shown(e)]
    assert folded.label == "1 · Word pieces and model inputs" and len(folded.table) == 2  # A and B
    (model,) = [e for e in at.expander if e.label == "Model and downloads"]
    assert model.caption[0].value.startswith("Model: **all-MiniLM-L6-v2")
    assert at.title[0].value == "BERT WordPiece"  # and one line under it, for the caption's three
    assert "One word's vector, layer by layer, in two sentences." in [c.value for c in at.main.caption]
    assert at.get("plotly_chart") and not folded.get("plotly_chart")  # the figures stay on the page


def test_a_long_sentence_s_words_are_picked_from_a_select_box(embedded_bert):
    a = "I sat on the bank near the bank. " * 6  # 54 words; B's 10 stay pills
    out = embedded_bert.run([a, B])
    at = run_page(a=a)
    picker = at.selectbox(key="_w_bert_word_a")
    assert picker.label == "Word in sentence A" and len(picker.options) == len(out.words[0]) == 54
    assert picker.options[:9] == ["0 · I", "1 · sat", "2 · on", "3 · the", "4 · bank", "5 · near", "6 · the",
                                  "7 · bank", "8 · ."]  # each "bank" its own: the number tells them apart
    assert picker.value == 4 and [p.label for p in at.pills] == ["Word in sentence B"]
    picker.set_value(43).run()  # the fifth sentence's second "bank"
    assert at.selectbox(key="_w_bert_word_a").value == 43 and at.query_params["bert_word_a"] == "43"
    np.testing.assert_allclose(list(curve_table(at).values()), expected_curve(out, 43, 6), atol=1e-4)
    short = run_page(a=A)  # a short sentence: pills
    assert [p.label for p in short.pills] == ["Word in sentence A", "Word in sentence B"]
    assert not [s for s in short.selectbox if s.label.startswith("Word in")]


def test_a_link_with_the_earlier_names_of_its_keys_opens_the_same_view():
    """Links already out there (bookmarks, shared links) name the selected words bert_ta and
    bert_tb (ui.state.RENAMED): they select the same words, and the address bar then holds
    the names of now."""
    at = run_page(bert_ta="4", bert_tb="5")
    assert not at.exception and [p.value for p in at.pills] == [4, 5]  # "interest", "river"
    assert at.query_params["bert_word_a"] == "4" and at.query_params["bert_word_b"] == "5"
    assert "bert_ta" not in at.query_params and "bert_tb" not in at.query_params
    bad = run_page(bert_ta="99")
    assert any("`bert_ta=99`" in n.value for n in bad.info)  # told under the name the link used
