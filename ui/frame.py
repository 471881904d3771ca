"""The frame every page shares: the sidebar (sentences, model sources, projector mode).

Each page calls ``frame()`` first, so the same sidebar is drawn whether the page runs
under ``app.py``'s navigation or alone (``AppTest.from_file("app_pages/x.py")``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from lab import sources, views
from lab.tokenize import DEFAULT_A, DEFAULT_B, MAX_INPUT_CHARS, prepare_text
from ui import access, state
from ui.text import md_escape
CUSTOM = "custom"

_PROJECTOR_CSS = """
<style>
/* Text only: setting the root font size would scale every rem-based padding too and
   squeeze the page into a narrow column. */
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li,
[data-testid="stCaptionContainer"], [data-testid="stText"], [data-testid="stWidgetLabel"] p,
[data-testid="stMetricLabel"] p, [data-testid="stAlert"] p, button p, textarea, input {
  font-size: 1.35rem !important; line-height: 1.45 !important; }
/* Less for what must fit a width: a table of two default sentences' tokens (the BERT and
   attention pages' [PAD] columns were cut off) and the page names in the sidebar (cut off
   with an ellipsis). */
td, th, td [data-testid="stMarkdownContainer"] p, th [data-testid="stMarkdownContainer"] p,
[data-testid="stSidebarNav"] [data-testid="stMarkdownContainer"] p { font-size: 1.15rem !important; }
td, th { padding: 4px 5px !important; }
/* A table in a fold (a section folded away on a projector) has the fold's padding less room. */
[data-testid="stExpander"] td, [data-testid="stExpander"] th,
[data-testid="stExpander"] td [data-testid="stMarkdownContainer"] p { font-size: 1.05rem !important; }
/* Wrap what the larger type no longer fits on one line (a metric's label, a button's),
   rather than cutting it off with an ellipsis. */
[data-testid="stMetricLabel"] [data-testid="stMarkdownContainer"], [data-testid="stMetricLabel"] p,
button [data-testid="stMarkdownContainer"], button p {
  white-space: normal !important; overflow: visible !important; text-overflow: clip !important; }
/* A select box's list of options (a long sentence's words) opens in a layer of its own. */
[data-testid="stSelectboxVirtualDropdown"] [role="option"],
[data-testid="stSelectboxVirtualDropdown"] [role="option"] * { font-size: 1.35rem !important; }
/* The sentence boxes tall enough for two sentences of the default length at this size. */
[data-testid="stTextAreaRootElement"] { height: auto !important; }
[data-testid="stTextAreaRootElement"] textarea { height: 6.6em !important; }
[data-testid="stMetricValue"], [data-testid="stMetricValue"] [data-testid="stMarkdownContainer"] p {
  font-size: 2.8rem !important; }
h2 { font-size: 2.2rem !important; } h3 { font-size: 1.8rem !important; }
/* The first screen is the figure's: a compact title (ui.frame.page_header), less of
   Streamlit's empty band above the page. */
h1 { font-size: 2.2rem !important; padding: 0.25rem 0 !important; }
[data-testid="stMainBlockContainer"] { padding-top: 2.5rem !important; }
</style>
"""

@dataclass(frozen=True)
class Frame:
    """What the sidebar holds for this run."""

    sentence_a: str
    sentence_b: str
    bert_source: str
    elmo_source: str
    projector: bool
    quiz: bool  # quiz mode: main figures wait behind a question (ui.quiz_gate)
    problems: tuple[str, ...]  # why the sentences cannot be used (empty when fine)
    notices: tuple[str, ...]  # changes made to the input (truncation, invisible characters)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def sentences(self) -> list[str]:
        return [self.sentence_a, self.sentence_b]


def _source_picker(family: str, title: str, shared: bool) -> tuple[str, list[str]]:
    """A select box of embedded / presets / custom, plus a text box for a custom source.

    For a restricted request (``lab.access``: one from another machine, or any with
    ``LAB_SHARED=1``) there is no custom choice: only the embedded
    model, the presets and the source the environment configures. A link that carries
    another source is ignored, with a notice. Returns (source, notices).
    """
    presets = [p for p in sources.PRESETS if p.family == family]
    options = [sources.EMBEDDED] + [p.handle for p in presets]
    names = {sources.EMBEDDED: "Embedded (offline)", CUSTOM: "Custom handle or folder..."}
    names |= {p.handle: p.label for p in presets}
    env_default = sources.default_source(family)
    if shared and env_default not in options:  # the server's own configuration
        options.append(env_default)
        names[env_default] = f"Configured on this server: {env_default}"
    if not shared:
        options.append(CUSTOM)
    src, custom = f"{family}_src", f"{family}_custom"
    state.register(**{src: env_default if env_default in options else CUSTOM,
                      custom: "" if env_default in options else env_default})
    notices = []
    if shared and (state.get(src) not in options or state.get(custom)):
        notices.append(f"This is a shared server: the {title} source in the link is ignored; "
                       "only the models in the sidebar can be used.")
        state.put(src, env_default)
        state.put(custom, "")
    choice = state.widget(st.selectbox, src, title, options=options, format_func=lambda o: names[o])
    if choice != CUSTOM:
        return choice, notices
    text = state.widget(
        st.text_input, custom, f"{title}: handle or local folder",
        placeholder="/models/my_model  or  https://tfhub.dev/...",
        help="A folder that holds saved_model.pb (an extracted TF Hub download), or a TF Hub "
             "handle (needs a network).",
    )
    return text.strip() or sources.EMBEDDED, notices


def frame(page_title: str, sentences: bool = True) -> Frame:
    """Draw the shared sidebar and return its values; call once at the top of each page.
    Without ``sentences`` (a page that reads none: the class board's), the sentence boxes
    are left out and the link's sentences kept as they are."""
    state.link_notices()  # here, at the top: the link's values the page cannot show, and what it shows
    state.register(a=DEFAULT_A, b=DEFAULT_B, proj=False, quiz=False)
    with st.sidebar:
        st.markdown("### Context Lab")
        # the classroom switches first: a teacher reaches them before the sentences and models
        projector = state.widget(st.toggle, "proj", "Projector mode",
                                 help="Large type, thick lines, colour-blind-safe high-contrast colours. On a screen "
                                      "under 1280 px wide (a 1024-px projector), close this sidebar once the "
                                      "sentences are in: the figures need the room.")
        quiz = state.widget(st.toggle, "quiz", "Quiz mode",
                            help="Main figures stay hidden behind a question built from their numbers "
                                 "until you press Reveal.")
        if sentences:
            st.caption("Type two sentences, then click words on the page.")
            state.widget(st.text_area, "a", "Sentence A", height=80)
            state.widget(st.text_area, "b", "Sentence B", height=80)
        st.markdown("**Models**")
        shared = access.restricted()
        bert_source, bert_notes = _source_picker("bert", "BERT", shared)
        elmo_source, elmo_notes = _source_picker("elmo", "ELMo", shared)
        if note := access.sidebar_note(shared):
            st.caption(f":material/{'groups' if shared else 'wifi'}: {note}")
        st.caption("The address bar holds this view: bookmark or share it to reopen it as is.")
    if projector:
        st.markdown(_PROJECTOR_CSS, unsafe_allow_html=True)  # our own CSS, no user text

    problems, notices, texts = [], bert_notes + elmo_notes, []
    for name, key in (("Sentence A", "a"), ("Sentence B", "b")):
        try:
            text, notes = prepare_text(state.get(key) or "", MAX_INPUT_CHARS)
            texts.append(text)
            notices += [f"{name}: {n}" for n in notes]
        except ValueError as exc:
            texts.append("")
            problems.append(f"{name}: {exc}")
    return Frame(texts[0], texts[1], bert_source, elmo_source, bool(projector), bool(quiz),
                 tuple(problems), tuple(notices))


def page_header(title: str, caption: str, projector: bool, line: str):
    """A page's title and what it shows (``caption``, Markdown); returns the container for the
    model it ran and its downloads (``with page_header(...) as about:``), which follows.

    In projector mode compact, so that the figure a lesson opens the page for fits the first
    screen: the title (smaller, by the projector's CSS) beside "Model and downloads" folded
    into one line, and ``line`` (one short line, Markdown) in place of the caption."""
    if projector:
        left, right = st.columns([3, 2], vertical_alignment="center")
        left.title(title)
        about = right.expander("Model and downloads", icon=":material/memory:")
        st.caption(line)
        return about
    st.title(title)
    st.caption(caption)
    return st.container()


def section_before_figure(title: str, projector: bool):
    """A section above the figure a lesson opens its page for: under its heading, or in
    projector mode folded under its title, so that the figure reaches the first screen.
    Returns (container, folded); an explanation in a folded section does not fold again
    (Streamlit does not nest folds): ``explain(text, projector and not folded)``."""
    if projector:
        return st.expander(title), True
    st.header(title)
    return st.container(), False


def explain(text: str, projector: bool, show=st.markdown) -> None:
    """A page's long explanation (Markdown): shown as it is normally; in projector mode folded
    into an "Explain" expander, so that the figure it explains fits on the first screen in
    the large type. ``show`` draws it (``st.info`` for a notice). Not for use inside another
    expander (Streamlit does not nest them)."""
    if projector:
        with st.expander("Explain", icon=":material/info:"):
            show(text)
    else:
        show(text)


def show_input_messages(fr: Frame) -> None:
    """Show what is wrong with the input (and stop the page), or what was changed in it."""
    for note in fr.notices:
        st.info(note)
    if fr.problems:
        for problem in fr.problems:
            st.warning(problem)
        state.sync_url()
        st.stop()


# More words than this make a wall of pills to scan: a select box instead, which a person
# can search by typing.
MAX_PILLS = 40


def word_pills(key: str, row: int, words, fallback: int, **kwargs) -> int:
    """A picker of the words of sentence A (``row`` 0) or B (1) bound to ``key``: the index
    of the chosen word (``fallback`` where the stored one is not a word of the sentence).
    Pills, or a select box for a long sentence (``token_picker``)."""
    return token_picker(key, f"Word in sentence {'AB'[row]}", words, fallback, **kwargs)


def token_picker(key: str, label: str, tokens, fallback: int, positions=None, **kwargs) -> int:
    """One of ``tokens`` chosen, bound to the persistent ``key``: its position (``positions``,
    one for each token; by default its index), ``fallback`` where the stored one is not
    among them. Pills (a second click on the chosen one keeps it: ``state.choice``); for
    more than ``MAX_PILLS`` tokens a select box, searchable, whose options read
    "12 · bank" (position and token: a repeated word's are distinct). ``kwargs`` as for
    either (``on_change``...)."""
    positions = list(range(len(tokens)) if positions is None else positions)
    if len(positions) > MAX_PILLS:
        labels = [f"{p} · {t}" for p, t in zip(positions, tokens)]  # plain text: a select box reads no Markdown
        return state.choice(st.selectbox, key, label, positions, fallback, format_func=dict(zip(positions, labels)).get,
                            filter_mode="contains", **kwargs)
    return state.choice(st.pills, key, label, positions, fallback,
                        format_func=dict(zip(positions, pill_labels(tokens))).get, **kwargs)


def pill_labels(words) -> list[str]:
    """Labels for pills of ``words`` (``md_escape``d), each distinct: Streamlit knows a pill by
    its label, so of a sentence's two "bank"s only one could be picked, and a rerun moved the
    selection to the last. A repeated word's later labels end in zero-width spaces (one for
    the second, two for the third, ...), which look the same; typed text never holds them
    (``lab.tokenize.prepare_text`` removes invisible characters)."""
    seen: dict[str, int] = {}
    labels = []
    for word in words:
        label = md_escape(word)
        labels.append(label + "\u200b" * seen.get(label, 0))
        seen[label] = seen.get(label, 0) + 1
    return labels


def plain_table(df, **kwargs) -> None:
    """``st.table``, which renders every cell, column label and index label as Markdown
    (a token "#" would be an empty heading, "-" a bullet), with the text shown as typed,
    and its numbers with the decimals the page rounded them to (``decimals``; st.table
    would print every float with four, 0.167 as 0.1670 and 41.222712 as 41.2227)."""
    def shown(v):
        return md_escape(v) if isinstance(v, str) else v
    floats = [values for _, values in _float_columns(df)]
    df = df.map(shown)
    df.index, df.columns = df.index.map(shown), df.columns.map(shown)
    if floats:
        df = df.style.format(precision=decimals(floats), na_rep="–")
    st.table(df, **kwargs)


def _float_columns(df) -> list[tuple[str, np.ndarray]]:
    """``df``'s float columns: (name as the grid names it, values), every one even where
    two share a name."""
    return [(str(df.columns[c]), df.iloc[:, c].to_numpy()) for c in range(df.shape[1])
            if pd.api.types.is_float_dtype(df.dtypes.iloc[c])]


def decimals(columns, most: int = 6, unrounded: int = 4) -> int:
    """The decimals that show every finite value of ``columns`` (float arrays) as it is: the
    fewest each column needs, the most of any column, since a page rounds a table's numbers
    alike (``unrounded`` where a column needs over ``most``). A column's float type counts:
    a float32 0.9503 is 0.95029998 as a float64, and is still 0.9503."""
    needed = 0
    for col in columns:
        col = np.asarray(col)
        v = col[np.isfinite(col)].astype(np.float64)
        if not v.size:
            continue
        slack = 4 * np.finfo(col.dtype).eps * np.abs(v)
        needed = max(needed, next((d for d in range(most + 1)
                                   if np.all(np.abs(np.round(v, d) - v) <= slack + 10.0 ** -(d + 9))), unrounded))
    return needed


def number_formats(df) -> dict:
    """Column configs that print every float column of ``df`` with the decimals the page
    rounded the table to (``decimals``), as ``plain_table`` does: the grid would print each
    number as short as it goes, 0.798 under 0.7782 and 0.08 beside 0.0879."""
    floats = _float_columns(df)
    places = decimals([values for _, values in floats])
    return {name: st.column_config.NumberColumn(format=f"%.{places}f") for name, _ in floats}


def show_table(df, key: str, projector: bool, wrap: bool = False, **kwargs) -> None:
    """A table: the interactive grid normally; in projector mode, or with ``wrap`` (a few
    rows of long text, which the grid would cut off), a plain HTML table (``plain_table``),
    whose cells wrap and whose text the projector style enlarges (the grid draws on a canvas
    at a fixed size). Below it, a small button downloads it as ``<key>.csv`` (built only when
    clicked)."""
    if projector or wrap:
        plain_table(df, hide_index=kwargs.get("hide_index"))
    else:
        st.dataframe(df, key=key, column_config=number_formats(df), **kwargs)
    # no rerun on a download (on_click="ignore"): see charts.vectors_button
    st.download_button("CSV", data=lambda: views.table_csv(df, index=not kwargs.get("hide_index")),
                       file_name=f"{key}.csv", mime="text/csv", key=f"{key}_csv", type="tertiary",
                       icon=":material/download:", help="Download this table as a CSV file", on_click="ignore")


def layer_table(rows: dict, layer_names, projector: bool, key: str) -> None:
    """Rows of per-layer numbers ({row name: (N,)}, e.g. ``lab.views.against_baseline``) as a
    table with one column per layer (``show_table``)."""
    show_table(pd.DataFrame(rows, index=pd.Index(layer_names, name="layer")).T, projector=projector, key=key)
