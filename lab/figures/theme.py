"""The look every figure shares: colours (colour-blind-safe Okabe-Ito; each page's colour
meanings), type and line sizes of the two styles (``projector=True``: large type, thick
lines, high-contrast scales), and labels escaped so that a person's text is shown as typed."""

from __future__ import annotations

import html


# Okabe-Ito: distinguishable with the common colour-vision deficiencies.
OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")


OUTLINE = OKABE_ITO[1]  # the selection's outline (vermilion)


USE_MAP_SPAN = 0.5  # the least width of a use map's axes, in unit-vector distances


USES = "#8C8C8C"  # the corpus's uses of a word (use_map_chart): a neutral grey beside the selected uses' colours


# The ELMo vs BERT page's colours (and the report's), one meaning each in every chart there:
# a model's colour marks its lines and, in its use map and its row of the sense strip, your
# two uses of the word; the sense pairs and chance have colours of their own; sentence A and
# B are told apart by a letter beside the mark, never by a colour. Indices into OKABE_ITO.
MODEL_COLOURS = {"bert": 0, "elmo": 1}


PAIR_COLOURS = {"same sense": 2, "different sense": 3}  # the sense pairs of the sense strip


CHANCE_COLOUR = 7


# A use map's senses (use_map_chart, the class board's maps): the named senses', most frequent
# first, then "other sense"; the uses whose sense is not known keep USES. From Paul Tol's
# colour-blind-safe schemes and none of the models' Okabe-Ito colours. The first two, the
# senses of most boards, stay dark on a dim projector: indigo and ochre, 12.2:1 and 4.2:1
# against white (Tol's sand, 1.6:1, washed out), told apart in simulated protanopia,
# deuteranopia and tritanopia alike (CIELAB distance 120, 117 and 54).
SENSE_COLOURS = ("#332288", "#997700", "#882255", "#44AA99", "#CC6677")


SENSE_CHARS = 40  # the most characters of a sense's gloss in a use map's legend


def outline_width(projector: bool = False) -> float:
    """The selection outline's width in pixels: a line's width and one more."""
    return style(projector)["line"] + 1


def style(projector: bool) -> dict:
    """Sizes and colour scales for the normal and the projector look."""
    if projector:
        return {"font": 22, "title": 26, "tick": 20, "line": 6, "marker": 14, "cell_text": 18,
                "scale": "Cividis", "diverging": "PuOr", "attention": "Cividis", "height": 560,
                "title_chars": 70, "top": 96, "title_line": 46, "click_marker": 22, "colorbar": 24,
                "cell_text_min": 13, "strip_row": 120, "hover": 20}
    return {"font": 13, "title": 16, "tick": 12, "line": 2.5, "marker": 8, "cell_text": 11,
            "scale": "Viridis", "diverging": "RdBu", "attention": "Blues", "height": 420,
            "title_chars": 120, "top": 70, "title_line": 22, "click_marker": 16, "colorbar": 14,
            "cell_text_min": 8, "strip_row": 90, "hover": 12}


def label(text: str) -> str:
    """A person's text made safe for Plotly's HTML-like labels."""
    return html.escape(str(text), quote=False)


TICK_CHARS = 20


def tick_label(text: str) -> str:
    """A token as an axis label: cut to ``TICK_CHARS`` characters with an ellipsis, so one
    long word cannot take the chart's width (the hover shows it whole)."""
    text = str(text)
    return text if len(text) <= TICK_CHARS else text[: TICK_CHARS - 1] + "…"


# The charts' look, as plain layout values: what Streamlit's light chart theme made of
# Plotly's "plotly_white" template on this app's figures (Streamlit 1.67, read back from
# the drawn charts). The figures carry it themselves, with no template, and are shown with
# ``theme=None``: Streamlit's chart element hands Plotly a JSON copy of every new figure
# right after drawing it (its theme step), and a template, a themed title or a base64
# typed array in that copy makes ``Plotly.react`` draw the whole chart a second time.
FONT_FAMILY = '"Source Sans", sans-serif'


TEXT_COLOUR, HEADING_COLOUR, LEGEND_COLOUR = "#808495", "#2F2D2B", "#262730"


GRID_COLOUR, BORDER_COLOUR, BACKGROUND = "#e6eaf1", "#DCD8D4", "#FFFFFF"


COLOURWAY = ("#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A",
             "#19d3f3", "#FF6692", "#B6E880", "#FF97FF", "#FECB52")
