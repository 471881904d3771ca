"""ELMo-mini's recorded figures: what ``metrics.json`` and the model card say about meaning.

``record(folder, corpus)`` measures a trained ELMo-mini (a folder written by
``python -m lab.elmo_training``) and adds to its ``metrics.json``:

- ``sense_pair_auc``: ``pairs``, ``words``, ``by_layer`` (ROC AUC per layer, standard
  outputs and the context-only views ``context1`` / ``context2``: see ``lab.senses``),
  ``best_standard`` / ``best_context`` ({``layer``, ``auc``}) and ``targets``;
- ``bank_pair``: a fixed "bank" pair ("The central bank raised interest rates." /
  "We sat on the river bank.", not the app's default sentences): the cosine of the two
  "bank"s per layer, and which layers
  are the best standard output and the best context-only view;
- ``anisotropy``: mean cosine of 1,000 random pairs of tokens from different held-out
  sentences, per ELMo-mini layer and per layer of the embedded BERT (MiniLM);
- ``neighbours``: the 5 nearest vocabulary words of 15 common words by ``word_emb`` cosine.

Then it rewrites ``MODEL_CARD.md`` from the figures (``card.write_model_card``).
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

import numpy as np

from lab import senses
from lab.elmo_training.card import write_model_card

BANK_PAIR = ("The central bank raised interest rates.", "We sat on the river bank.", "bank")
COMMON_WORDS = ("river", "money", "dog", "king", "water", "music", "tree", "city", "happy", "run",
                "car", "food", "war", "doctor", "red")
ANISOTROPY_SENTENCES = 400  # held-out sentences drawn (seeded) for the 1,000 token pairs
ANISOTROPY_PAIRS = 1000


def sample_sentences(held_out: list[list[str]], n: int = ANISOTROPY_SENTENCES, seed: int = 0,
                     max_words: int = 40) -> list[list[str]]:
    """``n`` held-out sentences drawn with a seeded generator, cut to ``max_words`` words."""
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(held_out), size=min(n, len(held_out)), replace=False)
    return [held_out[i][:max_words] for i in sorted(picks)]


def elmo_anisotropy(runner, sentences: list[list[str]], batch: int = 50) -> dict[str, float]:
    """Per scored layer (``lab.senses.LAYERS``): mean cosine of random token pairs from
    different sentences (``lab.senses.anisotropy``)."""
    rows = collections.defaultdict(list)
    for i in range(0, len(sentences), batch):
        chunk = sentences[i : i + batch]
        out = runner.run(chunk)
        for name, v in senses.views(out).items():
            rows[name].extend(v[b, : len(s)] for b, s in enumerate(chunk))
    return {name: senses.anisotropy(rows[name], ANISOTROPY_PAIRS) for name in senses.LAYERS}


def bert_anisotropy(bert, sentences: list[list[str]], batch: int = 25) -> dict[str, float]:
    """The same measure for each layer of a BERT (``lab.models.bert``), over its real word
    pieces ([CLS] and [SEP] left out)."""
    rows = collections.defaultdict(list)
    names = None
    for i in range(0, len(sentences), batch):
        out = bert.run([" ".join(s) for s in sentences[i : i + batch]])
        names = out.layer_names
        for b, tokens in enumerate(out.tokens):
            keep = [t not in ("[CLS]", "[SEP]") for t in tokens]
            positions = np.flatnonzero(out.mask[b])[keep]
            for n, name in enumerate(names):
                rows[name].append(out.layers[n, b, positions])
    return {name: senses.anisotropy(rows[name], ANISOTROPY_PAIRS) for name in names}


def word_vectors(runner, words: list[str], batch: int = 1000) -> np.ndarray:
    """``word_emb`` of each word alone: (N, P)."""
    return np.concatenate([runner.run([[w] for w in words[i : i + batch]]).elmo.word_emb[:, 0]
                           for i in range(0, len(words), batch)])


def nearest_neighbours(runner, vocab: list[str], queries=COMMON_WORDS, k: int = 5) -> dict[str, list]:
    """The ``k`` nearest ``vocab`` words of each query by ``word_emb`` cosine: word -> [[word, cos], ...]."""
    vocab = [w for w in vocab if w.isalpha()]
    v = word_vectors(runner, vocab)
    v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    q = word_vectors(runner, list(queries))
    q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
    sims = q @ v.T  # (Q, V)
    out = {}
    for i, word in enumerate(queries):
        order = [j for j in np.argsort(-sims[i]) if vocab[j] != word][:k]
        out[word] = [[vocab[j], round(float(sims[i, j]), 3)] for j in order]
    return out


def sense_figures(runner) -> tuple[dict, dict]:
    """(``sense_pair_auc``, ``bank_pair``) entries of metrics.json."""
    by_layer = senses.layer_aucs(runner)
    std = senses.best_layer(by_layer, senses.CONTEXTUAL)
    ctx = senses.best_layer(by_layer, senses.CONTEXT)
    auc = {
        "pairs": len(senses.sense_pairs()),
        "words": len(senses.senses()),
        "by_layer": by_layer,
        "best_standard": {"layer": std, "auc": by_layer[std]},
        "best_context": {"layer": ctx, "auc": by_layer[ctx]},
        "targets": {"standard": senses.SENSE_AUC_TARGET, "context": senses.CONTEXT_AUC_TARGET},
    }
    a, b, word = BANK_PAIR
    cos = senses.word_cosines(runner, a, b, word)
    bank = {"sentence_a": a, "sentence_b": b, "word": word, "cosine_by_layer": cos,
            "best_standard": {"layer": std, "cosine": cos[std]}, "best_context": {"layer": ctx, "cosine": cos[ctx]}}
    return auc, bank


def record(folder: str | Path, held_out: list[list[str]], vocab: list[str], bert=None, log=print) -> dict:
    """Measure the ELMo-mini in ``folder``, add the figures to its metrics.json, rewrite the card."""
    from lab.models.bert_io import load_bert
    from lab.models.elmo_io import load_elmo

    folder = Path(folder)
    runner = load_elmo(str(folder))
    metrics = json.loads((folder / "metrics.json").read_text())
    metrics["sense_pair_auc"], metrics["bank_pair"] = sense_figures(runner)
    log("sense AUC: " + json.dumps({k: round(v, 3) for k, v in metrics["sense_pair_auc"]["by_layer"].items()}))
    sample = sample_sentences(held_out)
    metrics["anisotropy"] = {
        "pairs": ANISOTROPY_PAIRS,
        "sentences": len(sample),
        "elmo_mini": elmo_anisotropy(runner, sample),
        "bert": bert_anisotropy(bert or load_bert(), sample),
        "bert_model": "all-MiniLM-L6-v2 (embedded)",
    }
    metrics["neighbours"] = nearest_neighbours(runner, vocab[:20_000])
    (folder / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    write_model_card(folder, metrics)
    return metrics
