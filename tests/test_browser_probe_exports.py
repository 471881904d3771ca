"""The figures of *What each layer knows* exported whole by the toolbar's camera, in both
looks: the accuracy chart of every task (accuracy and selectivity), the live grid of each
task on a sentence with closed-class words, and the board's supersense probe chart, built
from probes trained on a part of the data (``tests.test_probes.small``)."""

from __future__ import annotations

import pytest

from lab import figures, probe_data, probe_views, probes
from lab.board.maps import use_vectors
from lab.elmo_vs_bert import align
from lab.figures import MODEL_COLOURS
from tests.test_browser_exports import chart_page, draw, exported, listed, problems  # noqa: F401 - a fixture
from tests.test_probes import small  # noqa: F401 - a fixture

pytestmark = pytest.mark.browser


def probe_figures(small, projector: bool) -> dict:  # noqa: F811 - the fixture's value
    _, model, found = small
    have, label = [(MODEL_COLOURS["bert"], found)], found.short_label
    out = {}
    for task in probe_data.TASKS:
        name = probe_data.TASK_NAMES[task]
        for sel in (False, True):
            out[f"{task} chart{' selectivity' if sel else ''}"] = figures.probe_chart(have, task, name, sel, label,
                                                                                      projector)
        grid = probes.live(found, model, "I bank with them, and we sat on the river bank yesterday.", task)
        out[f"{task} grid"] = figures.guess_grid(grid, f"{name.capitalize()}: each word's guess at every layer",
                                                 label, projector)
    texts = ["I paid the cheque into the bank.", "We sat on the bank of the river."]
    board = probe_views.board_probe(found, use_vectors(align(model.run(texts)), [6, 3]), ["money", "river"],
                                    probe_views.PRESET_SUPERSENSES["bank"])
    out["board"] = figures.board_probe_chart([(MODEL_COLOURS["bert"], board)], "bank", label, projector)
    return out


@pytest.mark.parametrize("projector", [False, True], ids=["normal", "projector"])
def test_every_probe_figure_exports_whole(chart_page, small, projector):  # noqa: F811 - the fixtures
    found = {}
    for key, fig in probe_figures(small, projector).items():
        chart = draw(chart_page, fig, figures.export_config(fig, key))
        found[key] = problems(exported(chart_page, chart, (figures.EXPORT_WIDTH, fig.layout.height)))
    assert len(found) == 3 * 3 + 1 and not any(found.values()), listed(found)
