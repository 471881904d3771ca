"""``python -m lab report``: the lab's nine experiments, for a terminal or a handout.

    python -m lab report [--a TEXT] [--b TEXT] [--word WORD] [--html FILE]

The same numbers the pages show, computed by the same ``lab`` functions on whichever
models are configured (embedded by default): 1 environment, 2 ELMo inspection, 3 ELMo
``default`` vs ``elmo``, 4 the ambiguous word through ELMo's layers, 5 BERT's WordPiece
inputs and three measures, 6 a minimal seeded Transformer block, 7 padding and its mask,
8 the word through ELMo and BERT against each layer's anisotropy baseline, and its uses in
the reference corpus by WordNet sense, 9 the sense test.
``build`` returns the sections as data; ``as_text`` prints them as aligned tables and
``as_html`` writes one self-contained HTML file (plotly.js inline, so it opens offline)
with the figures the pages draw.
"""

from __future__ import annotations

import html
import importlib.metadata
import os
import sys
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from lab import access, analysis, sources, views
from lab.models.transformer import run_block
from lab.senses import NAMED_SENSES
from lab.tokenize import split_words
from lab.vectors import INPUT_LAYER

VERSIONS = ("tensorflow", "tensorflow-text", "tensorflow-hub", "numpy", "streamlit", "plotly")


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[str]]


@dataclass(frozen=True)
class Section:
    """One experiment: prose lines, tables, and figures (``lab.figures``, HTML report only)."""

    title: str
    lines: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list = field(default_factory=list)


def version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def find_word(words: Sequence[str], word: str, name: str) -> int:
    """Index of ``word`` (case-insensitive) in a sentence's words; a clear error if absent."""
    folded = [w.casefold() for w in words]
    if word.casefold() not in folded:
        raise ValueError(f"“{word}” is not a word of sentence {name} ({' '.join(words)}).")
    return folded.index(word.casefold())


def _f(x: float) -> str:
    return f"{x:.4f}"


def _shape(a) -> str:
    return "(" + ", ".join(str(n) for n in np.shape(a)) + ")"


def environment(bert, elmo, sentences: list[str]) -> Section:
    rows = [["python", sys.version.split()[0]]] + [[d, version(d)] for d in VERSIONS]
    models = [["BERT", bert.label, bert.source], ["ELMo", elmo.label, elmo.source]]
    lines = [f"Sentence {n}: {s}" for n, s in zip("AB", sentences)]
    return Section("1 · Environment", lines + [f"Shared server: {access.describe(os.environ.get('LAB_SHARED'))}"],
                   [Table(["package", "version"], rows), Table(["family", "model", "source"], models)])


def elmo_inspection(elmo, out) -> Section:
    info = elmo.info()
    lines = [f"Backend: {info.get('backend', '')}",
             f"Parameters: {info['parameters']:,}" if info.get("parameters") else "Parameters: not reported",
             "Signatures: " + ", ".join(info.get("signatures", []))]
    rows = [[a.name, a.dtype, str(a.shape)] for a in views.elmo_outputs(out)]
    return Section("2 · ELMo: signatures, output keys, dtypes and shapes", lines,
                   [Table(["output", "dtype", "shape for the two sentences"], rows)])


def elmo_sentence_vectors(out) -> Section:
    sv = views.sentence_vectors(out)
    rows = [[r.name, str(r.shape), _f(r.norm), ", ".join(f"{v:+.3f}" for v in r.first)] for r in sv.rows]
    return Section("3 · ELMo: `default` (one vector per sentence) vs `elmo` (one per word)",
                   [f"Cosine of the two `default` vectors: {_f(sv.default_cosine)}"],
                   [Table(["output", "shape", "norm", "first values"], rows)])


def _baseline_table(pair: views.WordPair, base: np.ndarray) -> Table:
    """Per layer: the pair's cosine, the layer's baseline and the adjusted similarity, as the pages show them."""
    rows = views.against_baseline(pair.cosine, base)
    return Table(["layer", *rows], [[n, *(_f(v[i]) for v in rows.values())] for i, n in enumerate(pair.layer_names)])


BASELINE_LINE = "Baseline: " + views.BASELINE_NOTE


def elmo_word(elmo, out, ia: int, ib: int, baseline) -> Section:
    from lab import figures

    learned = elmo.mix_weights
    weights, gamma = (learned[0], learned[1]) if learned is not None else ([0.0, 0.0, 0.0], 1.0)
    pair = views.word_pair(views.with_context_only(views.mix(out, weights, gamma)), (0, ia), (1, ib))
    base = baseline.at(pair.layer_names, weights)
    title = f'ELMo: cosine of A "{pair.texts[0]}" and B "{pair.texts[1]}" at each layer'
    mix = "the model's learned mix" if learned is not None else "a uniform mix (no learned weights)"
    return Section(f"4 · The ambiguous word “{pair.texts[0]}” / “{pair.texts[1]}” through ELMo's layers",
                   [f"`{views.MIX_LAYER}` uses {mix}. `{INPUT_LAYER}` (ELMo's `word_emb`) is context-free: the same "
                    "word gives 1.0.",
                    "The context-only rows are not ELMo outputs: at each word, the forward LSTM's state at the "
                    "word before and the backward LSTM's state at the word after, what the biLM uses to predict "
                    "the word. They leave the word's own identity out, so they separate senses more.", BASELINE_LINE],
                   [_baseline_table(pair, base)],
                   [figures.bar_by_layer(pair.layer_names, pair.cosine, title, out.model_label,
                                         groups=views.layer_kinds(pair.layer_names), baseline=base,
                                         group_names=views.LAYER_KINDS)])


def bert_section(out, ia: int, ib: int, baseline) -> Section:
    from lab import figures

    tables = []
    for b, name in enumerate("AB"):
        t = views.wordpiece_table(out, b)
        tables.append(Table([f"{name}: position"] + [str(p) for p in range(len(t.tokens))],
                            [["token"] + t.tokens, ["input_word_ids"] + list(map(str, t.input_word_ids)),
                             ["input_mask"] + list(map(str, t.input_mask)),
                             ["input_type_ids"] + list(map(str, t.input_type_ids)), ["word"] + t.words]))
    arrays = {"input_word_ids": out.bert.input_word_ids, "input_mask": out.mask,
              "input_type_ids": out.bert.input_type_ids}
    shapes = " · ".join(f"{k} {a.dtype} {_shape(a)}" for k, a in arrays.items())
    pair = views.word_pair(out, (0, ia), (1, ib))
    m = views.sentence_measures(out, pair)
    token = f'contextual token "{pair.texts[0]}" / "{pair.texts[1]}"'
    tables.append(Table(["measure", "cosine"], [["pooled output", _f(m.pooled)],
                                                [token, _f(m.token)],
                                                ["mean-pooled content tokens", _f(m.mean_content)]]))
    base = baseline.at(pair.layer_names)
    tables.append(_baseline_table(pair, base))
    title = f'BERT: cosine of A "{pair.texts[0]}" and B "{pair.texts[1]}" at every layer'
    return Section("5 · BERT: word pieces, model inputs and three measures",
                   [f"Model: {out.model_label}", shapes, BASELINE_LINE], tables,
                   [figures.layer_curve(pair.layer_names, {"cosine": pair.cosine}, title, out.model_label,
                                        baseline=base)])


def block_section(sentences: list[str], seed: int, head: int) -> tuple[Section, Section]:
    from lab import figures

    run = run_block(sentences, seed=seed)
    batch, c = run.batch, run.config
    B, T = batch.token_ids.shape
    shapes = Table(["tensor", "shape"], [["token_ids", f"({B}, {T})"], ["padding_mask", f"({B}, {T})"],
                                         ["attention bias", f"({B}, 1, 1, {T})"],
                                         ["attention", f"({B}, {c.num_heads}, {T}, {T})"],
                                         ["output", f"({B}, {T}, {c.width})"]])
    row = int(np.argmin(batch.padding_mask.sum(axis=1)))  # the shorter sentence: it has padding
    m = run.attentions[row, head]
    attn = Table(["query \\ key"] + batch.tokens[row],
                 [[q] + [f"{v:.3f}" for v in r] for q, r in zip(batch.tokens[row], m)])
    block = Section(f"6 · A minimal Transformer block (seed {seed}, random weights)",
                    [f"Model: {run.label}", f"Head {head + 1} of sentence {'AB'[row]} (rows: queries, columns: keys)."],
                    [shapes, attn], [figures.attention_heatmap(m, batch.tokens[row], f"Head {head + 1}, sentence "
                                                               f"{'AB'[row]}", run.label)])
    check = views.padding_check(m, batch.padding_mask[row])
    rows_ok = analysis.check_attention_rows(run.attentions[row], batch.padding_mask[row])
    sums = run.attentions[row, head][batch.padding_mask[row] > 0].sum(axis=-1)
    unmasked = views.padding_check(run_block(sentences, seed=seed, use_mask=False).attentions[row, head],
                                   batch.padding_mask[row])
    padding = Section("7 · Padding and the mask", [
        f"padding_mask of sentence {'AB'[row]}: {batch.padding_mask[row].tolist()}",
        f"Rows of the real queries sum to: {', '.join(f'{s:.6f}' for s in sums)}",
        f"Padded key columns: {check.padded}; largest weight on them with the mask on: {check.largest_masked!r}",
        f"Every head: real rows sum to 1 and padded keys are exactly 0: {'yes' if rows_ok else 'NO'}",
        f"With the mask off, the real tokens give {unmasked.leak:.1%} of their attention to padding."])
    return block, padding


def comparison_sections(bert, elmo, bert_out, elmo_out, ia: int, ib: int, store) -> tuple[Section, Section]:
    """8: the word through both models on one depth axis, against each layer's anisotropy
    baseline (``store``: a ``lab.reference.ReferenceStore``); 9: the sense test of both
    models, and the two sentences' pair among its pairs. As on the ELMo vs BERT page."""
    from lab import elmo_vs_bert, figures, stored

    runs = {"bert": elmo_vs_bert.align(bert_out), "elmo": elmo_out}
    loaded = {"bert": bert, "elmo": elmo}
    baselines = {f: store.baseline(m) for f, m in loaded.items()}
    corpus = store.corpus
    lines = [f"Reference corpus: {len(corpus.sentences):,} sentences ({corpus.path.split('/')[-1]}). Each layer's "
             f"baseline is the mean cosine of {baselines['bert'].pairs:,} random word pairs from different "
             "sentences (contextual spaces are anisotropic: Ethayarajh, EMNLP 2019); a cosine near it says the "
             "two uses are no more alike than two unrelated words. Adjusted: (cos - base) / (1 - base). BERT's "
             "word vector: its first piece."]
    found = {}
    for family, out in runs.items():
        try:
            found[family] = elmo_vs_bert.model_curve(out, (0, ia), (1, ib), "first", baselines[family].values)
        except ValueError as exc:
            lines.append(f"{exc}. Its curve is left out.")
    labels = " · ".join(m.short_label for m in loaded.values())
    rows = elmo_vs_bert.curve_rows(list(found.values()))
    tables = [Table(list(rows[0]), [[str(v) if isinstance(v, str) else _f(v) for v in r.values()] for r in rows])
              ] if rows else []
    charts = [figures.word_curves_chart([(figures.MODEL_COLOURS[f], c) for f, c in found.items()], False, labels)
              ] if found else []
    maps, notes = _use_maps(found, loaded, store, runs["elmo"].words[0][ia])
    if maps:
        tables.append(Table(["use map", "sense", "gloss", "WordNet tag count", "uses"],
                            [[c.short_label, e.label, e.gloss, str(e.tag_count), str(e.uses)]
                             for _, c, m in maps for e in m.senses.legend]))
        charts += [figures.use_map_chart(m, m.contexts(corpus.sentences), c.texts, m.title, c.short_label,
                                         colour=figures.MODEL_COLOURS[family])
                   for family, c, m in maps]
    both = Section("8 · ELMo vs BERT: one word, both models, against each layer's baseline", lines + notes, tables,
                   charts)
    tests = {f: stored.sense_test(m, f, m.source, "first") for f, m in loaded.items()}
    n = len(tests["bert"].labels)
    sense_lines = [f"For each of {n} sentence pairs that share an ambiguous word (bank, bat, spring, ...), the "
                   "cosine of the word's two vectors; ROC AUC: how often a same-sense pair has a higher cosine "
                   "than a different-sense pair (0.5 = chance, 1 = always)."]
    for f, t in tests.items():
        line = f"{t.short_label}: best at {t.layer_names[t.best]} (ROC AUC {t.auc[t.best]:.3f})."
        if f in found:
            p = elmo_vs_bert.placed(t, found[f])
            line += (f" There, the two sentences' pair has cosine {p.cosine:.3f}: above {p.above_same:.0%} of the "
                     f"same-sense pairs and {p.above_different:.0%} of the different-sense pairs.")
        sense_lines.append(line)
    auc = Table(["model", "layer", "depth", "ROC AUC"], [[t.short_label, name, _f(d), _f(a)] for t in tests.values()
                                                         for name, d, a in zip(t.layer_names, t.depth, t.auc)])
    senses = Section("9 · The sense test: which layer tells word senses apart?", sense_lines, [auc],
                     [figures.sense_chart([(figures.MODEL_COLOURS[f], t) for f, t in tests.items()], labels)])
    return both, senses


def _use_maps(found: dict, loaded: dict, store, word: str) -> tuple[list[tuple], list[str]]:
    """(curve, ``lab.elmo_vs_bert.UseMap``) of each model that placed the two words: every use of
    ``word`` in the corpus at its top layer, by sense, as on the ELMo vs BERT page; and the
    lines that say how to read them and what is left out."""
    from lab import elmo_vs_bert

    maps, lines = [], []
    for family, c in found.items():
        top = len(c.layer_names) - 1
        m = elmo_vs_bert.use_map(store.index(loaded[family], top), store.corpus, word,
                                 c.vectors_a[top], c.vectors_b[top])
        if m is None:
            lines.append(f"“{word}” has fewer than {elmo_vs_bert.MIN_OCCURRENCES} uses in the reference corpus: no map "
                         f"for {c.short_label}.")
        else:
            maps.append((family, c, m))
    if maps:
        lines.append(f"Use maps: every use of “{word}” in the corpus at each model's top layer and the two "
                     "sentences' (stars), on the first two principal components; a use is coloured by its "
                     "WordNet sense where its sentence is WordNet's example of a sense of the word itself "
                     f"(the {NAMED_SENSES} commonest by WordNet's tag counts named), grey where it "
                     "illustrates another word (sense not known).")
    return maps, lines


def build(a: str, b: str, word: str | None = None, seed: int = 0, head: int = 0,
          bert_source: str | None = None, elmo_source: str | None = None,
          progress: Callable[[str], None] = lambda _: None, store=None) -> list[Section]:
    """Run the nine experiments on the configured models (or the given sources); ``store``:
    the ``lab.reference.ReferenceStore`` of the baselines (default: the configured corpus
    and cache folder)."""
    from lab import models, reference

    progress(f"loading BERT ({bert_source or sources.default_source('bert')})...")
    bert = models.load("bert", bert_source)
    progress(f"loading ELMo ({elmo_source or sources.default_source('elmo')})...")
    elmo = models.load("elmo", elmo_source)
    progress("running the experiments...")
    elmo_out = models.embed(elmo, [a, b])
    bert_out = models.embed(bert, [a, b])
    words = [split_words(a), split_words(b)]
    if word:
        e_ia, e_ib = find_word(words[0], word, "A"), find_word(words[1], word, "B")
        b_ia, b_ib = find_word(bert_out.words[0], word, "A"), find_word(bert_out.words[1], word, "B")
    else:
        e_ia, e_ib = analysis.default_pair(*words)
        b_ia, b_ib = analysis.default_pair(*bert_out.words)
    block, padding = block_section([a, b], seed, head)
    progress("reading the models against the reference corpus (baselines, the top layers' uses of the word, "
             "the sense pairs)...")
    store = store or reference.ReferenceStore(reference.load_corpus(), reference.cache_dir())
    both, senses = comparison_sections(bert, elmo, bert_out, elmo_out, e_ia, e_ib, store)
    return [environment(bert, elmo, [a, b]), elmo_inspection(elmo, elmo_out), elmo_sentence_vectors(elmo_out),
            elmo_word(elmo, elmo_out, e_ia, e_ib, store.baseline(elmo)),
            bert_section(bert_out, b_ia, b_ib, store.baseline(bert)), block, padding, both, senses]


# --- rendering ---------------------------------------------------------------------------


def table_text(t: Table) -> str:
    """Aligned columns: numbers to the right, text to the left."""
    cells = [t.header] + t.rows
    widths = [max(len(r[i]) for r in cells if i < len(r)) for i in range(len(t.header))]

    def line(row):
        return "  ".join(c.rjust(w) if _numeric(c) else c.ljust(w) for c, w in zip(row, widths)).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(t.header), rule] + [line(r) for r in t.rows])


def _numeric(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def as_text(sections: list[Section]) -> str:
    out = []
    for s in sections:
        out += ["", s.title, "=" * len(s.title)] + s.lines
        for t in s.tables:
            out += ["", table_text(t)]
    return "\n".join(out).lstrip("\n") + "\n"


def as_html(sections: list[Section], title: str = "Context Lab report") -> str:
    """One self-contained page: text escaped, plotly.js inline once (opens offline); each
    figure's camera saves the PNG a page's chart does (``figures.export_config``)."""
    from lab import figures

    parts, js = [], True
    for s in sections:
        parts.append(f"<h2>{html.escape(s.title)}</h2>")
        parts += [f"<p>{html.escape(line)}</p>" for line in s.lines]
        for t in s.tables:
            head = "".join(f"<th>{html.escape(c)}</th>" for c in t.header)
            body = "".join("<tr>" + "".join(f"<td class='n'>{html.escape(c)}</td>" if _numeric(c) else
                                            f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in t.rows)
            parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        for fig in s.figures:
            parts.append(fig.to_html(full_html=False, include_plotlyjs=js, config=figures.export_config(fig)))
            js = False
    style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
             "table{border-collapse:collapse;margin:1em 0;font-size:.9em;display:block;overflow-x:auto}"
             "td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}"
             "td.n{text-align:right;font-variant-numeric:tabular-nums}")  # numbers line up, as in the text
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{style}</style></head><body><h1>{html.escape(title)}</h1>{''.join(parts)}</body></html>\n")
