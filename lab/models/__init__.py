"""The model families, and one way to load and run any of them.

``load(family, source)`` returns a model whose ``run`` gives ``lab.vectors.LayerVectors``;
``embed(model, sentences)`` runs it on plain sentences (ELMo reads word tokens, so they are
split first with ``lab.tokenize.split_words``).
"""

from __future__ import annotations

FAMILIES = ("bert", "elmo")
FAMILY_NAMES = {"bert": "BERT", "elmo": "ELMo"}  # as people write them


def load(family: str, source: str | None = None):
    """The model of ``family`` for ``source`` (None: the configured or embedded one).

    Raises ``lab.sources.SourceError`` with a message a person can act on.
    """
    if family == "bert":
        from lab.models.bert_io import load_bert

        return load_bert(source)
    if family == "elmo":
        from lab.models.elmo_io import load_elmo

        return load_elmo(source)
    raise ValueError(f"unknown model {family!r}: use one of {', '.join(FAMILIES)}")


def embed(model, sentences: list[str]):
    """``LayerVectors`` of plain sentences, whatever the model family."""
    if getattr(model, "family", "") != "elmo":
        return model.run(sentences)
    from lab.tokenize import split_words

    tokens = [split_words(s) for s in sentences]
    if not tokens or not all(tokens):
        raise ValueError("Every sentence needs at least one word.")
    return model.run(tokens)
