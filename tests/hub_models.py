"""Build tiny SavedModels with the TF Hub BERT API, for testing the hub code path offline.

The preprocessor has the same call forms as ``bert_en_uncased_preprocess/3``:
``tokenize(strings)`` -> ragged int32 [B, words, pieces] (with
``tokenize.get_special_tokens_dict()``), ``bert_pack_inputs([seg_a, seg_b], seq_length=N)``
-> dict of int32 [B, N], and a vocabulary at ``assets/vocab.txt``. The encoder takes that
dict and returns ``encoder_outputs`` (one [B, T, C] per layer), ``sequence_output``,
``pooled_output`` and ``default``, as the TF Hub BERT encoders do.
"""

from __future__ import annotations

from pathlib import Path

import tensorflow as tf
import tensorflow_text as tf_text

from lab.models.bert import BertConfig, BertEncoder, random_weights


class _Tokenize(tf.Module):
    def __init__(self, vocab_file: Path, special: dict[str, int]):
        super().__init__()
        self.vocab_file = tf.saved_model.Asset(str(vocab_file))
        table = tf.lookup.StaticVocabularyTable(
            tf.lookup.TextFileInitializer(self.vocab_file, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE,
                                          tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER),
            num_oov_buckets=1,
        )
        self._tokenizer = tf_text.BertTokenizer(table, token_out_type=tf.int64, lower_case=True)
        self._special = special

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def __call__(self, strings):
        return tf.cast(self._tokenizer.tokenize(strings), tf.int32)

    @tf.function(input_signature=[])
    def get_special_tokens_dict(self):
        return {k: tf.constant(v, tf.int32) for k, v in self._special.items()}


class _Pack(tf.Module):
    def __init__(self, cls_id: int, sep_id: int):
        super().__init__()
        self._cls, self._sep = cls_id, sep_id

    @tf.function
    def __call__(self, segments, seq_length=tf.constant(128)):
        seq_length = tf.cast(seq_length, tf.int32)
        segments = [tf.cast(s, tf.int64) for s in segments]
        trimmed = tf_text.RoundRobinTrimmer(max_seq_length=seq_length - 1 - len(segments)).trim(segments)
        ids, types = tf_text.combine_segments(trimmed, start_of_sequence_id=self._cls,
                                              end_of_segment_id=self._sep)
        ids, mask = tf_text.pad_model_inputs(ids, max_seq_length=seq_length)
        types, _ = tf_text.pad_model_inputs(types, max_seq_length=seq_length)
        return {"input_word_ids": tf.cast(ids, tf.int32), "input_mask": tf.cast(mask, tf.int32),
                "input_type_ids": tf.cast(types, tf.int32)}


class _Preprocess(tf.Module):
    def __init__(self, vocab_file: Path):
        super().__init__()
        vocab = Path(vocab_file).read_text(encoding="utf-8").splitlines()
        special = {"padding_id": vocab.index("[PAD]"), "start_of_sequence_id": vocab.index("[CLS]"),
                   "end_of_segment_id": vocab.index("[SEP]"), "mask_id": vocab.index("[MASK]"),
                   "vocab_size": len(vocab)}
        self.tokenize = _Tokenize(vocab_file, special)
        self.bert_pack_inputs = _Pack(special["start_of_sequence_id"], special["end_of_segment_id"])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def __call__(self, strings):
        pieces = self.tokenize(strings).merge_dims(-2, -1)
        return self.bert_pack_inputs([pieces], tf.constant(128))


class _Encoder(tf.Module):
    def __init__(self, encoder: BertEncoder):
        super().__init__()
        self._encoder = encoder
        self._num_layers = encoder.config.num_layers

    @tf.function(input_signature=[{k: tf.TensorSpec([None, None], tf.int32)
                                   for k in ("input_word_ids", "input_mask", "input_type_ids")}])
    def __call__(self, inputs):
        out = self._encoder._forward_graph(inputs["input_word_ids"], inputs["input_mask"],
                                           inputs["input_type_ids"])
        layers = [out["hidden_states"][i] for i in range(1, self._num_layers + 1)]
        return {"encoder_outputs": layers, "sequence_output": layers[-1],
                "pooled_output": out["pooled"], "default": out["pooled"]}


def save_tiny_hub_bert(folder: Path, vocab_file: Path, seed: int = 0):
    """Save the tiny preprocessor and encoder; return (encoder_dir, preprocess_dir, weights)."""
    vocab = Path(vocab_file).read_text(encoding="utf-8").splitlines()
    config = BertConfig.tiny(vocab_size=len(vocab))
    weights = random_weights(config, seed)
    pre = _Preprocess(vocab_file)
    ragged = tf.RaggedTensorSpec([None, None], tf.int32)
    pre.bert_pack_inputs.__call__.get_concrete_function([ragged], tf.TensorSpec([], tf.int32))
    pre.bert_pack_inputs.__call__.get_concrete_function([ragged, ragged], tf.TensorSpec([], tf.int32))
    pre_dir, enc_dir = Path(folder) / "preprocess", Path(folder) / "encoder"
    tf.saved_model.save(pre, str(pre_dir))
    tf.saved_model.save(_Encoder(BertEncoder(config, weights)), str(enc_dir))
    return enc_dir, pre_dir, weights
