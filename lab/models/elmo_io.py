"""ELMo I/O: the runners the app calls, the loaders and the SavedModel export.

- ``ElmoRunner`` runs an in-memory ``ElmoModel`` (stateless, stateful, dropout at
  inference); ``HubElmoRunner`` runs a TF Hub ELMo or any SavedModel with the v3
  ``tokens`` signature. Both return ``lab.vectors.LayerVectors``.
- ``load_allennlp`` / ``save_allennlp`` read and write bilm-tf's ``options.json`` +
  weights hdf5; ``load_elmo`` picks the loader for a source (embedded ELMo-mini, an
  AllenNLP folder, a SavedModel folder or a TF Hub handle).
- ``export_saved_model`` writes a TF2 SavedModel with ELMo v3's ``default`` and
  ``tokens`` signatures, so the embedded model and a hub model share one code path.

Shape letters as in ``lab.models.elmo``: B batch, T tokens, P projection, C = 2P.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict
from pathlib import Path

import numpy as np
import tensorflow as tf

from lab import sources
from lab.models.elmo import (
    CHARS_PER_TOKEN,
    OUTPUT_KEYS,
    ElmoConfig,
    ElmoModel,
    add_sentence_boundaries,
    at_words,
    char_ids,
    char_ids_tf,
)
from lab.sources import SourceError
from lab.vectors import INPUT_LAYER, ElmoParts, LayerVectors, short_label

ASSETS = sources.EMBEDDED_ELMO
# ``layers``' names: ``word_emb`` doubled (the input layer), then the biLM's two layers
LAYER_NAMES = [INPUT_LAYER, "lstm_outputs1", "lstm_outputs2"]

# ---------------------------------------------------------------------------------------
# Runners: what the app calls
# ---------------------------------------------------------------------------------------


def _check_tokens(tokens: list[list[str]]) -> list[list[str]]:
    if isinstance(tokens, str) or not all(isinstance(s, (list, tuple)) for s in tokens):
        raise TypeError("tokens must be a list of word-split sentences (lab.tokenize.split_words)")
    return [list(s) for s in tokens]


def _vectors(runner, tokens: list[list[str]], out: dict) -> LayerVectors:
    """ELMo v3 outputs (a dict of arrays) as ``LayerVectors``: ``layers`` (3, B, T, C) is
    [``word_emb`` || ``word_emb``, ``lstm_outputs1``, ``lstm_outputs2``], 0 past each length."""
    lens = np.asarray(out["sequence_len"], dtype=np.int32)
    T = max((len(s) for s in tokens), default=0)
    mask = (np.arange(T)[None, :] < lens[:, None]).astype(np.int32)
    keep = mask[..., None].astype(np.float32)

    def seq(key):  # (B, T', X) -> (B, T, X), 0 past each length
        return (np.asarray(out[key], dtype=np.float32)[:, :T] * keep).astype(np.float32)

    word_emb = seq("word_emb")
    doubled = np.concatenate([word_emb, word_emb], axis=-1)  # (B, T, C): the v3 mix's layer 0
    return LayerVectors(
        model_label=runner.label,
        short_label=runner.short_label,
        source=runner.source,
        sentences=[" ".join(s) for s in tokens],
        tokens=tokens,
        words=tokens,
        word_positions=[[[t] for t in range(len(s))] for s in tokens],
        layers=np.stack([doubled, seq("lstm_outputs1"), seq("lstm_outputs2")]),
        layer_names=list(LAYER_NAMES),
        mask=mask,
        elmo=ElmoParts(word_emb=word_emb, elmo=seq("elmo"),
                       default=np.asarray(out["default"], dtype=np.float32)),
    )


def _stateful_norms(model: ElmoModel, ids, lengths, state_c, state_m, runs):
    """The graph of ``ElmoRunner.stateful_norms`` for one unpadded sentence (B = 1):
    ``runs`` passes of the biLSTM, each from the state the last ended in, and the norm of
    ``lstm_outputs2`` after each. The character CNN's token vectors are the same every
    pass, so they are built once (measured: a quarter of the time of six full passes)."""
    ids_s, lengths_s = add_sentence_boundaries(ids, lengths)
    token = model.char_cnn(ids_s)
    T = tf.shape(ids)[1]

    def step(k, c, m, norms):
        layers, (c, m) = model.lstm(token, lengths_s, c, m, None)
        return k + 1, c, m, norms.write(k, tf.norm(at_words(layers[-1], T)[0]))

    start = (tf.constant(0), state_c, state_m, tf.TensorArray(tf.float32, size=runs))
    return tf.while_loop(lambda k, *_: k < runs, step, start)[3].stack()


class ElmoRunner:
    """Runs an in-memory ``ElmoModel`` (the Keras-style path): stateless by default,
    optionally stateful (each row's final LSTM state starts the same row next call, as
    bilm-tf and AllenNLP) and with dropout at inference.

    The forward pass is one ``tf.function`` whose input signature leaves batch and length
    open, so it is traced once (plus once for the dropout variant), not per call.
    """

    family = "elmo"
    supports_state = True

    def __init__(self, model: ElmoModel, source: str, label: str):
        self.model, self.source, self.label = model, source, label
        self.short_label = short_label(label)
        self.chars_per_token = model.config.max_characters_per_token
        self.state_lock = threading.Lock()  # stateful runs of a shared runner take turns
        c = model.config
        ids = tf.TensorSpec((None, None, c.max_characters_per_token), tf.int32)
        lens = tf.TensorSpec((None,), tf.int32)
        sc = tf.TensorSpec((c.n_layers, 2, None, c.lstm_dim), tf.float32)
        sm = tf.TensorSpec((c.n_layers, 2, None, c.projection_dim), tf.float32)
        rate = tf.TensorSpec((), tf.float32)
        self._fn = tf.function(lambda i, n, a, b: model.embed(i, n, a, b), input_signature=[ids, lens, sc, sm],
                               autograph=False)
        self._fn_dropout = tf.function(
            lambda i, n, a, b, r: model.embed(i, n, a, b, dropout=r), input_signature=[ids, lens, sc, sm, rate],
            autograph=False,
        )
        self._fn_stateful_norms = tf.function(
            lambda i, n, a, b, runs: _stateful_norms(model, i, n, a, b, runs),
            input_signature=[ids, lens, sc, sm, tf.TensorSpec((), tf.int32)], autograph=False,
        )
        self.reset_state()

    @property
    def mix_weights(self):
        if not self.model.mix_learned:
            return None
        return self.model.mix_weights.numpy().copy(), float(self.model.mix_gamma.numpy())

    def _zero_state(self, B: int) -> tuple[np.ndarray, np.ndarray]:
        return tuple(t.numpy() for t in self.model.lstm.zero_state(B))

    def reset_state(self) -> None:
        """Forget the carried LSTM state (stateful mode starts from zeros again)."""
        self._state_c, self._state_m = self._zero_state(0)

    def _initial_state(self, B: int):
        sc, sm = self._zero_state(B)
        k = min(B, self._state_c.shape[2])
        sc[:, :, :k], sm[:, :, :k] = self._state_c[:, :, :k], self._state_m[:, :, :k]
        return sc, sm

    def run(self, tokens: list[list[str]], stateful: bool = False, dropout: float = 0.0) -> LayerVectors:
        """Embed word-split sentences (padded to the longest; tokens over 48 bytes are cut).

        Args:
            tokens: B lists of word tokens; an empty list gives zeros and a 0 length.
            stateful: start each row from the state the same row ended with last call.
            dropout: rate in [0, 1) applied to every LSTM layer's input (0 = deterministic).
        """
        tokens = _check_tokens(tokens)
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        B = len(tokens)
        ids = char_ids(tokens)
        lens = np.array([len(s) for s in tokens], np.int32)
        sc, sm = self._initial_state(B) if stateful else self._zero_state(B)
        if dropout > 0:
            out, (fc, fm) = self._fn_dropout(ids, lens, sc, sm, tf.constant(dropout, tf.float32))
        else:
            out, (fc, fm) = self._fn(ids, lens, sc, sm)
        if stateful:
            fc, fm = fc.numpy(), fm.numpy()
            k = self._state_c.shape[2]
            if B >= k:
                self._state_c, self._state_m = fc, fm
            else:  # rows past this batch keep their state
                self._state_c[:, :, :B], self._state_m[:, :, :B] = fc, fm
        return _vectors(self, tokens, {k: v.numpy() for k, v in out.items()})

    def stateful_norms(self, tokens: list[str], runs: int) -> np.ndarray:
        """(runs,) norms of ``lstm_outputs2`` for one sentence run ``runs`` times in stateful
        mode from a zero state, each run starting where the last ended, in one graph call
        (the same computation as ``run(stateful=True)`` after ``reset_state``; the carried
        state is not touched)."""
        tokens = _check_tokens([tokens])
        sc, sm = self._zero_state(1)
        norms = self._fn_stateful_norms(char_ids(tokens), np.array([len(tokens[0])], np.int32), sc, sm,
                                        tf.constant(runs, tf.int32))
        return norms.numpy().astype(np.float64)

    def info(self) -> dict:
        c = self.model.config
        P, C = c.projection_dim, c.output_dim
        mix = self.mix_weights
        return {
            "label": self.label,
            "source": self.source,
            "backend": "in-memory biLM (TF2, stateful and dropout modes available)",
            "signatures": ["tokens (via lab.models.elmo.char_ids)"],
            "output_keys": OUTPUT_KEYS + ["mask"],
            "outputs": {
                "word_emb": f"float32 (B, T, {P})",
                "lstm_outputs1": f"float32 (B, T, {C})",
                "lstm_outputs2": f"float32 (B, T, {C})",
                "elmo": f"float32 (B, T, {C})",
                "default": f"float32 (B, {C})",
                "sequence_len": "int32 (B,)",
                "mask": "int32 (B, T)",
            },
            "parameters": self.model.num_parameters(),
            "config": asdict(c),
            "mix_weights": None if mix is None else {"weights": mix[0].tolist(), "gamma": mix[1]},
        }


class HubElmoRunner:
    """Runs a TF Hub ELMo (or a SavedModel exported by ``export_saved_model``) through its
    ``tokens`` signature. Inference only: no carried state, no dropout."""

    family = "elmo"
    supports_state = False
    chars_per_token = CHARS_PER_TOKEN  # fixed by the v3 signature

    def __init__(self, module, source: str, label: str):
        self.module, self.source, self.label = module, source, label
        self.short_label = short_label(label)
        sigs = getattr(module, "signatures", {})
        if "tokens" not in sigs:
            raise SourceError(
                f"{source} has no 'tokens' signature (it has {sorted(sigs) or 'none'}): "
                "it is not an ELMo module in the TF Hub v3 layout."
            )
        self._tokens = sigs["tokens"]
        missing = [k for k in OUTPUT_KEYS[:5] if k not in self._tokens.structured_outputs]
        if missing:
            raise SourceError(f"{source}: the 'tokens' signature lacks the ELMo outputs {missing}.")

    def _variables(self) -> list:
        """The module's variables (TF1 hub modules list them; a TF2 SavedModel's are the
        ones its ``tokens`` function captures)."""
        found = list(getattr(self.module, "variables", None) or [])
        return found or list(getattr(self._tokens, "variables", None) or [])

    @property
    def mix_weights(self):
        found = {}
        for v in self._variables():
            name = v.name.split(":")[0]
            if name.endswith("aggregation/weights"):
                found["w"] = v.numpy()
            elif name.endswith("aggregation/scaling"):
                found["g"] = float(v.numpy())
        if "w" in found and "g" in found:
            learned = getattr(self.module, "mix_learned", None)
            if learned is not None and not bool(learned.numpy()):
                return None
            return np.asarray(found["w"], np.float32), found["g"]
        return None

    def run(self, tokens: list[list[str]], stateful: bool = False, dropout: float = 0.0) -> LayerVectors:
        tokens = _check_tokens(tokens)
        if stateful or dropout:
            raise ValueError(
                f"{self.label} is a SavedModel signature: stateful mode and dropout need the "
                "in-memory model (the embedded ELMo-mini or an AllenNLP options.json + hdf5)."
            )
        T = max((len(s) for s in tokens), default=0)
        padded = np.array([s + [""] * (T - len(s)) for s in tokens], dtype=object).reshape(len(tokens), T)
        lens = np.array([len(s) for s in tokens], np.int32)
        out = self._tokens(tokens=tf.constant(padded, tf.string), sequence_len=tf.constant(lens))
        out = {k: v.numpy() for k, v in out.items()}
        out["sequence_len"] = lens
        return _vectors(self, tokens, out)

    def info(self) -> dict:
        outs = {
            k: f"{spec.dtype.name} {tuple(spec.shape.as_list())}" for k, spec in self._tokens.structured_outputs.items()
        }
        variables = self._variables()
        mix = self.mix_weights
        return {
            "label": self.label,
            "source": self.source,
            "backend": "TF Hub / SavedModel signatures (inference only)",
            "signatures": sorted(self.module.signatures),
            "output_keys": sorted(outs),
            "outputs": outs,
            "parameters": int(sum(np.prod(v.shape) for v in variables)) if variables else None,
            "mix_weights": None if mix is None else {"weights": mix[0].tolist(), "gamma": mix[1]},
        }


def repeat_runs(runner, tokens: list[str], runs: int, dropout: float) -> dict[str, np.ndarray]:
    """One sentence run ``runs`` times per mode -> {mode: (runs,) norm of ``lstm_outputs2``}.

    Modes: ``stateless`` (zeros every run); ``stateful`` (from a zero state, each run
    starting where the last ended); ``dropout`` (stateless, dropout at inference). A
    SavedModel runner has only the stateless mode. The stateless and dropout runs are
    independent of each other, so each mode's runs go as one batch of ``runs`` copies of
    the sentence (dropout draws its mask per element, so each copy gets its own); the
    stateful runs depend on each other and go one after another inside one graph call
    (``ElmoRunner.stateful_norms``), which leaves a shared runner's carried state alone.
    """
    copies = [list(tokens)] * runs

    def norms(out: LayerVectors) -> np.ndarray:
        return np.linalg.norm(out.layer("lstm_outputs2")[:, : len(tokens)].reshape(len(out.tokens), -1), axis=1)

    result = {"stateless": norms(runner.run(copies))}
    if runner.supports_state:
        result["stateful"] = runner.stateful_norms(tokens, runs)
        result["dropout"] = norms(runner.run(copies, dropout=dropout))
    return {k: np.asarray(v, np.float64) for k, v in result.items()}


# ---------------------------------------------------------------------------------------
# Loaders
# ---------------------------------------------------------------------------------------


def load_allennlp(options: str | Path | dict, weights: str | Path) -> ElmoModel:
    """An ``ElmoModel`` from bilm-tf / AllenNLP ``options.json`` + weights hdf5.

    The hdf5 may also hold ``aggregation/weights`` and ``aggregation/scaling`` (a learned
    mix); without them the mix is uniform with gamma 1.
    """
    import h5py

    config = ElmoConfig.from_options_json(options)
    model = ElmoModel(config)
    with h5py.File(weights, "r") as f:
        for path, var in model.weight_map().items():
            if path not in f:
                raise SourceError(f"{weights} lacks the dataset {path}: not bilm-tf weights for these options.")
            value = f[path][...]
            if tuple(value.shape) != tuple(var.shape):
                raise SourceError(f"{weights}: {path} is {value.shape}, the options want {tuple(var.shape)}.")
            var.assign(value)
        if "aggregation/weights" in f and "aggregation/scaling" in f:
            model.mix_weights.assign(f["aggregation/weights"][...])
            model.mix_gamma.assign(float(f["aggregation/scaling"][()]))
            model.mix_learned = True
    return model


def save_allennlp(model: ElmoModel, folder: str | Path) -> None:
    """Write ``options.json`` + ``weights.hdf5`` (bilm-tf layout) for ``load_allennlp``."""
    import h5py

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "options.json").write_text(json.dumps(model.config.to_options_json(), indent=2) + "\n")
    with h5py.File(folder / "weights.hdf5", "w") as f:
        for path, var in model.weight_map().items():
            f.create_dataset(path, data=var.numpy())
        if model.mix_learned:
            f.create_dataset("aggregation/weights", data=model.mix_weights.numpy())
            f.create_dataset("aggregation/scaling", data=model.mix_gamma.numpy())


def _find_allennlp(folder: Path) -> tuple[Path, Path] | None:
    options = folder / "options.json"
    if not options.is_file():
        return None
    weights = sorted(folder.glob("*.hdf5")) + sorted(folder.glob("*.h5"))
    named = [w for w in weights if "weight" in w.name]
    if not (named or weights):
        return None
    return options, (named or weights)[0]


def _describe(config: ElmoConfig) -> str:
    return (
        f"{config.n_layers}x{config.lstm_dim} LSTM, projection {config.projection_dim}, "
        f"{config.n_filters} char filters, {config.n_highway} highway"
    )


def load_elmo(source: str | None = None):
    """Load an ELMo and return a runner (``ElmoRunner`` or ``HubElmoRunner``).

    Args:
        source: None -> ``LAB_ELMO_SOURCE`` or else the embedded model; ``"embedded"`` ->
            the shipped ELMo-mini; a folder with ``options.json`` + ``*.hdf5`` -> the
            AllenNLP loader; a SavedModel folder or an ``https://`` handle -> TF Hub.

    Raises:
        SourceError: with a message that says what was wrong and what to do.
    """
    if source is None:
        source = sources.default_source("elmo")
    if sources.is_embedded(source):
        found = _find_allennlp(ASSETS)
        if found is None:
            raise SourceError(
                f"The embedded ELMo-mini is missing from {ASSETS}; reinstall the app or "
                "rebuild it with `python -m lab.elmo_training`."
            )
        model = load_allennlp(*found)
        return ElmoRunner(model, sources.EMBEDDED, f"ELMo-mini (embedded, trained here, {_describe(model.config)})")
    source = source.strip()
    if not sources.is_remote(source):
        path = Path(source).expanduser()
        if path.is_dir() and not (path / "saved_model.pb").exists():
            found = _find_allennlp(path)
            if found is None:
                raise SourceError(
                    f"{source} holds neither saved_model.pb (TF Hub / SavedModel) nor "
                    "options.json + a weights .hdf5 (AllenNLP / bilm-tf)."
                )
            try:
                model = load_allennlp(*found)
            except SourceError:
                raise
            except Exception as exc:
                raise SourceError(f"Could not read the bilm-tf files in {source}: {exc}") from exc
            return ElmoRunner(model, source, f"ELMo (AllenNLP files: {path.name}, {_describe(model.config)})")
    module = sources.hub_load(source)
    return HubElmoRunner(module, source, f"TF Hub ELMo: {source}")


# ---------------------------------------------------------------------------------------
# Export as a TF2 SavedModel with ELMo v3 signatures
# ---------------------------------------------------------------------------------------


class _ElmoExport(tf.Module):
    def __init__(self, model: ElmoModel):
        super().__init__(name="elmo_export")
        self.model = model
        self.mix_learned = tf.Variable(bool(model.mix_learned), trainable=False, name="mix_learned")

    @tf.function(input_signature=[tf.TensorSpec((None, None), tf.string), tf.TensorSpec((None,), tf.int32)])
    def tokens(self, tokens, sequence_len):
        ids = char_ids_tf(tokens, sequence_len)
        out, _ = self.model.embed(ids, sequence_len)
        out.pop("mask")
        return out

    @tf.function(input_signature=[tf.TensorSpec((None,), tf.string)])
    def default(self, strings):
        words = tf.strings.split(strings, sep=" ")  # ragged (B, None): ELMo v3 splits on spaces
        words = tf.ragged.boolean_mask(words, words != "")
        return self.tokens(words.to_tensor(default_value=""), tf.cast(words.row_lengths(), tf.int32))


def export_saved_model(model: ElmoModel | ElmoRunner, path: str | Path) -> Path:
    """Save a TF2 SavedModel whose ``signatures['tokens'|'default']`` match TF Hub ELMo v3.

    ``hub.load(path).signatures['tokens'](tokens=..., sequence_len=...)`` then returns
    ``word_emb``, ``lstm_outputs1``, ``lstm_outputs2``, ``elmo``, ``default`` and
    ``sequence_len``, so ``load_elmo(path)`` runs it like any hub ELMo.
    """
    if isinstance(model, ElmoRunner):
        model = model.model
    module = _ElmoExport(model)
    path = Path(path)
    tf.saved_model.save(module, str(path), signatures={"default": module.default, "tokens": module.tokens})
    return path
