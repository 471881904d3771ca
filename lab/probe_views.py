"""What the pages compute from stored probes (``lab.probes``): on "What each layer knows" the
quiz question, the sentences under the charts and one word's probabilities at every layer; on
the class board the supersense probe's accuracy on the room's labelled sentences."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lab import probe_data
from lab.quiz import Question, _choices

GRID_WORDS = 40  # the most words a live grid shows: more rows would not be legible on one screen


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


# --- the class board: the supersense probe on the room's labelled sentences ----------------------

# A preset board's senses (lab.board.rules.PRESETS) -> the supersense of the WordNet synset each
# names (its lexicographer file): money-bank is depository_financial_institution (noun.group),
# river-bank sloping land (noun.object); WordNet files plant as flora under noun.Tops
PRESET_SUPERSENSES = {
    "bank": {"money": "noun.group", "river": "noun.object"},
    "bat": {"animal": "noun.animal", "sport": "noun.artifact"},
    "spring": {"season": "noun.time", "water": "noun.object", "coil": "noun.artifact"},
    "plant": {"factory": "noun.artifact", "living": "noun.Tops"},
    "rock": {"stone": "noun.object", "music": "noun.communication"},
}
# Presets whose senses do not all have a supersense, and why
NO_SUPERSENSES = {
    "light": "its sense “not heavy” is an adjective, and WordNet gives adjectives no supersense",
}


def board_mapping(word: str, senses: tuple[str, ...]) -> tuple[dict[str, str] | None, str]:
    """The supersense of each of a board's senses, where the board is a preset's (its word and
    senses as the preset has them), else None and why not."""
    key = word.casefold()
    if key in NO_SUPERSENSES:
        return None, f"The “{word}” preset has no supersense mapping: {NO_SUPERSENSES[key]}."
    mapping = PRESET_SUPERSENSES.get(key)
    if mapping is None or set(senses) != set(mapping):
        return None, ("The supersense probe is tested on boards made from a preset (bank, bat, spring, plant, "
                      "rock), whose senses map to WordNet's supersenses; this board's senses have no mapping.")
    return mapping, ""


@dataclass(frozen=True)
class BoardProbe:
    """The supersense probe of one model on a board's labelled sentences."""

    short_label: str
    layer_names: tuple[str, ...]
    accuracy: np.ndarray  # (N,): share of the labelled uses whose guess is their sense's supersense
    used: int  # labelled uses scored
    guesses: list  # (N, U') the guessed class of each scored use at each layer


def board_probe(p: Any, vectors: np.ndarray, senses: list[str | None], mapping: dict[str, str]) -> BoardProbe:
    """``p``'s supersense probes on a board's uses: ``vectors`` (N, U, C) at every layer (the
    board's), ``senses`` each use's sense (None: not said); a use whose sense has a supersense
    in ``mapping`` is scored. Raises ValueError when the layers do not match the probes'."""
    t = p.tasks["supersense"]
    v = np.asarray(vectors, np.float32)
    if v.ndim != 3 or v.shape[0] != len(t.probes) or v.shape[1] != len(senses):
        raise ValueError(f"board_probe needs ({len(t.probes)}, {len(senses)}, C) vectors, got {v.shape}")
    keep = [i for i, s in enumerate(senses) if s in mapping and mapping[s] in t.classes]
    want = np.array([t.classes.index(mapping[senses[i]]) for i in keep], np.int64)
    guesses, accuracy = [], np.full(len(t.probes), np.nan)
    for n, probe in enumerate(t.probes):
        got = probe.predict(v[n, keep]) if keep else np.zeros(0, np.int64)
        guesses.append([t.classes[k] for k in got])
        if keep:
            accuracy[n] = float(np.mean(got == want))
    return BoardProbe(p.short_label, tuple(p.layer_names), accuracy, len(keep), guesses)
