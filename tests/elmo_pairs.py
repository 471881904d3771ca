"""Ambiguous-word sentences for checking that ELMo separates word senses by context.

Written for this project's tests. Each word has two senses with two sentences each; the
word appears once per sentence, in the same form. ``sense_pairs()`` pairs every two
sentences of a word: same-sense pairs (label 1) and different-sense pairs (label 0).
``layer_aucs(runner)`` scores an ELMo runner on them: per layer, the ROC AUC of the cosine
between the word's two vectors (used by the tests and by ``tools/record_elmo_senses.py``).
"""

from __future__ import annotations

import itertools

import numpy as np

from lab.tokenize import split_words

LAYERS = ("word_emb", "lstm_outputs1", "lstm_outputs2", "elmo")

SENSES: dict[str, dict[str, list[str]]] = {
    "bank": {
        "river": [
            "We sat on the grassy bank of the river and watched the boats.",
            "The children fished from the muddy bank of the stream.",
        ],
        "money": [
            "She deposited her salary at the bank on Monday.",
            "The bank approved the loan for the new house.",
        ],
    },
    "bat": {
        "animal": [
            "A bat flew out of the dark cave at night.",
            "The bat hung upside down from the branch and slept.",
        ],
        "club": [
            "He swung the bat and hit the ball over the fence.",
            "The player dropped his wooden bat after the last game.",
        ],
    },
    "spring": {
        "season": [
            "The flowers bloom early in the spring after the cold winter.",
            "Birds return from the south every spring when the weather warms.",
        ],
        "water": [
            "They drank cold water from a spring in the mountains.",
            "The village gets its water from a clear spring below the hill.",
        ],
    },
    "bark": {
        "tree": [
            "The bark of the old oak tree was rough and thick.",
            "Beetles live under the bark of dead trees.",
        ],
        "dog": [
            "The dog gave a loud bark when the stranger came to the door.",
            "We heard the bark of a dog in the distance.",
        ],
    },
    "light": {
        "illumination": [
            "Turn on the light so we can read the book.",
            "The light from the lamp filled the small room.",
        ],
        "weight": [
            "The box was light enough for a child to carry.",
            "She packed a light bag for the short trip.",
        ],
    },
    "match": {
        "fire": [
            "He struck a match to start the fire in the stove.",
            "The match burned down to his fingers.",
        ],
        "game": [
            "Our team won the football match on Saturday.",
            "The tennis match lasted for three hours.",
        ],
    },
    "plant": {
        "organism": [
            "Water the plant every day so that its leaves stay green.",
            "This plant grows tall flowers in the garden.",
        ],
        "factory": [
            "The workers at the power plant produce electricity for the city.",
            "The company built a new plant to manufacture engines.",
        ],
    },
    "crane": {
        "bird": [
            "A crane stood in the shallow water looking for fish.",
            "The crane spread its long wings and flew over the marsh.",
        ],
        "machine": [
            "The crane lifted the heavy steel beams onto the building.",
            "The workers used a crane to load containers onto the ship.",
        ],
    },
    "pitcher": {
        "baseball": [
            "The pitcher threw the ball past the batter.",
            "Our best pitcher played in the baseball game yesterday.",
        ],
        "jug": [
            "She poured milk from the pitcher into a glass.",
            "The pitcher of water sat on the kitchen table.",
        ],
    },
    "seal": {
        "animal": [
            "The seal swam in the cold ocean and caught a fish.",
            "A seal rested on the rocks near the beach.",
        ],
        "stamp": [
            "The king pressed his seal into the wax on the letter.",
            "The official seal on the document showed that it was genuine.",
        ],
    },
    "bass": {
        "fish": [
            "He caught a large bass in the lake.",
            "The bass swam near the bottom of the river.",
        ],
        "music": [
            "She plays the bass in a jazz band.",
            "The deep bass of the music shook the walls.",
        ],
    },
    "palm": {
        "tree": [
            "A tall palm grew on the sandy beach.",
            "The coconut fell from the palm onto the sand.",
        ],
        "hand": [
            "He held the coin in the palm of his hand.",
            "She read the lines on the palm of my hand.",
        ],
    },
}


def sense_pairs() -> list[tuple[str, str, str, int]]:
    """Every pair of sentences of the same word: (word, sentence_a, sentence_b, same_sense)."""
    out = []
    for word, senses in SENSES.items():
        tagged = [(sense, s) for sense, sentences in senses.items() for s in sentences]
        for (sa, a), (sb, b) in itertools.combinations(tagged, 2):
            out.append((word, a, b, int(sa == sb)))
    return out


def roc_auc(scores, labels) -> float:
    """P(score of a positive > score of a negative), ties counting half (Mann-Whitney)."""
    scores, labels = np.asarray(scores, float), np.asarray(labels, int)
    pos, neg = scores[labels == 1], scores[labels == 0]
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return float((greater + 0.5 * ties) / (len(pos) * len(neg)))


def target_vectors(runner, sentences: list[str], words: list[str]) -> np.ndarray:
    """(3 + 1, N, C): each sentence's vector of its target word in every layer, + elmo."""
    tokens = [split_words(s) for s in sentences]
    index = [[t.lower() for t in toks].index(w) for toks, w in zip(tokens, words)]
    out = runner.run(tokens)
    rows = np.arange(len(tokens))
    layers = np.concatenate([out.layers, out.elmo.elmo[None]], axis=0)  # (4, N, T, C)
    return layers[:, rows, index]


def layer_aucs(runner) -> dict[str, float]:
    """ROC AUC, per layer, of the cosine between a word's vectors in two sentences,
    same-sense pairs (positives) against different-sense pairs (negatives)."""
    pairs = sense_pairs()
    labels = [same for *_, same in pairs]
    words = [p[0] for p in pairs]
    a = target_vectors(runner, [p[1] for p in pairs], words)
    b = target_vectors(runner, [p[2] for p in pairs], words)
    cos = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))  # (4, N)
    return {name: roc_auc(cos[i], labels) for i, name in enumerate(LAYERS)}
