"""WordPiece for BERT (tensorflow-text): pieces, model inputs and their alignment to words.

Apart from ``lab.tokenize`` (input checks and word tokens, no TensorFlow) so that a page can
check and split a sentence without importing TensorFlow (``lab.stored``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text

from lab.serving import EagerUntilTraced
from lab.tokenize import Encoding, clean_text

# BERT has 512 positions: [CLS] + 510 pieces + [SEP] for one sentence.
MAX_POSITIONS = 512

# Printable ASCII and the whitespace BERT splits on. Text made of these alone is tokenized in
# Python, exactly as tensorflow-text does it (a test compares them), without a graph call,
# several times cheaper for classroom sentences. There every character that is neither
# a letter, a digit nor whitespace is punctuation, a word of its own; nothing to normalize.
_ASCII = frozenset(map(chr, range(32, 127))) | {"\t", "\n", "\r"}
_ASCII_WORDS = re.compile(r"[A-Za-z0-9]+|[^\sA-Za-z0-9]")
MAX_WORD_CHARS = 100  # a longer word is one [UNK] (tensorflow-text's max_bytes_per_word)


class WordPieceTokenizer:
    """BERT's uncased WordPiece via tensorflow-text's ``FastBertTokenizer`` (printable ASCII
    text in Python, with the same pieces and offsets: ``_tokenize_ascii``).

    Lower-cases, strips accents (NFD), splits punctuation and CJK characters, then
    WordPiece with ``##`` continuations, exactly as BERT's reference tokenizer does.
    """

    def __init__(self, vocab: Sequence[str], lower_case: bool = True):
        self.vocab = list(vocab)
        index = {tok: i for i, tok in enumerate(self.vocab)}
        missing = [t for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]") if t not in index]
        if missing:
            raise ValueError(f"vocabulary lacks the special tokens {missing}")
        self.pad_id, self.unk_id = index["[PAD]"], index["[UNK]"]
        self.cls_id, self.sep_id = index["[CLS]"], index["[SEP]"]
        self._tokenizer = tf_text.FastBertTokenizer(
            vocab=self.vocab,
            token_out_type=tf.int64,
            lower_case_nfd_strip_accents=lower_case,
        )
        self._tokenize = EagerUntilTraced(tf.function(
            self._tokenize_graph, input_signature=[tf.TensorSpec([None], tf.string)], autograph=False
        ))
        self._index, self._lower_case = index, lower_case

    @property
    def graphs(self) -> tuple[EagerUntilTraced, ...]:
        """The tokenizer's graph, for a server to trace in the background while it answers
        eagerly (``lab.models.bert.BertEncoder.serve``)."""
        return (self._tokenize,)

    @classmethod
    def from_file(cls, vocab_file: str | Path, lower_case: bool = True) -> "WordPieceTokenizer":
        return cls(Path(vocab_file).read_text(encoding="utf-8").splitlines(), lower_case)

    def _tokenize_graph(self, texts):
        ids, starts, ends = self._tokenizer.tokenize_with_offsets(texts)
        return ids.flat_values, ids.row_lengths(), starts.flat_values, ends.flat_values

    def encode(self, texts: Sequence[str], max_pieces: int = MAX_POSITIONS - 2) -> list[Encoding]:
        """Tokenize each text; keep at most ``max_pieces`` pieces (``truncated`` says so)."""
        cleaned = [clean_text(t) for t in texts]
        if all(_ASCII.issuperset(t) for t in cleaned):
            flat_ids, lengths, starts, ends = self._tokenize_ascii(cleaned)
        else:
            flat_ids, lengths, starts, ends = (
                x.numpy() for x in self._tokenize(tf.constant(cleaned, dtype=tf.string))
            )
        out, pos = [], 0
        for text, n in zip(cleaned, lengths.tolist()):
            ids = flat_ids[pos : pos + n].tolist()
            byte_spans = list(zip(starts[pos : pos + n].tolist(), ends[pos : pos + n].tolist()))
            pos += n
            out.append(self._encoding(text, ids[:max_pieces], byte_spans[:max_pieces], n > max_pieces))
        return out

    def _tokenize_ascii(self, texts: list[str]) -> tuple[np.ndarray, ...]:
        """What ``_tokenize_graph`` returns, for texts of ``_ASCII`` only (offsets in bytes,
        which are characters here)."""
        ids, lengths, starts, ends = [], [], [], []
        for text in texts:
            n = len(ids)
            for word in _ASCII_WORDS.finditer(text):
                w0 = word.start()
                for i, s, e in self._word_pieces(word.group()):
                    ids.append(i)
                    starts.append(w0 + s)
                    ends.append(w0 + e)
            lengths.append(len(ids) - n)
        return np.array(ids, np.int64), np.array(lengths, np.int64), np.array(starts), np.array(ends)

    def _word_pieces(self, word: str) -> list[tuple[int, int, int]]:
        """(id, start, end) of each piece of an ASCII word: WordPiece's longest match first,
        ``##`` before a continuation; the whole word one [UNK] when a part matches nothing."""
        key = word.lower() if self._lower_case else word
        pieces, start = [], 0
        while start < len(key) and len(key) <= MAX_WORD_CHARS:
            for end in range(len(key), start, -1):
                piece = key[start:end] if start == 0 else "##" + key[start:end]
                if piece in self._index:
                    pieces.append((self._index[piece], start, end))
                    break
            else:  # no piece of the vocabulary starts here
                break
            start = end
        return pieces if start == len(key) else [(self.unk_id, 0, len(word))]

    def _encoding(self, text, ids, byte_spans, truncated) -> Encoding:
        # tensorflow-text reports UTF-8 byte offsets; the page works in characters (the same
        # numbers when every character is one byte).
        if len(text.encode("utf-8")) == len(text):
            spans = [(int(s), int(e)) for s, e in byte_spans]
        else:
            char_at = np.zeros(len(text.encode("utf-8")) + 1, dtype=np.int64)
            b = 0
            for c, ch in enumerate(text):
                n = len(ch.encode("utf-8"))
                char_at[b : b + n] = c
                b += n
            char_at[b] = len(text)
            spans = [(int(char_at[s]), int(char_at[e])) for s, e in byte_spans]
        pieces = [self.vocab[i] for i in ids]
        word_index, words = [], []
        for piece, (s, e) in zip(pieces, spans):
            if not piece.startswith("##") or not words:
                words.append([s, e])
            else:  # a continuation piece extends the current word
                words[-1][1] = e
            word_index.append(len(words) - 1)
        return Encoding(
            text=text,
            pieces=pieces,
            ids=ids,
            spans=spans,
            word_index=word_index,
            words=[text[s:e] for s, e in words],
            truncated=truncated,
        )

    def pack(
        self,
        first: Sequence[Encoding],
        second: Sequence[Encoding] | None = None,
        seq_length: int | None = None,
    ) -> dict[str, np.ndarray]:
        """Pack like the TF Hub preprocessor's ``bert_pack_inputs``.

        ``[CLS] A [SEP]`` per row, or ``[CLS] A [SEP] B [SEP]`` when ``second`` is given;
        segments are trimmed round-robin to fit ``seq_length`` (default: the longest row,
        at most 512). Returns int32 ``input_word_ids``, ``input_mask`` (1 = real token)
        and ``input_type_ids`` (0 for A, 1 for B), each (B, seq_length).
        """
        if second is None:
            lengths = np.array([[len(x.ids)] for x in first])  # (B, 1)
        else:
            lengths = np.array([[len(x.ids), len(y.ids)] for x, y in zip(first, second)])  # (B, 2)
        longest = int(lengths.sum(1).max()) + 1 + lengths.shape[1]
        seq_length = seq_length or min(longest, MAX_POSITIONS)
        kept = round_robin(lengths, seq_length - 1 - lengths.shape[1])
        B = len(first)
        ids = np.zeros((B, seq_length), np.int32)
        mask = np.zeros((B, seq_length), np.int32)
        types = np.zeros((B, seq_length), np.int32)
        for row, segments in enumerate(zip(first, *(() if second is None else (second,)))):
            pos = 1
            ids[row, 0] = self.cls_id
            for s, (enc, n) in enumerate(zip(segments, kept[row])):
                ids[row, pos : pos + n] = enc.ids[:n]
                ids[row, pos + n] = self.sep_id
                types[row, pos : pos + n + 1] = s
                pos += n + 1
            mask[row, :pos] = 1
        return {"input_word_ids": ids, "input_mask": mask, "input_type_ids": types}


def round_robin(lengths: np.ndarray, budget: int) -> np.ndarray:
    """How many pieces of each segment to keep, (B, S) -> (B, S), as tensorflow-text's
    ``RoundRobinTrimmer``: one piece from each segment in turn, first segment first, while
    the budget lasts and a segment has pieces left.

    A segment shorter than its equal share keeps everything, and the others share the rest:
    with two segments, the shorter keeps min(length, budget // 2) (the first keeps the odd
    piece when both are long), the other takes what is left.
    """
    lengths = np.asarray(lengths)
    if lengths.shape[1] == 1:
        return np.minimum(lengths, budget)
    if lengths.shape[1] != 2:
        raise ValueError(f"one or two segments, got {lengths.shape[1]}")
    a, b = lengths[:, 0], lengths[:, 1]
    kb = np.where(a >= (budget + 1) // 2, np.minimum(b, budget // 2), np.minimum(b, budget - a))
    ka = np.minimum(a, budget - kb)
    return np.stack([ka, kb], axis=1)
