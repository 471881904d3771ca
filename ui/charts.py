"""What leaves the app: every chart goes through ``show`` (one place for the Plotly
toolbar), and a run's vectors download through ``vectors_button``. Tables download as CSV
from their own toolbar (``ui.frame.show_table``).

The toolbar's camera button saves the figure as a PNG named after the figure's title at twice the screen resolution; Plotly draws that image in the
browser, so it works offline. The Plotly logo link is left out (it would leave the app).
"""

from __future__ import annotations

import re

import plotly.graph_objects as go
import streamlit as st

from lab.figures import plain_text


def file_name(text: str) -> str:
    """A safe file name from a figure's title: 'Cosine of A "bank"…' -> 'cosine-of-a-bank'."""
    slug = re.sub(r"[^\w]+", "-", text.casefold(), flags=re.ASCII).strip("-")
    return slug[:60].rstrip("-") or "figure"


def toolbar(name: str) -> dict:
    """Plotly's ``config`` for a chart called ``name``."""
    return {"displaylogo": False,
            "toImageButtonOptions": {"format": "png", "filename": file_name(name), "scale": 2}}


def title_of(fig: go.Figure) -> str:
    """The figure's title as text (its lines joined; the model line below it, in ``<sup>``,
    is left out)."""
    lines = (fig.layout.title.text or "").split("<br>")
    return plain_text(" ".join(line for line in lines if not line.startswith("<sup>")))


def show(fig: go.Figure, key: str, **kwargs):
    """``st.plotly_chart`` with the app's toolbar, the image named after the figure's title;
    ``kwargs`` as for ``st.plotly_chart`` (``on_select``, ``selection_mode``...)."""
    return st.plotly_chart(fig, key=key, config=toolbar(title_of(fig) or key), **kwargs)


def vectors_button(out, file_stem: str, key: str, label: str = "Download these vectors (.npz)") -> None:
    """A button that downloads ``out`` (``LayerVectors``) as ``.npz``: the contract of
    ``python -m lab export`` (``lab.vectors.to_arrays``), built only when clicked."""
    from lab.vectors import npz_bytes

    st.download_button(label, data=lambda: npz_bytes(out), file_name=f"{file_stem}.npz",
                       mime="application/octet-stream", key=key, icon=":material/download:",
                       help="tokens, layers (N, B, T, C), mask, layer_names, model (and attentions, "
                            "input_word_ids for BERT): load with numpy.load(..., allow_pickle=True).")
