"""Plotly figure builders: arrays in, ``go.Figure`` out. No Streamlit here; the only part
of the lab that imports Plotly.

Every figure names the model that produced it (a line under the title) and escapes
every text that came from a person (tokens are shown as text, never as HTML). Token axes
are numeric positions with tokens as tick labels, so a repeated token ("the" twice) keeps
its own row and column, and a clicked cell maps back to a position.

``projector=True`` is the classroom style: large type, thick lines, high-contrast,
colour-blind-safe colour scales.

One module per figure family (``heatmaps``, ``layers``, ``attention``, ``steps``, ``comparison``,
``board``, ``probes``), on the shared ``theme`` and ``layout``; every public name is available here,
as ``figures.heatmap``.
"""

from lab.figures.theme import (  # noqa: F401 - the package's public names
    BACKGROUND,
    BORDER_COLOUR,
    CHANCE_COLOUR,
    COLOURWAY,
    FONT_FAMILY,
    GRID_COLOUR,
    HEADING_COLOUR,
    LEGEND_COLOUR,
    MODEL_COLOURS,
    OKABE_ITO,
    OUTLINE,
    PAIR_COLOURS,
    SENSE_CHARS,
    SENSE_COLOURS,
    TEXT_COLOUR,
    TICK_CHARS,
    USES,
    USE_MAP_SPAN,
    label,
    outline_width,
    style,
    tick_label,
)
from lab.figures.layout import (  # noqa: F401 - the package's public names
    CHART_WIDTH,
    EXPORT_SCALE,
    EXPORT_WIDTH,
    MAX_HEIGHT,
    PLAIN_ARRAY_MAX,
    PLOT_WIDTH,
    TICK_ANGLES,
    TICK_GAP,
    TITLE_STANDOFF,
    WIDER_FONT,
    export_config,
    file_name,
    number_width,
    plain_text,
    text_width,
    title_of,
)
from lab.figures.heatmaps import (  # noqa: F401 - the package's public names
    CELL_PAD,
    attention_heatmap,
    cell_text_fit,
    heatmap,
    outline_box,
)
from lab.figures.layers import (  # noqa: F401 - the package's public names
    BASELINE_NAME,
    bar_by_layer,
    layer_curve,
)
from lab.figures.attention import (  # noqa: F401 - the package's public names
    attention_lines,
    model_view,
    model_view_box,
    model_view_grid,
    model_view_heads,
    model_view_layers,
    model_view_tile,
    model_view_tiling,
)
from lab.figures.steps import (  # noqa: F401 - the package's public names
    key_bars,
    power_of_ten,
    shape_note,
    stacked,
    vector_strip,
)
from lab.figures.comparison import (  # noqa: F401 - the package's public names
    DepthLine,
    depth_chart,
    pair_strip,
    sense_chart,
    use_map_chart,
    word_curves_chart,
)
from lab.figures.probes import (  # noqa: F401 - the package's public names
    board_probe_chart,
    guess_grid,
    probe_chart,
    probe_lines,
)
from lab.figures.board import (  # noqa: F401 - the package's public names
    NOT_SAID,
    SEPARATION_TITLE,
    board_map,
    hover_text,
    separation_chart,
)
