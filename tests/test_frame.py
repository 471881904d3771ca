"""``ui.frame``'s pure helpers."""

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Widget

from tests.conftest import ROOT
from tests.specs import grid_formats
from ui.frame import decimals


def test_decimals_are_those_the_page_rounded_to():
    assert decimals([np.array([0.167, 0.5, 1.0])]) == 3  # a depth rounded to 3 is not 0.1670
    assert decimals([np.array([41.222712, 44.401311])]) == 6
    assert decimals([np.array([0.167]), np.array([0.9503])]) == 4  # one table, one rounding: the most of any column
    assert decimals([np.array([0.9503, 0.12], np.float32)]) == 4  # float32 rounding is not a seventh digit
    assert decimals([np.array([45.1388], np.float32)]) == 4
    assert decimals([np.array([np.nan, 2.0])]) == 0  # gaps are not numbers
    assert decimals([np.array([1 / 3])]) == 4  # unrounded: four, as st.table would print
    assert decimals([np.array([1 / 3]), np.array([0.1234567])]) == 4
    assert decimals([]) == 0


def _grid_page():
    import pandas as pd

    from ui.frame import show_table

    show_table(pd.DataFrame({"layer": ["embeddings", "layer 1", "layer 2"], "cosine": [0.9629, 0.798, 1.0],
                             "pieces": [1, 2, 3]}), key="grid", projector=False, hide_index=True)


def test_a_grid_prints_its_numbers_with_the_decimals_the_page_rounded_to():
    # the grid would print each number as short as it goes: 0.798 under 0.9629, 1 for 1.0000
    at = AppTest.from_function(_grid_page).run()
    assert grid_formats(at.dataframe[0]) == {"cosine": "%.4f"}  # whole numbers stay as they are


def _explained_page():
    import streamlit as st

    from ui.frame import explain

    projector = st.session_state["projector"]
    explain("A long explanation.", projector)
    explain("A long notice.", projector, st.info)


@pytest.mark.parametrize("projector", [False, True])
def test_a_long_explanation_folds_into_explain_in_projector_mode(projector):
    at = AppTest.from_function(_explained_page)
    at.session_state["projector"] = projector
    at.run()
    assert [m.value for m in at.markdown] == ["A long explanation."]
    assert [i.value for i in at.info] == ["A long notice."]
    folded = [e for e in at.expander if e.label == "Explain"]
    assert len(folded) == (2 if projector else 0)  # one expander each, closed at first
    if projector:
        assert [m.value for m in folded[0].markdown] == ["A long explanation."]
        assert [i.value for i in folded[1].info] == ["A long notice."]
        assert not any(e.proto.expanded for e in folded)


def test_the_classroom_switches_come_first_in_the_sidebar():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()  # the home page
    assert not at.exception
    widgets = [e for e in at.sidebar if isinstance(e, Widget)]
    assert [w.label for w in widgets[:2]] == ["Projector mode", "Quiz mode"]
    assert [w.type for w in widgets[:2]] == ["toggle", "toggle"]
    assert widgets[2].label == "Sentence A"
