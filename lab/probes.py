"""What each layer knows: linear probes on every layer of a model, against control tasks.

A probe is a multinomial logistic regression from one layer's word vector to a task's label
(``lab.probe_data``: part of speech, supersense, position). It is trained on the training
sentences, its L2 strength fixed (``L2``: modest, which Hewitt and Liang 2019 found the most
selective), and scored on:

- ``test``: held-out sentences, whose words may occur in training;
- ``seen``: the test words whose type is a training example (the seen-word split), where
  memorising words pays;
- ``unseen``: sentences of held-out words (the word-held-out split), for the lexical tasks;
- the control task on ``seen``: the same probe trained on each word type's random label
  (``probe_data.control_labels``), stopped early on the dev words seen in training.
  Selectivity = task accuracy - control accuracy, both on ``seen``.

Each accuracy has a 95 % interval from ``BOOTSTRAP`` resamples of the test *sentences*
(a sentence's words are not independent); the selectivity's resamples pair the task and the
control on the same sentences. The majority class is the commonest training label.

The probes are NumPy, not scikit-learn: the app does not otherwise depend on scikit-learn (or
SciPy), a softmax regression of a few hundred inputs is forty lines here, and full-batch Adam
from zero with a fixed step count gives the same weights on every run.

``train`` runs the model once over the data's sentences (``features``) and fits every task at
every layer; ``ProbeStore`` keeps the result on disk, keyed by the model's weight files, the
code that computes it (``CODE`` and the model code, ``lab.stored``) and the data's SHA-256.
``guesses`` turns the stored probes and a run of any sentence into each word's guess at every
layer: what the page's live grid and ``python -m lab probe`` show.

Shape letters: N layers, M examples, C width, K classes, B bootstrap resamples.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from lab import analysis, probe_data, stored
from lab.probe_data import LEXICAL, TASKS, Examples, ProbeData, check_task, control_labels, task_examples

L2 = 1e-3  # on the mean cross-entropy, weights of standardized inputs
STEPS = 100
CHECK_EVERY = 10  # steps between the dev checkpoints of early stopping
LEARNING_RATE = 0.08
BOOTSTRAP = 1000
BATCH = 32
SEED = 0
# The code the stored probes' numbers come from, beside the model code lab.stored keys runs by
CODE = ("probes.py", "probe_data.py", "elmo_vs_bert.py", "analysis.py")
STORE_BYTES = 64 * 2**20  # BERT-base: 13 layers x 768 x 49 classes of float32 take 2 MB

Progress = Callable[[float, str], None]


def _quiet(fraction: float, text: str) -> None:
    """The default progress report: none."""


# --- the probe ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Probe:
    """A softmax regression on standardized inputs: p = softmax(((x - mean) / scale) @ W + b)."""

    mean: np.ndarray  # (C,)
    scale: np.ndarray  # (C,)
    W: np.ndarray  # (C, K)
    b: np.ndarray  # (K,)

    def probabilities(self, X: np.ndarray) -> np.ndarray:
        """(M, C) -> (M, K), each row summing to 1."""
        return _softmax(((np.asarray(X, np.float32) - self.mean) / self.scale) @ self.W + self.b)

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.probabilities(X).argmax(axis=1)


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def fit(X: np.ndarray, y: np.ndarray, classes: int, dev: tuple[np.ndarray, np.ndarray] | None = None,
        l2: float = L2, steps: int = STEPS, learning_rate: float = LEARNING_RATE) -> Probe:
    """A probe from (M, C) inputs and (M,) labels in [0, classes): full-batch Adam on the mean
    cross-entropy plus ``l2``/2 times the squared weights, from zero weights and the training
    labels' log frequencies as biases (so that it starts at the majority class); deterministic.

    With ``dev`` (inputs, labels), the weights kept are those of the checkpoint (every
    ``CHECK_EVERY`` steps, the start included) with the best dev accuracy, the earliest of
    equals: early stopping, which keeps a probe that finds nothing at the majority class
    rather than at what it memorised of the training set.
    """
    X = np.asarray(X, np.float32)
    y = np.asarray(y, np.int64)
    if X.ndim != 2 or len(X) != len(y) or not len(y):
        raise ValueError(f"fit needs (M, C) inputs and M labels, M > 0: got {X.shape} and {y.shape}")
    mean = X.mean(axis=0)
    scale = (X.std(axis=0) + 1e-6).astype(np.float32)
    Z = (X - mean) / scale  # (M, C)
    M, C = Z.shape
    Y = np.zeros((M, classes), np.float32)
    Y[np.arange(M), y] = 1.0
    prior = np.log((np.bincount(y, minlength=classes) + 0.5) / (M + 0.5 * classes)).astype(np.float32)
    params = [np.zeros((C, classes), np.float32), prior]
    moments = [[np.zeros_like(p), np.zeros_like(p)] for p in params]
    beta1, beta2 = 0.9, 0.999
    best, best_accuracy = Probe(mean, scale, params[0].copy(), params[1].copy()), -1.0
    for t in range(steps + 1):
        if dev is not None and (t % CHECK_EVERY == 0 or t == steps):
            probe = Probe(mean, scale, params[0], params[1])
            accuracy = float(np.mean(probe.predict(dev[0]) == dev[1]))
            if accuracy > best_accuracy:
                best, best_accuracy = Probe(mean, scale, params[0].copy(), params[1].copy()), accuracy
        if t == steps:
            break
        W, b = params
        G = (_softmax(Z @ W + b) - Y) / M  # (M, K): d loss / d logits
        grads = [Z.T @ G + l2 * W, G.sum(axis=0)]
        for p, g, m in zip(params, grads, moments):
            m[0] = beta1 * m[0] + (1 - beta1) * g
            m[1] = beta2 * m[1] + (1 - beta2) * g * g
            p -= learning_rate * (m[0] / (1 - beta1 ** (t + 1))) / (np.sqrt(m[1] / (1 - beta2 ** (t + 1))) + 1e-8)
    return best if dev is not None else Probe(mean, scale, params[0], params[1])


# --- scores -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Score:
    """An accuracy and its 95 % bootstrap interval (NaN where there was nothing to score)."""

    value: float
    low: float
    high: float

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


NO_SCORE = Score(float("nan"), float("nan"), float("nan"))


def bootstrap(correct: np.ndarray, sentences: np.ndarray, resamples: int = BOOTSTRAP, seed: int = SEED) -> Score:
    """Accuracy of ``correct`` (M,) (1/0, or a difference of two: -1/0/1) and its 95 %
    interval over ``resamples`` draws of the sentences (M,) with replacement."""
    correct = np.asarray(correct, np.float64)
    if not len(correct):
        return NO_SCORE
    ids, inverse = np.unique(sentences, return_inverse=True)
    sums = np.bincount(inverse, weights=correct, minlength=len(ids))  # (S,) per sentence
    counts = np.bincount(inverse, minlength=len(ids)).astype(np.float64)
    draws = np.random.default_rng(seed).integers(0, len(ids), size=(resamples, len(ids)))  # (B, S)
    values = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)  # (B,)
    low, high = np.percentile(values, [2.5, 97.5])
    return Score(float(correct.mean()), float(low), float(high))


@dataclass(frozen=True)
class LayerScores:
    """One task at one layer."""

    accuracy: Score  # test sentences
    control: Score  # the control task, on the test words seen in training
    selectivity: Score  # accuracy - control on the test words seen in training, paired resamples
    unseen: Score  # word-held-out test (NO_SCORE for position)
    dev: float
    seen: Score = NO_SCORE  # accuracy on the test words seen in training


@dataclass(frozen=True)
class TaskProbes:
    """A task's probes at every layer of a model, and their scores."""

    task: str
    classes: tuple[str, ...]
    probes: tuple[Probe, ...]  # one per layer
    scores: tuple[LayerScores, ...]
    majority: float  # the commonest training label's share of the test
    majority_unseen: float  # ... of the word-held-out test (NaN for position)
    majority_class: str
    sizes: dict  # examples per split

    def best(self) -> int:
        """The layer with the highest test accuracy (the first of equals)."""
        return int(np.argmax([s.accuracy.value for s in self.scores]))

    def best_contextual(self) -> int:
        """The best layer above the input layer."""
        return 1 + int(np.argmax([s.accuracy.value for s in self.scores[1:]]))


def score_task(features: np.ndarray, ex: Examples, progress: Progress = _quiet) -> TaskProbes:
    """Fit and score ``ex``'s task at every layer of ``features`` (N, M, C)."""
    train, dev, test, unseen = (ex.where(s) for s in probe_data.SPLITS)
    K = len(ex.classes)
    control = control_labels(ex)
    in_training = set(ex.types[train].tolist())
    seen, seen_dev = (rows[np.isin(ex.types[rows], list(in_training))] for rows in (test, dev))
    top = np.bincount(ex.labels[train], minlength=K).argmax()
    probes, scores = [], []
    for n, X in enumerate(features):
        probe = fit(X[train], ex.labels[train], K, (X[dev], ex.labels[dev]) if len(dev) else None)
        ctrl = fit(X[train], control[train], K, (X[seen_dev], control[seen_dev]) if len(seen_dev) else None)
        right = probe.predict(X[test]) == ex.labels[test]
        right_seen = probe.predict(X[seen]) == ex.labels[seen]
        ctrl_right = ctrl.predict(X[seen]) == control[seen]
        scores.append(LayerScores(
            bootstrap(right, ex.sentence[test]), bootstrap(ctrl_right, ex.sentence[seen]),
            bootstrap(right_seen.astype(float) - ctrl_right, ex.sentence[seen]),
            bootstrap(probe.predict(X[unseen]) == ex.labels[unseen], ex.sentence[unseen]) if len(unseen) else NO_SCORE,
            float(np.mean(probe.predict(X[dev]) == ex.labels[dev])) if len(dev) else float("nan"),
            bootstrap(right_seen, ex.sentence[seen])))
        probes.append(probe)
        progress((n + 1) / len(features), f"{ex.task}: layer {n}")
    share = lambda rows: float(np.mean(ex.labels[rows] == top)) if len(rows) else float("nan")  # noqa: E731
    return TaskProbes(ex.task, ex.classes, tuple(probes), tuple(scores), share(test), share(unseen),
                      ex.classes[top], {s: int(len(ex.where(s))) for s in probe_data.SPLITS} | {"seen": int(len(seen))})


# --- a model's probes ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelProbes:
    """Every task's probes on every layer of one model."""

    family: str
    source: str
    label: str
    short_label: str
    layer_names: tuple[str, ...]
    tasks: dict  # task -> TaskProbes
    data_digest: str
    pool: str = "first"  # a BERT word's vector: its first piece's


def features(model, data: ProbeData, wanted: dict[str, Examples], pool: str = "first",
             progress: Progress = _quiet) -> tuple[dict[str, np.ndarray], list[str]]:
    """Every wanted word's vector at every layer: task -> (N, M, C) float32, in ``wanted``'s
    order, from one run of the model over the data's sentences (in batches, shortest first)."""
    from lab.elmo_vs_bert import align
    from lab.models import embed

    need: dict[int, set[int]] = {}
    for ex in wanted.values():
        for r, w in zip(ex.sentence.tolist(), ex.word.tolist()):
            need.setdefault(r, set()).add(w)
    rows = sorted(need, key=lambda r: (len(data.words[r]), r))
    found: dict[tuple[int, int], np.ndarray] = {}
    names: list[str] = []
    for start in range(0, len(rows), BATCH):
        batch = rows[start : start + BATCH]
        out = align(embed(model, [" ".join(data.words[r]) for r in batch]))
        names = list(out.layer_names)
        for b, r in enumerate(batch):
            if len(out.words[b]) != len(data.words[r]):
                raise ValueError(f"{model.label} reads {len(out.words[b])} words in {' '.join(data.words[r])!r}, "
                                 f"the data {len(data.words[r])}")
            for w in need[r]:
                positions = out.word_positions[b][w]
                if not positions:
                    raise ValueError(f"{model.label} has no token for word {w} of {' '.join(data.words[r])!r}")
                found[r, w] = analysis.pool_pieces(out.layers[:, b], positions, pool)  # (N, C)
        progress(min(1.0, (start + len(batch)) / len(rows)), f"{start + len(batch):,} of {len(rows):,} sentences")
    return {task: np.stack([found[r, w] for r, w in zip(ex.sentence.tolist(), ex.word.tolist())], axis=1)
            .astype(np.float32) for task, ex in wanted.items()}, names


def train(model, data: ProbeData | None = None, tasks: Sequence[str] = TASKS, pool: str = "first",
          progress: Progress = _quiet) -> ModelProbes:
    """Run ``model`` over the probe data and fit ``tasks`` at every layer."""
    data = probe_data.load_data() if data is None else data
    wanted = {t: task_examples(data, check_task(t)) for t in tasks}
    feats, names = features(model, data, wanted, pool, lambda f, s: progress(0.6 * f, f"vectors: {s}"))
    done = {}
    for i, (task, ex) in enumerate(wanted.items()):
        def report(f, s, i=i):
            progress(0.6 + 0.4 * (i + f) / len(wanted), f"probes: {s}")
        done[task] = score_task(feats[task], ex, report)
    return ModelProbes(model.family, model.source, model.label, model.short_label, tuple(names), done,
                       data.digest, pool)


# --- storing them -------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of the probe code's bytes (the model code is in ``lab.stored``'s key)."""
    lab = Path(__file__).resolve().parent
    return hashlib.sha256(b"\0".join((lab / name).read_bytes() for name in CODE)).hexdigest()


def probes_key(family: str, source: str, data_digest: str, pool: str = "first") -> str | None:
    """The key of a model's stored probes: its weight files, the model and probe code, the
    data's SHA-256; None where the model has no files to fingerprint (a remote handle TF Hub
    has not downloaded)."""
    return stored.run_key(family, source, "probes", code_fingerprint(), data_digest, pool)


def default_store() -> stored.RunStore:
    """Probes in ``LAB_PROBES_DIR``, default ``probes`` in the app's cache folder: apart from
    the run store, whose least recently used entries are pruned."""
    from lab.reference import cache_dir

    return stored.RunStore(os.environ.get("LAB_PROBES_DIR") or cache_dir() / "probes", max_entries=32,
                           max_bytes=STORE_BYTES)


def read(family: str, source: str, store: stored.RunStore | None = None,
         data: ProbeData | None = None) -> ModelProbes | None:
    """The stored probes of ``family``/``source`` for the data, or None (never trains)."""
    data = probe_data.load_data() if data is None else data
    store = default_store() if store is None else store
    return store.get(probes_key(family, source, data.digest))


def is_stored(family: str, source: str, store: stored.RunStore | None = None, data: ProbeData | None = None) -> bool:
    data = probe_data.load_data() if data is None else data
    store = default_store() if store is None else store
    return store.has(probes_key(family, source, data.digest))


def train_command(family: str, source: str) -> str:
    """The command that trains and stores the probes of ``family``/``source``."""
    from lab import sources

    flag = "" if sources.is_embedded(source) else f" --source {_quote(source)}"
    return f"python -m lab probes train --model {family}{flag}"


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def train_and_store(model, store: stored.RunStore | None = None, data: ProbeData | None = None,
                    progress: Progress = _quiet) -> tuple[ModelProbes, bool]:
    """The model's probes, read from ``store`` or trained and written there; (probes, whether
    they were trained now)."""
    data = probe_data.load_data() if data is None else data
    store = default_store() if store is None else store
    key = probes_key(model.family, model.source, data.digest)
    found = store.get(key)
    if found is not None:
        return found, False
    done = train(model, data, progress=progress)
    if key is not None:
        with store.lock(key):
            store.put(key, done)
    return done, True


# --- reading a sentence -------------------------------------------------------------------------


CLOSED_CLASS = frozenset(
    """a an the this that these those my your his her its our their some any no every each either neither
    i you he she it we they me him us them myself yourself himself herself itself ourselves themselves
    mine yours hers ours theirs who whom whose which what
    and or but nor so yet if because although though while whereas than as
    of to in on at by for with from into onto over under about up down out off through across after
    before between among against during without within along around behind beyond near past since
    until upon toward towards via per
    is am are was were be been being do does did have has had will would shall should can could may
    might must 's 're 've 'd 'll n't not""".split())


def in_classes(task: str, word: str) -> bool:
    """Whether ``word`` can carry a label of ``task``: any word for position; for part of
    speech and supersense an open-class word (a letter, and not a function word of
    ``CLOSED_CLASS``): WordNet, which the probes learn from, has no others."""
    if check_task(task) == "position":
        return probe_data.is_word(word)
    return any(c.isalpha() for c in word) and word.casefold() not in CLOSED_CLASS


@dataclass(frozen=True)
class Guesses:
    """Each word's guess at every layer for one sentence and task."""

    task: str
    classes: tuple[str, ...]
    layer_names: tuple[str, ...]
    words: tuple[str, ...]
    inside: np.ndarray  # (T,) bool: the word is in the task's classes
    probabilities: np.ndarray  # (N, T, K); NaN for words outside

    @property
    def labels(self) -> list[list[str | None]]:
        """(T, N): each word's guessed class at every layer; None outside the classes."""
        best = np.nan_to_num(self.probabilities, nan=-1).argmax(axis=2)  # (N, T)
        return [[self.classes[best[n, t]] if self.inside[t] else None for n in range(len(self.layer_names))]
                for t in range(len(self.words))]

    @property
    def confidence(self) -> np.ndarray:
        """(T, N): the guessed class's probability; NaN outside."""
        return np.nanmax(np.where(np.isnan(self.probabilities), -np.inf, self.probabilities), axis=2).T \
            .astype(float) * np.where(self.inside, 1, np.nan)[:, None]

    def first(self, n: int) -> "Guesses":
        """The first ``n`` words' guesses (all where there are fewer), read in the whole
        sentence's context: what a grid can show legibly of a long sentence."""
        return replace(self, words=self.words[:n], inside=self.inside[:n], probabilities=self.probabilities[:, :n])

    def as_json(self, model: str) -> dict:
        """``{"model", "task", "layers", "words": [{"word", "guesses": [{"label", "p"}, ...]}]}``."""
        labels, conf = self.labels, self.confidence
        return {"model": model, "task": self.task, "layers": list(self.layer_names),
                "words": [{"word": w, "guesses": [{"label": labels[t][n],
                                                   "p": None if labels[t][n] is None else round(float(conf[t, n]), 4)}
                                                  for n in range(len(self.layer_names))]}
                          for t, w in enumerate(self.words)]}


def guesses(probes: ModelProbes, out, task: str, row: int = 0) -> Guesses:
    """The task's probes on row ``row`` of an aligned run ``out`` (``elmo_vs_bert.align``):
    each word's class probabilities at every layer. A word the model has no token for
    (cut off by its length limit) is outside."""
    task_probes = probes.tasks[check_task(task)]
    if len(out.layer_names) != len(task_probes.probes):
        raise ValueError(f"the run has {len(out.layer_names)} layers, the probes {len(task_probes.probes)}: "
                         "they are not the same model's")
    words = tuple(out.words[row])
    inside = np.array([in_classes(task, w) and bool(out.word_positions[row][t]) for t, w in enumerate(words)], bool)
    N, T, K = len(task_probes.probes), len(words), len(task_probes.classes)
    P = np.full((N, T, K), np.nan, np.float32)
    at = np.nonzero(inside)[0]
    if len(at):
        vecs = np.stack([analysis.pool_pieces(out.layers[:, row], out.word_positions[row][t], probes.pool)
                         for t in at], axis=1)  # (N, T', C)
        for n, probe in enumerate(task_probes.probes):
            P[n, at] = probe.probabilities(vecs[n])
    return Guesses(task, task_probes.classes, probes.layer_names, words, inside, P)


def run_sentence(model, text: str):
    """One typed sentence through ``model``, cleaned as the pages clean it and aligned to its
    words (an ELMo reads its first ``ELMO_MAX_WORDS``). Raises ValueError saying what is wrong
    with an unusable sentence."""
    from lab.elmo_vs_bert import align
    from lab.models import embed
    from lab.tokenize import ELMO_MAX_WORDS, prepare_text, split_words

    try:
        cleaned = prepare_text(text)[0]
    except ValueError as exc:
        raise ValueError(f"the sentence cannot be read: {exc}") from None
    if getattr(model, "family", "") == "elmo":
        cleaned = " ".join(split_words(cleaned)[:ELMO_MAX_WORDS])
    return align(embed(model, [cleaned]))


def live(probes: ModelProbes, model, text: str, task: str) -> Guesses:
    """The stored ``probes`` of ``model`` on a typed sentence: each word's guess at every layer
    (what the page's grid and ``python -m lab probe`` show)."""
    check_task(task)
    if getattr(model, "family", probes.family) != probes.family:
        raise ValueError(f"these are {probes.family} probes, not {model.family} ones")
    return guesses(probes, run_sentence(model, text), task)


# --- the held-out table -------------------------------------------------------------------------


def _number(s: Score, sign: str = "") -> str:
    """A score's value to three decimals ("-" where it has none); ``sign`` "+" writes it."""
    return "-" if np.isnan(s.value) else f"{s.value:{sign}.3f}"


def table_rows(probes: ModelProbes) -> list[dict]:
    """One row per task and layer: accuracies with their intervals, rounded to 3 decimals."""
    def fmt(s: Score) -> str:
        return "-" if np.isnan(s.value) else f"{_number(s)} [{s.low:.3f}, {s.high:.3f}]"

    return [{"model": probes.short_label, "task": task, "layer": name, "accuracy": fmt(s.accuracy),
             "seen words": fmt(s.seen), "control": fmt(s.control), "selectivity": fmt(s.selectivity),
             "unseen words": fmt(s.unseen),
             "majority": f"{t.majority:.3f}", "majority (unseen)": "-" if np.isnan(t.majority_unseen)
             else f"{t.majority_unseen:.3f}"}
            for task, t in probes.tasks.items() for name, s in zip(probes.layer_names, t.scores)]


def short_rows(probes: ModelProbes, task: str) -> list[dict]:
    """One task's rows as a projector shows them, narrow enough for a 1024-px screen: each
    layer's accuracy, the control's, the selectivity and the accuracy on unseen words, three
    decimals without their intervals (the chart draws those)."""
    t = probes.tasks[check_task(task)]
    return [{"layer": name, "accuracy": _number(s.accuracy), "control": _number(s.control),
             "selectivity": _number(s.selectivity, "+"), "unseen": _number(s.unseen)}
            for name, s in zip(probes.layer_names, t.scores)]


def report_lines(probes: ModelProbes) -> list[str]:
    """The held-out table as aligned text lines."""
    rows = table_rows(probes)
    if not rows:
        return []
    cols = list(rows[0])
    width = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    line = lambda r: "  ".join(str(r[c]).ljust(width[c]) for c in cols).rstrip()  # noqa: E731
    return [line({c: c for c in cols})] + [line(r) for r in rows]


def summary(probes: ModelProbes, task: str) -> str:
    """Sentences on a task from its numbers, at the best contextual layer: its accuracy, on
    the test words seen in training against a probe that memorises words, on words never seen
    in training; and, where the selectivity's interval does not lie above zero, that this
    layer shows no more of the task than word identity does on the seen words."""
    t = probes.tasks[check_task(task)]
    n = t.best_contextual()
    s = t.scores[n]
    name = probe_data.TASK_NAMES[task]
    text = (f"{probes.short_label}'s {probes.layer_names[n]} tells the {name} of a held-out word "
            f"{s.accuracy.value:.0%} of the time (95 % interval {s.accuracy.low:.0%}–{s.accuracy.high:.0%}). "
            f"On the test words seen in training it gets {s.seen.value:.0%}, where a probe that can only memorise "
            f"words manages {s.control.value:.0%} (selectivity {s.selectivity.value:+.2f}, interval "
            f"{s.selectivity.low:+.2f} to {s.selectivity.high:+.2f})")
    if task in LEXICAL and not np.isnan(s.unseen.value):
        text += (f"; on words it never saw in training it gets {s.unseen.value:.0%} "
                 f"(the commonest class alone: {t.majority_unseen:.0%})")
    if not (s.selectivity.excludes_zero and s.selectivity.value > 0):
        text += (". On the words seen in training, this layer tells no more of the "
                 f"{name} than memorising each word does: its selectivity's interval does not lie above zero")
    return text + "."
