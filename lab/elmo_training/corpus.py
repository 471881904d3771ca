"""The English corpus ELMo-mini is trained on: WordNet 3.0 glosses and example sentences.

WordNet ships as Debian's ``wordnet-base`` package (Princeton WordNet licence: free to
use, copy, modify and distribute with the copyright notice). ``fetch_wordnet`` gets it
with ``apt-get download`` + ``dpkg -x`` into a folder (no root needed, no install), or
uses ``/usr/share/wordnet`` when the package is already installed.

Each synset gives one sequence: its quoted examples, then its definition led by up to
three of its lemmas, joined by ``;``:
``they pulled the canoe up on the bank ; he sat on the bank of the river ; bank , river bank : sloping land ...``
With ``tags=True`` (an experiment, off by default) the synset's lexicographer file name
(WordNet's coarse sense class, ``noun.object``) also goes into the text next to the
synset's word: ``... bank noun.object ; sloping land ... = bank , river bank noun.object``.
All sentences are split into words with ``lab.tokenize.split_words`` (as the app does).
The held-out split is by synset (a stable hash of its offset and part of speech), so a
definition and its examples always land on the same side.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from lab.senses import forms as word_forms
from lab.tokenize import split_words

DATA_FILES = ("data.noun", "data.verb", "data.adj", "data.adv")
# WordNet's lexicographer files (lexnames(5WN)): the coarse semantic class of a synset.
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute "
    "noun.body noun.cognition noun.communication noun.event noun.feeling noun.food noun.group "
    "noun.location noun.motive noun.object noun.person noun.phenomenon noun.plant "
    "noun.possession noun.process noun.quantity noun.relation noun.shape noun.state "
    "noun.substance noun.time verb.body verb.change verb.cognition verb.communication "
    "verb.competition verb.consumption verb.contact verb.creation verb.emotion verb.motion "
    "verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()
_SENSE_CLASSES = frozenset(LEXNAMES)
HELD_OUT_PER_MILLE = 20  # 2% of synsets
_QUOTED = re.compile(r'"([^"]+)"')
_ADJ_MARKER = re.compile(r"\((?:a|p|ip)\)$")


@dataclass(frozen=True)
class Corpus:
    train: list[list[str]]
    held_out: list[list[str]]
    source: str  # where the WordNet files came from

    def stats(self) -> dict:
        return {
            "train_sentences": len(self.train),
            "train_tokens": sum(len(s) for s in self.train),
            "held_out_sentences": len(self.held_out),
            "held_out_tokens": sum(len(s) for s in self.held_out),
            "tag_tokens": sum(w in _SENSE_CLASSES for s in self.train for w in s),
            "source": self.source,
        }


def fetch_wordnet(workdir: str | Path | None = None) -> Path:
    """Return the folder holding WordNet's ``data.*`` files, downloading the Debian package
    into ``workdir`` (a temp dir by default) when it is not installed."""
    installed = Path("/usr/share/wordnet")
    if all((installed / f).is_file() for f in DATA_FILES):
        return installed
    if not shutil.which("apt-get") or not shutil.which("dpkg"):
        raise RuntimeError("WordNet needs Debian's apt-get and dpkg (package wordnet-base).")
    work = Path(workdir or tempfile.mkdtemp(prefix="wordnet-"))
    work.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(["apt-get", "download", "wordnet-base"], cwd=work, capture_output=True, text=True)
    debs = sorted(work.glob("wordnet-base*.deb"))
    if not debs:
        raise RuntimeError(
            "apt-get download wordnet-base failed (run `apt-get update` first?): " + result.stderr.strip()[-500:]
        )
    subprocess.run(["dpkg", "-x", str(debs[-1]), str(work / "root")], check=True)
    folder = work / "root" / "usr" / "share" / "wordnet"
    if not all((folder / f).is_file() for f in DATA_FILES):
        raise RuntimeError(f"the wordnet-base package has no data.* files under {folder}")
    return folder


def parse_synset_line(line: str) -> tuple[str, list[str], str, list[str], str] | None:
    """One ``data.*`` line -> (synset key, lemmas, definition, examples, lexicographer
    file name such as ``noun.animal``); None for the licence header."""
    if line.startswith("  ") or "|" not in line:
        return None
    head, gloss = line.split("|", 1)
    fields = head.split()
    offset, lexfile, pos, n_words = fields[0], int(fields[1]), fields[2], int(fields[3], 16)
    lemmas = []
    for k in range(n_words):
        word = _ADJ_MARKER.sub("", fields[4 + 2 * k]).replace("_", " ")
        lemmas.append(word)
    examples = [e.strip() for e in _QUOTED.findall(gloss) if e.strip()]
    definition = _QUOTED.sub("", gloss)
    definition = re.sub(r"(\s*;\s*)+$", "", definition.strip()).strip(" ;")
    return f"{offset}{pos}", lemmas, definition, examples, LEXNAMES[lexfile]


def synset_sentences(lemmas: list[str], definition: str, examples: list[str], joined: bool = True,
                     tag: str = "", tag_first: bool = False) -> list[list[str]]:
    """The synset's text as word lists.

    joined: one sequence ``example ; example ; lemma , lemma : definition``, so that the
    LM learns to carry a sense's topic from one sentence into the next (as bilm-tf's
    stateful training on running text does); else one sequence per sentence.
    tag: a token (the lexicographer file, ``noun.animal``) put right after (or, with
    ``tag_first``, right before) each occurrence of the synset's word in its examples,
    and next to its lemmas placed after (before) the definition: ``definition = bank
    noun.object`` (``noun.object bank : definition``). To predict it, the forward LM
    (backward LM) output *at the word* must tell its sense class from the context read so
    far: WordNet's examples and glosses are sense-tagged text, and this is how a model
    this small learns to separate word senses.
    """
    parts = [split_words(e) for e in examples]
    if tag:
        parts = [_tag_occurrences(p, lemmas, tag, tag_first) for p in parts]
    if definition:
        head, body = split_words(", ".join(lemmas[:3])), split_words(definition)
        if not tag:
            parts.append(head + [":"] + body)
        elif tag_first:  # the backward LM reads the definition, then the lemmas, then the class
            parts.insert(0, [tag] + head + [":"] + body)
        else:  # the forward LM reads the definition, then the lemmas, then the class
            parts.append(body + ["="] + head + [tag])
    parts = [p for p in parts if p]
    if not joined:
        return parts
    out: list[str] = []
    for p in parts:
        out.extend(([";"] if out else []) + p)
    return [out] if out else []


def _tag_occurrences(words: list[str], lemmas: list[str], tag: str, before: bool) -> list[str]:
    """Insert ``tag`` next to every word of ``words`` that is a (one-word) lemma or its
    plain inflection (``bank``, ``banks``, ``banked``)."""
    forms = set().union(*(word_forms(lemma) for lemma in lemmas if " " not in lemma)) if lemmas else set()
    out: list[str] = []
    for w in words:
        if w.lower() in forms:
            out.extend([tag, w] if before else [w, tag])
        else:
            out.append(w)
    return out


def is_held_out(key: str) -> bool:
    return zlib.crc32(key.encode()) % 1000 < HELD_OUT_PER_MILLE


def load_corpus(wordnet_dir: str | Path | None = None, max_len: int = 60, joined: bool = True,
                tags: bool = False) -> Corpus:
    """Build the train / held-out sentences (deterministic: file order, stable hash split).

    Sentences longer than ``max_len`` words are cut into pieces of at most ``max_len``.
    """
    folder = Path(wordnet_dir) if wordnet_dir else fetch_wordnet()
    train, held = [], []
    for name in DATA_FILES:
        with open(folder / name, encoding="utf-8", errors="replace") as f:
            for line in f:
                parsed = parse_synset_line(line)
                if parsed is None:
                    continue
                key, lemmas, definition, examples, lexname = parsed
                target = held if is_held_out(key) else train
                tag_first = zlib.crc32(key.encode()) % 2 == 1
                tag = lexname if (joined and tags) else ""
                for s in synset_sentences(lemmas, definition, examples, joined, tag, tag_first):
                    target.extend(s[i : i + max_len] for i in range(0, len(s), max_len))
    return Corpus(train=train, held_out=held, source=f"WordNet 3.0 ({folder})")
