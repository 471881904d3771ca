"""ELMo-mini's training toolchain: ``python -m lab.elmo_training`` trains the embedded biLM on CPU.

What it does, reproducibly (fixed seeds, deterministic data split):
1. gets WordNet 3.0 from Debian's ``wordnet-base`` package (``corpus``) and
   builds train / held-out sequences from its glosses and examples;
2. trains the biLM of ``ElmoConfig.mini()`` (256-cell LSTMs by default, ``--lstm-dim``) in
   three stages (``--design staged``, the default; ELMo-mini v2 and v3):
   - ``words``: a word-level biLM: one vector per lowercased vocabulary word feeds the
     2-layer biLSTM, trained with the LM loss (sampled softmax over the vocabulary shared
     by both directions, as bilm-tf; Adam, warm-up, cosine decay over a time budget,
     gradient clipping at norm 5). With ``--word-table static`` (v3, the default) the
     vectors are context-free ones from the embedded BERT's input embeddings
     (``static_word_table``) and stay frozen, so only the LSTMs learn; with ``learned`` (v2)
     they start random and learn with the LSTMs;
   - ``chars``: ELMo's char CNN + highway + projection (architecture unchanged) trained to
     reproduce those word vectors from each word's characters, in lowercase, Capitalized and
     UPPER spellings, so any word and any case gets a vector (``fit_char_encoder``);
   - ``joint`` (optional, ``--joint-minutes``): the char CNN in front of the stage-1 LSTMs,
     all trained with the LM loss on the cased text (targets lowercased), plus a pull toward
     the stage-1 vectors (``--anchor``).
   Each stage checkpoints under ``--work`` and resumes when run again; a finished stage is
   skipped. ``--stage words|chars|joint`` stops after that stage. ``--design chars`` trains
   the char-CNN biLM from scratch instead (ELMo-mini v1);
3. measures held-out perplexity forward and backward with the full softmax, and a
   unigram baseline on the same split and vocabulary;
4. writes ``options.json`` + ``weights.hdf5`` (bilm-tf layout), the TF2 SavedModel with
   ELMo v3 signatures (``saved_model/``), ``metrics.json`` and ``MODEL_CARD.md``, with the
   sense-pair ROC AUC per layer, anisotropy and neighbours (``record``, ``card``).

The shipped model: ``python -m lab.elmo_training --out DIR`` with the settings its model card
names (the defaults: static table, dropout 0.1, stage 1 for 65 minutes, stage 2 for 15), then
copy DIR over ``lab/assets/elmo_mini/``. Tests call the stages on a tiny
corpus for a few steps; they never run the full training.

Modules: ``corpus`` (WordNet text), ``train`` (the biLM's training loops), ``stages``
(evaluation, the staged design, writing a model), ``record`` (metrics.json's measured
figures), ``card`` (MODEL_CARD.md), ``__main__`` (the command line). The app never imports
this package: it reads what the toolchain wrote to ``lab/assets/elmo_mini/``.
"""
