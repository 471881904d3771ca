"""Quiz questions for the classroom, built from the numbers a page is about to show.

``least_alike`` asks where two uses of a word are least alike, over the layers of one
model or of several; the right answer is the layer with the lowest cosine (the first on
ties), so the question always matches the figure that "Reveal" draws. ``best_separating``
asks which layer sorts a class board's sentences most like the class's senses: the
highest ROC AUC (the first on ties).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np


@dataclass(frozen=True)
class Question:
    text: str
    choices: tuple[str, ...]
    answer: int  # index into ``choices``

    @property
    def right(self) -> str:
        return self.choices[self.answer]


def _choices(models: dict[str, tuple[Sequence[str], Sequence[float]]], what: str) -> tuple[list[str], list[float]]:
    """Each model's layers as choices ("model · layer" with several models) and their values."""
    if not models:
        raise ValueError("a question needs at least one model's numbers")
    choices, values = [], []
    for name, (layers, numbers) in models.items():
        if len(layers) != len(numbers):
            raise ValueError(f"{name}: {len(numbers)} {what} for {len(layers)} layers")
        choices += [str(n) if len(models) == 1 else f"{name} · {n}" for n in layers]
        values += [float(c) for c in numbers]
    return choices, values


def least_alike(words: tuple[str, str], models: dict[str, tuple[Sequence[str], Sequence[float]]]) -> Question:
    """"At which layer are A's word and B's word least alike?"

    ``models`` maps a model's short name to its (layer names, cosines per layer). With one
    model the choices are its layer names; with several, "model · layer".
    """
    choices, values = _choices(models, "cosines")
    a, b = words
    pair = f"the two “{a}”s" if a.casefold() == b.casefold() else f"“{a}” (sentence A) and “{b}” (sentence B)"
    where = f"{next(iter(models))} layer" if len(models) == 1 else "layer of either model"
    return Question(f"At which {where} are {pair} least alike (lowest cosine)?", tuple(choices),
                    int(np.argmin(values)))


def best_separating(models: dict[str, tuple[Sequence[str], Sequence[float]]]) -> Question:
    """"At which layer are our sentences sorted most like our senses?" on a class board.

    ``models`` maps a model's short name to its (layer names, ROC AUC per layer:
    ``lab.board.maps.separation``). Choices as in ``least_alike``; the answer is the
    highest ROC AUC, the first on ties.
    """
    choices, values = _choices(models, "ROC AUCs")
    where = f"{next(iter(models))} layer" if len(models) == 1 else "layer of either model"
    return Question(f"At which {where} are our sentences sorted most like our senses (highest ROC AUC)?",
                    tuple(choices), int(np.argmax(values)))


def most_weight(query: str, keys: Sequence[str], weights: Sequence[float]) -> Question:
    """"Which key will get the most weight?" before a head's softmax is drawn: the choices
    are the keys ("position · token", so a repeated word is told apart), the answer the
    largest weight (the first on ties)."""
    if len(keys) != len(weights) or not len(keys):
        raise ValueError(f"{len(weights)} weights for {len(keys)} keys")
    return Question(f"Which key will “{query}” give the most weight?",
                    tuple(f"{j} · {k}" for j, k in enumerate(keys)), int(np.argmax(weights)))
