"""`python -m lab report`: the nine experiments, with numbers equal to lab's."""

import json
import re

import numpy as np
import pytest

from lab import analysis, elmo_vs_bert, figures, models, report, senses, views
from lab.__main__ import main
from lab.tokenize import DEFAULT_A, DEFAULT_B, split_words
from tests.test_page_compare import BANK_LEGEND, BANK_SENSES, assert_dots_show_their_senses
from lab.vectors import INPUT_LAYER
from tests.specs import OLD_INPUT_NAMES, ticks

A, B = DEFAULT_A, DEFAULT_B


pytestmark = pytest.mark.usefixtures("small_corpus")  # tests/conftest.py: the small reference corpus


@pytest.fixture(scope="module")
def sections(small_corpus):
    return report.build(A, B, word="bank", store=small_corpus)


def table_of(section, first_header: str) -> report.Table:
    return next(t for t in section.tables if t.header[0] == first_header)


def test_nine_sections_in_order(sections):
    assert [s.title.split(" · ")[0] for s in sections] == [str(i) for i in range(1, 10)]
    assert "tensorflow" in [r[0] for r in table_of(sections[0], "package").rows]


def test_elmo_numbers_are_labs(sections):
    elmo = models.load("elmo")
    out = models.embed(elmo, [A, B])
    shapes = {r[0]: r[2] for r in table_of(sections[1], "output").rows}
    assert shapes["lstm_outputs2"] == str(out.layer("lstm_outputs2").shape)
    cos = float(re.search(r"vectors: ([\d.]+)", sections[2].lines[0]).group(1))
    assert cos == pytest.approx(analysis.cosine(out.elmo.default[0], out.elmo.default[1]), abs=1e-4)
    ia, ib = split_words(A).index("bank"), split_words(B).index("bank")
    pair = views.word_pair(views.mix(out, [0, 0, 0], 1.0), (0, ia), (1, ib))
    printed = {r[0]: float(r[1]) for r in table_of(sections[3], "layer").rows}
    np.testing.assert_allclose([printed[n] for n in pair.layer_names], pair.cosine, atol=1e-4)
    assert printed[INPUT_LAYER] == 1.0
    # the context-only rows, as on the ELMo page: at "bank" (A's word 2), the forward half
    # of lstm_outputs2 at word 1 and its backward half at word 3
    both = views.word_pair(views.with_context_only(views.mix(out, [0, 0, 0], 1.0)), (0, ia), (1, ib))
    assert list(printed) == both.layer_names and list(printed)[-2:] == list(views.CONTEXT_LAYERS)
    half = out.layer("lstm_outputs2").shape[-1] // 2
    l2a, l2b = out.layer("lstm_outputs2")[0], out.layer("lstm_outputs2")[1]
    by_hand = analysis.cosine(np.concatenate([l2a[ia - 1, :half], l2a[ia + 1, half:]]),
                              np.concatenate([l2b[ib - 1, :half], l2b[ib + 1, half:]]))
    assert printed[list(views.CONTEXT_LAYERS)[-1]] == pytest.approx(by_hand, abs=1e-4)


def test_the_elmo_and_bert_sections_read_each_layer_against_its_baseline(sections, small_corpus, embedded_bert):
    """As the ELMo and BERT pages do: the layer's baseline (the mix's for its weights) and the adjusted similarity."""
    elmo = models.load("elmo")
    learned = elmo.mix_weights
    weights = learned[0] if learned is not None else [0.0, 0.0, 0.0]
    for section, model in ((sections[3], elmo), (sections[4], embedded_bert)):
        table = table_of(section, "layer")
        assert table.header == ["layer", "cosine", "baseline", "adjusted"]
        names = [r[0] for r in table.rows]
        cos, base, adjusted = (np.array([float(r[i]) for r in table.rows]) for i in (1, 2, 3))
        np.testing.assert_allclose(base, small_corpus.baseline(model).at(names, weights), atol=1e-4)
        np.testing.assert_allclose(adjusted, (cos - base) / (1 - base), atol=3e-4)
        assert report.BASELINE_LINE in section.lines
    assert [r[0] for r in table_of(sections[3], "layer").rows][3:] == ["elmo (mix)", *views.CONTEXT_LAYERS]


def test_bert_numbers_are_labs(sections, embedded_bert):
    out = embedded_bert.run([A, B])
    pair = views.word_pair(out, (0, out.words[0].index("bank")), (1, out.words[1].index("bank")))
    m = views.sentence_measures(out, pair)
    printed = [float(r[1]) for r in table_of(sections[4], "measure").rows]
    np.testing.assert_allclose(printed, [m.pooled, m.token, m.mean_content], atol=1e-4)
    tokens = table_of(sections[4], "A: position").rows[0][1:]
    assert tokens[:4] == ["[CLS]", "the", "central", "bank"] and tokens[-1] == "[PAD]"


def test_comparison_numbers_are_the_compare_pages(sections, small_corpus, embedded_bert):
    elmo = models.load("elmo")
    runs = {"bert": elmo_vs_bert.align(embedded_bert.run([A, B])), "elmo": models.embed(elmo, [A, B])}
    ia, ib = split_words(A).index("bank"), split_words(B).index("bank")
    loaded = {"bert": embedded_bert, "elmo": elmo}
    want = [elmo_vs_bert.model_curve(out, (0, ia), (1, ib), "first", small_corpus.baseline(loaded[f]).values)
            for f, out in runs.items()]
    table = table_of(sections[7], "model")
    assert table.header == ["model", "layer", "depth", "cosine", "baseline", "adjusted"]
    assert [r[1] for r in table.rows] == want[0].layer_names + want[1].layer_names
    printed = np.array([[float(v) for v in r[2:]] for r in table.rows])
    np.testing.assert_allclose(printed, [[d, c, b, a] for w in want for d, c, b, a in
                                         zip(w.depth, w.cosine, w.baseline, w.adjusted)], atol=1e-4)
    assert f"{len(small_corpus.corpus.sentences):,} sentences" in sections[7].lines[0]
    # the sense test: every layer's ROC AUC, and each model's best layer named
    aucs = table_of(sections[8], "model")
    tests = [elmo_vs_bert.run_sense_test(m, senses.sense_pairs(), senses.roc_auc) for m in loaded.values()]
    np.testing.assert_allclose([float(r[3]) for r in aucs.rows], np.concatenate([t.auc for t in tests]), atol=1e-4)
    for t in tests:
        assert any(line.startswith(f"{t.short_label}: best at {t.layer_names[t.best]} ") for line in sections[8].lines)


def test_the_comparison_maps_the_uses_of_the_word_by_sense(sections, small_corpus, embedded_bert):
    """As on the ELMo vs BERT page: each model's map of the uses of "bank" at its top layer, every
    dot in its sentence's sense, and the legend as a table."""
    import json

    import plotly.io

    sentences = small_corpus.corpus.sentences
    maps = [f for f in sections[7].figures if "uses of “bank”" in f.layout.title.text]
    assert len(maps) == 2 and len(sections[7].figures) == 3
    loaded = {"bert": embedded_bert, "elmo": models.load("elmo")}
    for fig, m in zip(maps, loaded.values()):
        spec = json.loads(plotly.io.to_json(fig))
        assert_dots_show_their_senses(spec, sentences)
        assert m.short_label in spec["layout"]["title"]["text"]
    table = table_of(sections[7], "use map")
    assert table.header == ["use map", "sense", "gloss", "WordNet tag count", "uses"]
    counts = {k: sum(v == k for v in BANK_SENSES.values()) for k in range(len(BANK_LEGEND))}
    for m in loaded.values():
        rows = [r[1:] for r in table.rows if r[0] == m.short_label]
        assert rows == [["bank.n.01", "sloping land (especially the slope beside a body of water)", "25",
                         str(counts[0])],
                        ["depository_financial_institution.n.01", "a financial institution that accepts deposits and "
                         "channels the money into lending activities", "20", str(counts[1])],
                        ["bank.n.03", "a long ridge or pile", "2", str(counts[2])],
                        ["bank.v.01", "tip laterally", "2", str(counts[3])],
                        ["other sense", "", "1", str(counts[4])], ["sense not known", "", "0", str(counts[5])]]
    assert any(line.startswith("Use maps: every use of “bank”") for line in sections[7].lines)


def test_the_input_layer_has_the_pages_name_in_every_table_and_figure(sections):
    """As on the pages: one name for the input layer, on each layer axis, in each table and
    in the prose; the ELMo bars' legend names both kinds of bar, and the comparison keeps
    each model's colour."""
    elmo_bars, bert_curve = sections[3].figures[0], sections[4].figures[0]
    curves, aucs = sections[7].figures[0], sections[8].figures[0]
    for fig in (elmo_bars, bert_curve, curves, aucs):
        assert fig.layout.xaxis.ticktext[0] == INPUT_LAYER
    for s in sections:
        for fig in s.figures:
            assert not OLD_INPUT_NAMES & set(ticks(fig.to_plotly_json())), s.title
    assert table_of(sections[3], "layer").rows[0][0] == INPUT_LAYER
    assert [r[1] for r in table_of(sections[8], "model").rows].count(INPUT_LAYER) == 2  # both models'
    assert any(f"`{INPUT_LAYER}`" in line for line in sections[3].lines)
    assert [t.name for t in elmo_bars.data if t.type == "bar"] == list(views.LAYER_KINDS)
    for fig in (curves, aucs):
        colour = {t.name.split(":")[0]: t.line.color for t in fig.data if ":" in t.name}
        assert set(colour.values()) == {figures.OKABE_ITO[i] for i in figures.MODEL_COLOURS.values()}


def test_padding_section_checks_the_mask(sections):
    lines = "\n".join(sections[6].lines)
    assert "padded keys are exactly 0: yes" in lines
    assert "largest weight on them with the mask on: 0.0" in lines
    sums = [float(x) for x in re.search(r"sum to: (.*)", lines).group(1).split(", ")]
    np.testing.assert_allclose(sums, 1.0, atol=1e-5)


def test_text_tables_are_aligned():
    text = report.table_text(report.Table(["name", "value"], [["a", "1.5"], ["longer", "10.25"]]))
    assert text.splitlines() == ["name    value", "------  -----", "a         1.5", "longer  10.25"]


def test_cli_writes_a_self_contained_html_file(tmp_path, capsys):
    path = tmp_path / "report.html"
    assert main(["report", "--a", "We sat on the <b>river</b> bank.", "--word", "bank", "--html", str(path)]) == 0
    out = capsys.readouterr()
    assert "7 · Padding and the mask" in out.out and "9 · The sense test" in out.out and "loading BERT" in out.err
    page = path.read_text(encoding="utf-8")
    assert page.count("<h2>") == 9
    assert "&lt;b&gt;river&lt;/b&gt;" in page and "<b>river</b>" not in page  # text, never markup
    assert re.search(r"<td class='n'>0\.\d{4}</td>", page) and "<td>layer 6</td>" in page  # numbers right-aligned
    assert not re.search(r"<script[^>]*\bsrc=", page)  # plotly.js is inline: the file opens offline
    assert "plotly.js v" in page
    assert page.count("Plotly.newPlot") == 7 and len(page) > 3_000_000  # the use maps: 2 of them
    # each figure's camera saves the PNG a page's chart does (figures.export_config)
    exports = [json.loads(m) for m in re.findall(r'"toImageButtonOptions": (\{[^}]*\})', page)]
    assert len(exports) == 7 and {(e["width"], e["scale"], e["format"]) for e in exports} == {(1200, 2, "png")}
    assert "bert-cosine-of-a-bank-and-b-bank-at-every-layer" in [e["filename"] for e in exports]


def test_cli_says_when_the_word_is_missing(capsys):
    assert main(["report", "--word", "zebra"]) == 2
    err = capsys.readouterr().err
    assert "“zebra” is not a word of sentence A" in err and "Traceback" not in err
