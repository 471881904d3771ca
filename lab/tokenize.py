"""Tokenization without TensorFlow: input checks and word tokens (WordPiece: ``lab.wordpiece``).

Word tokens split punctuation from words (``"bank."`` -> ``"bank" "."``), as the
1B Word Benchmark that ELMo was trained on is tokenized; TF Hub ELMo's ``default``
signature splits on spaces only, so the app always feeds tokens through ``tokens``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# A word (letters/digits, inner apostrophes and hyphens kept: "don't", "well-known"),
# or any single character that is neither a word character nor a space.
_WORD_RE = re.compile(r"\w+(?:['’\-]\w+)*|[^\w\s]")

# Zero-width and other invisible format characters (ZWSP, ZWJ, BOM, bidi marks) carry no
# meaning for the models and make tokens that look identical compare unequal.
_INVISIBLE = {"Cf"}


def clean_text(text: str) -> str:
    """NFC-normalize and drop invisible format characters (zero-width, bidi marks)."""
    text = unicodedata.normalize("NFC", text)
    return "".join(ch for ch in text if unicodedata.category(ch) not in _INVISIBLE)


# A sentence longer than this is cut (with a notice): models and figures stay responsive.
MAX_INPUT_CHARS = 5000

# The sentences every page, the report and ``python -m lab prepare`` start from.
DEFAULT_A = "The central bank raised interest rates yesterday."
DEFAULT_B = "A fisherman rested on the river bank at sunset."


# The notice for text with digits but no letters (``prepare_text``)
NUMBERS_ONLY = ("it has no letters, only numbers. The pages show how the models read them, but a number has "
                "no word senses to compare: type a sentence with words to see context change a word.")


def prepare_text(text: str, max_chars: int = MAX_INPUT_CHARS) -> tuple[str, list[str]]:
    """Clean a sentence a person typed; return it with notices about what changed.

    Raises ValueError with a message a person can act on when nothing usable is left
    (empty, only spaces, only invisible characters, no letters or digits at all). Text with
    digits but no letters ("1234 5678 90") is kept, with a notice: the models read numbers,
    but a number has no senses for the pages to compare.
    """
    if not isinstance(text, str):
        raise ValueError("expected text")
    notices = []
    cleaned = clean_text(text)
    removed = len(unicodedata.normalize("NFC", text)) - len(cleaned)
    if removed:
        notices.append(f"removed {removed} invisible character(s) (zero-width or direction marks).")
    cleaned = " ".join(cleaned.split())  # newlines and runs of spaces -> one space
    if not cleaned:
        raise ValueError("it is empty. Type a sentence.")
    if not any(ch.isalnum() for ch in cleaned):
        raise ValueError("it has no letters or digits (only symbols, emoji or punctuation). "
                         "Type at least one word.")
    if not any(ch.isalpha() for ch in cleaned):
        notices.append(NUMBERS_ONLY)
    if len(cleaned) > max_chars:
        cleaned = cleaned[:max_chars].rsplit(" ", 1)[0] or cleaned[:max_chars]
        notices.append(f"it is longer than {max_chars:,} characters; only the first "
                       f"{len(cleaned):,} are used.")
    return cleaned, notices


def split_words(text: str) -> list[str]:
    """Split text into word tokens, punctuation separate: ``"bank."`` -> ``["bank", "."]``."""
    return _WORD_RE.findall(clean_text(text))


def word_spans(text: str) -> list[tuple[str, int, int]]:
    """``split_words(text)`` with each word's (start, end) characters in ``clean_text(text)``."""
    return [(m.group(), m.start(), m.end()) for m in _WORD_RE.finditer(clean_text(text))]


@dataclass(frozen=True)
class WordTokens:
    """A sentence's word tokens as a word-level model reads them."""

    words: list[str]  # at most ``max_words``
    total: int  # words in the sentence before the cap
    too_long: list[str]  # tokens with more UTF-8 bytes than the model reads


ELMO_MAX_WORDS = 150  # per sentence on the ELMo pages: the LSTMs read word by word, and figures stay legible


def word_tokens(text: str, max_words: int, max_token_bytes: int) -> WordTokens:
    """``split_words``, capped at ``max_words``, with the tokens the model will cut."""
    words = split_words(text)
    kept = words[:max_words]
    return WordTokens(kept, len(words), [w for w in kept if len(w.encode("utf-8")) > max_token_bytes])


@dataclass(frozen=True)
class Encoding:
    """One sentence as WordPiece pieces, aligned to its words by character offsets (made by
    ``lab.wordpiece``; here, without TensorFlow, so that a stored run unpickles without it).

    ``word_index[i]`` is the word that piece ``i`` belongs to; ``words[w]`` is that word's
    text as typed (case kept), ``spans[i]`` the piece's (start, end) characters in ``text``.
    """

    text: str
    pieces: list[str]
    ids: list[int]
    spans: list[tuple[int, int]]
    word_index: list[int]
    words: list[str]
    truncated: bool = False

    def pieces_of_word(self, word: int) -> list[int]:
        """Indices (into ``pieces``) of the pieces of word number ``word``."""
        return [i for i, w in enumerate(self.word_index) if w == word]
