"""Every chart's PNG (the toolbar's camera) comes out whole, in a real browser.

The camera draws the figure again at the size its config gives (``figures.export_config``),
lays it out with the page's fonts, and turns it into an image, which sees only the
computer's fonts: Streamlit's Source Sans, a web font, is not there, and the labels come
out in a wider system font (DejaVu Sans here). Each figure is drawn here as on the app's
page (Plotly's JS from the plotly package, Source Sans from Streamlit's), exported as the
camera exports it (as SVG, the PNG's source) and shown in a frame without web fonts, as
the image draws it; there every tick label, axis title, legend entry and printed value
must lie inside the image and clear of each other, in the normal and the projector look.
"""

import base64
from pathlib import Path

import numpy as np
import plotly
import plotly.io
import pytest
import streamlit

from lab import elmo_vs_bert, figures, report, senses, views
from lab.models.elmo_io import LAYER_NAMES as ELMO_LAYERS
from lab.tokenize import DEFAULT_A, DEFAULT_B

from tests.test_browser_layout import A, B, labels_outside

pytestmark = pytest.mark.browser

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
SOURCE_SANS = next((Path(streamlit.__file__).parent / "static" / "static" / "media")
                   .glob("SourceSansVF-Upright*.woff2"))
BERT = "all-MiniLM-L6-v2 (embedded; a distilled BERT fine-tuned for sentence embeddings, 6 layers x 12 heads)"
BERT_SHORT, ELMO_SHORT = "all-MiniLM-L6-v2 (embedded)", "ELMo-mini (embedded)"
ELMO = "ELMo-mini (embedded, trained here, 2 x 256-unit LSTMs)"
BERT_LAYERS = ["embeddings"] + [f"layer {i}" for i in range(1, 7)]
BERT_BASE_LAYERS = ["embeddings"] + [f"layer {i}" for i in range(1, 13)]
ELMO_BARS = [*ELMO_LAYERS, views.MIX_LAYER, *views.CONTEXT_LAYERS]
TOKENS_A, TOKENS_B = A.split(), B.split()

# Draw ``spec`` (a figure's JSON) with ``config`` in a div ``width`` px wide, as the app's page
# does (with Source Sans loaded)
DRAW = """async ([spec, config, width]) => {
  await document.fonts.load('16px "Source Sans"');
  document.body.replaceChildren();
  const gd = document.createElement('div');
  gd.style.width = width + 'px';
  document.body.append(gd);
  await Plotly.newPlot(gd, spec.data, spec.layout, config);
}"""

# Export a drawn chart as its camera does (its toImageButtonOptions, as SVG at scale 1) and show
# the SVG in a frame of the image's size that has no web fonts, as the PNG draws it; returns
# the image's width and height
EXPORT = """async gd => {
  const options = gd._context.toImageButtonOptions;
  const url = await Plotly.toImage(gd, {...options, format: 'svg', scale: 1});
  document.querySelectorAll('iframe.export').forEach(old => old.remove());
  const frame = document.createElement('iframe');
  frame.className = 'export';
  frame.style.cssText = `border: 0; width: ${options.width}px; height: ${options.height}px`;
  frame.srcdoc = '<!DOCTYPE html><body style="margin: 0">' + decodeURIComponent(url.slice(url.indexOf(',') + 1));
  await new Promise(done => { frame.onload = done; document.body.append(frame); });
  return [options.width, options.height];
}"""

# Pairs of texts drawn over each other: tick labels, axis titles, legend entries (symbol and
# text), colour-bar labels, the title, printed values and annotations, each as its box turned
# as drawn (two boxes overlap unless a side of one separates them, by a pixel's rounding);
# and every legend text that runs past the legend's box (Plotly cuts it there)
OVERLAPS = """() => {
  const labels = [...document.querySelectorAll('.xtick text, .ytick text, .g-xtitle text, .g-ytitle text, ' +
      '.legend .traces, .cbaxis text, .gtitle, .textpoint text, .annotation-text')]
    .filter(el => el.textContent.trim() && el.getBBox().width > 0);
  const corners = el => {
    const b = el.getBBox(), m = el.getScreenCTM();
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
      .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
  };
  const apart = (p, q) => [p, q].some(poly => poly.some((a, i) => {
    const b = poly[(i + 1) % poly.length], n = [a[1] - b[1], b[0] - a[0]], len = Math.hypot(...n);
    const along = pts => pts.map(([x, y]) => (x * n[0] + y * n[1]) / len);
    const [u, v] = [along(p), along(q)];
    return Math.min(...u) >= Math.max(...v) - 1 || Math.min(...v) >= Math.max(...u) - 1;
  }));
  const boxes = labels.map(corners), out = [];
  for (let i = 0; i < labels.length; i++)
    for (let j = i + 1; j < labels.length; j++)
      if (!apart(boxes[i], boxes[j]))
        out.push([labels[i].textContent.slice(0, 30), labels[j].textContent.slice(0, 30)]);
  for (const legend of document.querySelectorAll('.legend')) {
    const box = legend.querySelector('rect.bg').getBoundingClientRect();
    for (const text of legend.querySelectorAll('.legendtext')) {
      const r = text.getBoundingClientRect();
      if (r.right > box.right + 1 || r.left < box.left - 1) out.push([text.textContent.slice(0, 30), 'legend box']);
    }
  }
  return {out, checked: labels.length};
}"""


@pytest.fixture(scope="module")
def chart_page(browser, tmp_path_factory):
    """A blank page with Plotly's JS and Streamlit's Source Sans, as the app's pages have them."""
    path = tmp_path_factory.mktemp("exports") / "charts.html"
    path.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'><style>@font-face {font-family: 'Source Sans'; "
                    f"src: url('{SOURCE_SANS.as_uri()}') format('woff2'); font-weight: 200 900}}</style>"
                    f"<script src='{PLOTLY_JS.as_uri()}'></script></head><body style='margin: 0'></body></html>",
                    encoding="utf-8")
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.goto(path.as_uri())
    yield page
    page.close()


def draw(page, fig, config: dict, width: int = 820):
    """``fig`` drawn with ``config`` in a chart ``width`` px wide (``DRAW``): its element."""
    page.evaluate(f"([config, width]) => ({DRAW})([{plotly.io.to_json(fig, validate=False)}, config, width])",
                  [config, width])
    return page.locator(".js-plotly-plot")


def exported(page, chart, size: tuple[int, int]):
    """The frame that shows the chart ``chart`` (a locator) as its camera exports it
    (``EXPORT``), having checked that the image is ``size`` (width, height) px."""
    assert tuple(chart.evaluate(EXPORT)) == size
    return page.locator("iframe.export").element_handle().content_frame()


def problems(frame) -> list:
    """Labels outside the image or over each other in an exported figure."""
    found = frame.evaluate(OVERLAPS)
    assert found["checked"] > 0
    return labels_outside(frame, "body") + found["out"]


def listed(found: dict) -> str:
    """``problems`` of each figure that has any, a line each."""
    return "\n".join(f"{name}: {found[name]}" for name in found if found[name])


def page_figures(projector: bool) -> dict:
    """Every figure builder the pages use (``lab.figures``), on small inputs shaped as the
    models give them: long words, CJK and emoji among the tokens, the models' layer names and
    labels, a 12-layer BERT as TF Hub's."""
    rng = np.random.default_rng(0)
    p = projector
    down = np.linspace(1.0, 0.4, 7)
    ta, tb = TOKENS_A, TOKENS_B
    attn = rng.dirichlet(np.ones(len(ta)), size=(2, 3, len(ta)))  # (L, H, T, T)
    curves = [(figures.MODEL_COLOURS["bert"],
               elmo_vs_bert.ModelCurve(BERT, BERT_SHORT, BERT_LAYERS, elmo_vs_bert.depth(7), down,
                                       np.linspace(0.3, 0.5, 7), ("bank", "bank"),
                                       np.zeros((7, 4)), np.zeros((7, 4)))),
              (figures.MODEL_COLOURS["elmo"],
               elmo_vs_bert.ModelCurve(ELMO, ELMO_SHORT, ELMO_LAYERS, elmo_vs_bert.depth(3),
                                       down[:3], np.array([0.9, 0.4, 0.35]), ("bank", "bank"),
                                       np.zeros((3, 4)), np.zeros((3, 4))))]
    labels = np.array([1, 0, 1, 0, 1, 0])
    pairs = [("bank", "a", "b", int(v)) for v in labels]
    tests = [(figures.MODEL_COLOURS[f], elmo_vs_bert.SenseTest(label, short, names, elmo_vs_bert.depth(len(names)),
                                                     rng.uniform(0.4, 0.9, len(names)),
                                                     rng.uniform(0, 1, (6, len(names))), labels, pairs, 2, [0, 1]))
             for f, label, short, names in (("bert", BERT, BERT_SHORT, BERT_LAYERS),
                                            ("elmo", ELMO, ELMO_SHORT, ELMO_LAYERS))]
    slope = senses.Synset("bank.n.01", ("bank",), (25,), "sloping land (especially the slope beside a body of water)")
    money = senses.Synset("depository_financial_institution.n.01", ("depository financial institution", "bank"),
                          (0, 20), "a financial institution that accepts deposits and channels the money into lending")
    ridge = senses.Synset("bank.n.03", ("bank",), (2,), "a long ridge or pile")
    tip = senses.Synset("bank.v.01", ("bank",), (2,), "tip laterally")
    trust = senses.Synset("trust.v.01", ("trust", "bank"), (9, 1), "have confidence or faith in")
    other = senses.Synset("bank.n.04", ("bank",), (1,), "an arrangement of similar objects in a row or in tiers")
    synsets = [slope, money, ridge, tip, trust, other] * 2  # four named senses, "other sense", "sense not known"
    synsets[5] = None
    use_map = elmo_vs_bert.UseMap("bank", "layer 6", rng.normal(0, 0.3, (12, 2)), list(range(12)), [1] * 12,
                                  np.array([[-0.3, 0.1], [0.4, 0.2]]), np.array([0.6, 0.25]),
                                  senses.sense_legend("bank", synsets, ["bank"] * 12))
    hover = [("we sat on the ", "bank", " today")] * 12
    depth_lines = [figures.DepthLine(f"{short}: self-similarity of “bank” (12 sentences)", names,
                                     elmo_vs_bert.depth(len(names)), np.linspace(0.9, 0.5, len(names)), c)
                   for c, short, names in ((0, BERT_SHORT, BERT_LAYERS), (1, ELMO_SHORT, ELMO_LAYERS))]
    depth_lines += [figures.DepthLine(f"{line.name.split(':')[0]}: baseline", line.layer_names, line.depth,
                                      np.full(len(line.depth), 0.3), line.colour, dashed=True)
                    for line in list(depth_lines)]
    return {
        "bert_curve": figures.layer_curve(BERT_LAYERS, {'A "bank" vs B "bank"': down},
                                          "Cosine similarity at every layer",
                                          BERT, p, baseline=np.linspace(0.2, 0.45, 7)),
        "bert_base_curve": figures.layer_curve(BERT_BASE_LAYERS, {'A "bank" vs B "bank"': np.linspace(1, 0.4, 13)},
                                               "Cosine similarity at every layer",
                                               "TF Hub BERT: bert_en_uncased_L-12_H-768_A-12",
                                               p, baseline=np.linspace(0.2, 0.45, 13)),
        "bert_token_map": figures.heatmap(rng.uniform(-1, 1, (7, len(ta))), ta, BERT_LAYERS,
                                          '"bank" (A) against every token of A, per layer', BERT, p,
                                          x_title="tokens of sentence A", y_title="layer"),
        "bert_ab": figures.heatmap(rng.uniform(-1, 1, (len(ta), len(tb))), tb, ta,
                                   "Every token of A against every token of B at layer 6", BERT, p,
                                   x_title="sentence B", y_title="sentence A"),
        "elmo_bars": figures.bar_by_layer(ELMO_BARS, [1.0, 0.62, 0.48, 0.55, 0.31, 0.177],
                                          'Cosine of A "bank" and B "bank" at each layer', ELMO, p,
                                          groups=[0, 0, 0, 0, 1, 1], baseline=[np.nan, 0.35, 0.3, 0.32, 0.24, 0.2]),
        "elmo_few_tokens": figures.heatmap(rng.uniform(-1, 1, (3, 5)), ta[1:6], ELMO_LAYERS,
                                           'A "Antidisestablishmentarianism" against every word, per layer', ELMO, p,
                                           x_title="words of A, then B", y_title="layer"),
        "elmo_runs": figures.layer_curve([f"run {i + 1}" for i in range(12)], {"stateless": np.full(12, 20.0),
                                                                               "stateful": np.linspace(20, 23, 12)},
                                         "Norm of lstm_outputs2 for sentence A, run 12 times", ELMO, p,
                                         y_title="norm", y_range=None, x_title="run"),
        "att_block": figures.attention_heatmap(attn[0, 0], ta, "Head 1, sentence A, mask on", "Transformer block", p,
                                               clickable=False),
        "att_model_view": figures.model_view(attn, ta, "Every head of every layer", BERT, p),
        "att_lines": figures.attention_lines(attn[1, 2, 3], ta, 3, '"bank" in layer 2, head 3', BERT, p),
        "att_block_row": figures.heatmap(attn[1, :, 3], ta, ["H1", "H2", "H3"],
                                         'Where "bank" looks, head by head, in layer 2',
                                   BERT, p, x_title="key (attended to)", y_title="head", zrange=(0.0, 1.0)),
        "cmp_curves": figures.word_curves_chart(curves, False, f"{BERT_SHORT} · {ELMO_SHORT}", p),
        "cmp_self": figures.depth_chart(depth_lines, "Self-similarity of “bank” in the reference corpus",
                                        f"{BERT_SHORT} · {ELMO_SHORT}", p),
        "cmp_uses": figures.use_map_chart(use_map, hover, ("bank", "bank"), "The 12 uses of “bank” at layer 6",
                                          BERT_SHORT, p, width=0.5),
        "cmp_senses": figures.sense_chart(tests, f"{BERT_SHORT} · {ELMO_SHORT}", p),
        "cmp_own": figures.pair_strip({t.short_label: elmo_vs_bert.at_best(t) for _, t in tests},
                                      {BERT_SHORT: 0.42, ELMO_SHORT: None},
                                      "Your pair (sentences A and B, the selected words) among the sense pairs, "
                                      "at each model's best layer", f"{BERT_SHORT} · {ELMO_SHORT}", p),
    }


@pytest.mark.parametrize("projector", [False, True], ids=["normal", "projector"])
def test_every_page_figure_exports_whole(chart_page, projector):
    found = {}
    for key, fig in page_figures(projector).items():
        chart = draw(chart_page, fig, figures.export_config(fig, key))
        found[key] = problems(exported(chart_page, chart, (figures.EXPORT_WIDTH, fig.layout.height)))
    assert not any(found.values()), listed(found)


def test_every_report_figure_exports_whole(browser, small_corpus, tmp_path):
    """The report's HTML (``lab.report.as_html``) on the default sentences, each figure with
    the config the report gives it."""
    sections = report.build(DEFAULT_A, DEFAULT_B, word="bank", store=small_corpus)
    heights = [f.layout.height for s in sections for f in s.figures]
    path = tmp_path / "report.html"
    path.write_text(report.as_html(sections), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(path.as_uri())
    charts = page.locator(".js-plotly-plot")
    charts.nth(len(heights) - 1).locator("svg.main-svg").first.wait_for()
    assert charts.count() == len(heights) == 7  # with the two use maps
    found = {}
    for i, height in enumerate(heights):
        frame = exported(page, charts.nth(i), (figures.EXPORT_WIDTH, height))
        found[frame.evaluate("() => document.querySelector('.gtitle').textContent")] = problems(frame)
    page.close()
    assert not any(found.values()), listed(found)


def test_a_projector_bert_chart_as_its_png(chart_page, tmp_path):
    """The PNG itself, as the camera saves it (kept under pytest's temporary folder, for a
    person to look at): at the config's size and scale."""
    fig = page_figures(True)["bert_curve"]
    config = figures.export_config(fig, "bert_curve")
    url = draw(chart_page, fig, config).evaluate("gd => Plotly.toImage(gd, gd._context.toImageButtonOptions)")
    png = base64.b64decode(url.split(",", 1)[1])
    (tmp_path / f"{config['toImageButtonOptions']['filename']}.png").write_bytes(png)
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")  # the PNG's IHDR
    assert (width, height) == (figures.EXPORT_SCALE * figures.EXPORT_WIDTH, figures.EXPORT_SCALE * fig.layout.height)
