"""A board's downloads, row for row: the sentences as CSV and each model's vectors as .npz.

Both hold every sentence of the board in arrival order, hidden and held ones included (each
says so in its ``hidden`` and ``held`` columns), so row b of the CSV is row b of the .npz:
the same number, sentence, sense, time, hidden and held. Times are ISO 8601 with their date
and offset in the teacher's time zone (``rules.iso_time``).

The .npz is the export contract of ``python -m lab export`` (``lab.vectors.to_arrays``:
``tokens``, ``mask``, ``layers``, ``layer_names``, ``model``, and for BERT ``attentions``
where the source gives them and ``input_word_ids``) with the board's own arrays added, one
entry per row (B rows):

- ``number`` int32 (B,): the sentence's number on the board;
- ``sentence`` unicode (B,): the sentence as stored;
- ``sense`` unicode (B,): the sense its writer chose, "" where they did not say;
- ``time`` unicode (B,): when it arrived, as in the CSV;
- ``hidden`` bool (B,): hidden from the projector by the teacher;
- ``held`` bool (B,): waiting for the teacher's approval (not on the projector either);
- ``word_span`` int32 (B, 2): the first and last token position (inclusive, on the T axis
  of ``tokens`` and ``layers``) of the board's word in that row: one position for a word
  the model reads as one token, the word's pieces for one it splits; -1, -1 where the
  model has no token for it (cut off at its length limit);
- ``word`` unicode (): the board's word.

Every array is numeric, boolean or fixed-width unicode: plain ``numpy.load`` reads it.
Markup in a sentence stays text in both files (a CSV cell a spreadsheet would read as a
formula starts with ``'``: ``rules.csv_bytes``).
"""

from __future__ import annotations

import io
from typing import Sequence

import numpy as np

from lab.board import rules
from lab.elmo_vs_bert import align
from lab.tokenize import split_words
from lab.vectors import LayerVectors, to_arrays

# The keys the board adds to the export contract (``lab.vectors.to_arrays``).
BOARD_KEYS = ("number", "sentence", "sense", "time", "hidden", "held", "word_span", "word")


def rows(entries: Sequence, zone: str | None = None) -> list[dict]:
    """``entries`` (``lab.board.store.Entry``) as rows of ``rules.csv_bytes``, times as
    ``rules.iso_time`` in ``zone``."""
    return [{"number": e.number, "sentence": e.text, "sense": e.sense or "", "time": rules.iso_time(e.created, zone),
             "hidden": e.hidden, "held": not e.approved} for e in entries]


def csv_bytes(entries: Sequence, zone: str | None = None) -> bytes:
    """Every sentence of ``entries`` as the board's CSV (``rules.csv_bytes``)."""
    return rules.csv_bytes(rows(entries, zone), zone)


def word_spans(out: LayerVectors, uses: Sequence[int]) -> np.ndarray:
    """(B, 2) int32: the first and last token position of word ``uses[b]`` (an index into
    ``lab.tokenize.split_words`` of row b's sentence) in each row of ``out`` (one sentence
    per row, either family); -1, -1 where the model has no token for it."""
    aligned = align(out)
    if len(uses) != len(aligned.words):
        raise ValueError(f"{len(uses)} uses for {len(aligned.words)} rows")
    spans = np.full((len(uses), 2), -1, np.int32)
    for b, w in enumerate(uses):
        positions = aligned.positions(b, w) if 0 <= w < len(aligned.words[b]) else []
        if positions:
            spans[b] = min(positions), max(positions)
    return spans


def arrays(out: LayerVectors, entries: Sequence, word: str, zone: str | None = None) -> dict[str, np.ndarray]:
    """The board's .npz arrays (see the module's docstring): ``out`` is the run of
    ``entries``' sentences, one per row, in the same order.

    Raises:
        ValueError: ``out``'s rows are not ``entries``' sentences.
    """
    texts = [e.text for e in entries]
    # ELMo reads a sentence's words, and its run holds them joined by spaces
    if list(out.sentences) not in (texts, [" ".join(split_words(t)) for t in texts]):
        raise ValueError(f"the run's {len(out.sentences)} sentences are not the board's {len(texts)}")
    table = rows(entries, zone)
    board = {
        "number": np.array([r["number"] for r in table], np.int32).reshape(-1),
        "sentence": np.array(texts, dtype=str).reshape(-1),
        "sense": np.array([r["sense"] for r in table], dtype=str).reshape(-1),
        "time": np.array([r["time"] for r in table], dtype=str).reshape(-1),
        "hidden": np.array([r["hidden"] for r in table], bool).reshape(-1),
        "held": np.array([r["held"] for r in table], bool).reshape(-1),
        "word_span": word_spans(out, [e.use_index for e in entries]),
        "word": np.array(word, dtype=str),
    }
    return {**to_arrays(out), **board}


def npz_bytes(out: LayerVectors, entries: Sequence, word: str, zone: str | None = None) -> bytes:
    """``arrays`` as the bytes of a compressed .npz, saved without pickle."""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, allow_pickle=False, **arrays(out, entries, word, zone))
    return buffer.getvalue()
