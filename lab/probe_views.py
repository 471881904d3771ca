"""What the "What each layer knows" page computes from stored probes (``lab.probes``): the
quiz question, the sentences under the charts, one word's probabilities at every layer."""

from __future__ import annotations

from typing import Any

import numpy as np

from lab import probe_data
from lab.quiz import Question, _choices


def quiz_question(p: Any, task: str = "pos") -> Question:
    """"At which layer does <model> know the <task> best?": the choices are the model's
    layers, the answer the highest held-out accuracy (the first on ties), as the chart shows."""
    t = p.tasks[probe_data.check_task(task)]
    choices, values = _choices({p.short_label: (p.layer_names, [s.accuracy.value for s in t.scores])}, "accuracies")
    return Question(f"At which layer does {p.short_label} know the {probe_data.TASK_NAMES[task]} best "
                    "(highest held-out accuracy)?", tuple(choices), int(np.argmax(values)))


def word_rows(g: Any, t: int, top: int = 3) -> list[dict]:
    """Word ``t`` of a ``lab.probes.Guesses``: one row per layer with its ``top`` classes and
    their probabilities (rounded to 3 decimals); one row saying so for a word outside."""
    if not 0 <= t < len(g.words):
        raise ValueError(f"no word {t} in a sentence of {len(g.words)} words")
    if not g.inside[t]:
        return [{"layer": name, "guess": None, "p": None, "then": "outside the task's classes"}
                for name in g.layer_names]
    rows = []
    for n, name in enumerate(g.layer_names):
        p = g.probabilities[n, t]
        order = np.argsort(-p, kind="stable")[:top]
        rows.append({"layer": name, "guess": g.classes[order[0]], "p": round(float(p[order[0]]), 3),
                     "then": " · ".join(f"{g.classes[k]} {p[k]:.3f}" for k in order[1:])})
    return rows


def layer_pattern(p: Any, task: str) -> str:
    """Where a task peaks in a model, from its numbers: "peaks at layer 3 of 6 (relative depth
    0.50), selectivity highest at layer 4"."""
    t = p.tasks[probe_data.check_task(task)]
    best, n = t.best(), len(p.layer_names) - 1
    sel = int(np.argmax([s.selectivity.value for s in t.scores]))
    return (f"{p.short_label}: accuracy peaks at {p.layer_names[best]} (relative depth {best / max(1, n):.2f}), "
            f"selectivity at {p.layer_names[sel]} ({t.scores[sel].selectivity.value:+.2f})")
