"""The words the app and its guide use, each in one or two plain sentences.

One source for two places: the Lesson page shows them (the app does not serve docs/), and
docs/glossary.md is made from them (``python -m lab.glossary > docs/glossary.md``;
tests/test_glossary.py checks that the file is what this module writes).
"""

from __future__ import annotations

# term -> explanation (Markdown), in alphabetical order of the term
TERMS: dict[str, str] = {
    "Anisotropy baseline": "How alike two unrelated words already look at a layer: the average cosine of "
                           "random word pairs. A cosine means \"alike\" only as far as it rises above this "
                           "line (the *adjusted* value subtracts it).",
    "Attention head": "One of the small parts of a Transformer layer that decides, for each word, how much "
                      "to look at every other word. BERT has several heads in every layer, each with its "
                      "own habits.",
    "BERT": "A Transformer model that reads a whole sentence at once, in both directions. The app's "
            "embedded one is all-MiniLM-L6-v2, a small distilled BERT (6 layers), not BERT-base.",
    "Context-only view": "What an ELMo layer knows about a word from its neighbours alone: the "
                         "left-to-right reading up to the word before it, and the right-to-left reading "
                         "down to the word after it. The word itself is left out.",
    "Cosine": "A score of how alike two vectors are, by the angle between them: 1 means they point the "
              "same way, 0 unrelated. The app compares a word's vectors in two sentences with it.",
    "ELMo": "An older model (2018) that reads a sentence with two LSTM layers, left to right and right "
            "to left, on top of a layer that only sees the word's letters. The embedded one, ELMo-mini, "
            "is a small teaching model trained for this app.",
    "Embedding (vector)": "The list of numbers a model uses for a word at one layer. Words used alike get "
                          "vectors that point the same way.",
    "Layer": "One step of a model's processing. Layer 0 is the input, before any context; each layer "
             "after it mixes in more of the sentence around the word.",
    "LSTM": "A kind of neural network layer that reads a sentence one word at a time and carries a memory "
            "along. ELMo uses them.",
    "p50 / p95": "Timing figures: half of the waits were shorter than p50 (the median), and 95 in 100 "
                 "shorter than p95.",
    "Padding mask": "Sentences in a batch are filled up to the same length with `[PAD]` tokens. The mask "
                    "tells attention to ignore them; without it, words give part of their attention to "
                    "padding.",
    "PCA": "A way to draw many-dimensional vectors on a flat map: it keeps the two directions along which "
           "they differ most.",
    "Projector mode": "A sidebar switch: large type, thick lines, colours that colour-blind viewers can "
                      "tell apart, long explanations folded away.",
    "Quiz mode": "A sidebar switch: the page's main figure waits behind a question built from its own "
                 "numbers, until someone presses *Reveal*.",
    "ROC AUC": "A score from 0.5 (guessing) to 1 (perfect) of how well one number tells two groups apart, "
               "here pairs of a word in the same sense from pairs in different senses.",
    "RSS": "The memory a running program holds, as the operating system counts it.",
    "SavedModel": "TensorFlow's folder format for a trained model (a `saved_model.pb` file and its "
                  "weights). A TF Hub download, once unpacked, is one.",
    "Scalar mix": "ELMo's output blends its three layers with learned weights; the app's sliders let you "
                  "change the weights and watch the blend.",
    "Self-similarity": "How alike one word's vectors are across all the sentences it appears in: high "
                       "means the model gives it much the same vector whatever the context.",
    "TF Hub handle": "An internet address of a published model (`https://tfhub.dev/...`). The app can load "
                     "one instead of its embedded models; that needs the internet the first time.",
    "WAL": "Write-ahead logging: a SQLite setting that lets several readers and one writer use the board's "
           "database at the same time.",
    "WordPiece": "How BERT cuts text into pieces it knows: a common word stays whole, a rare one is split "
                 "into parts (`embed`, `##ding`, `##s`).",
    "XSRF": "Cross-site request forgery: another website making your browser send requests to this app. "
            "Streamlit's protection against it stays on.",
}


def markdown() -> str:
    """docs/glossary.md: a title, one line on where the terms come from, then each term."""
    lines = ["# Glossary", "",
             "The words the app and its guide use. The app's Lesson page shows the same list "
             "(both come from `lab/glossary.py`).", ""]
    for term, text in TERMS.items():
        lines += [f"**{term}**: {text}", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(), end="")
