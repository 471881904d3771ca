"""``ui.frame``'s pure helpers."""

import numpy as np

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
