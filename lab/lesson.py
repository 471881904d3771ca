"""The 20-minute lesson: five demos, each a question and the view of the app that answers it.

The Lesson page draws these steps and opens their views; the README's lesson links are the
same links (``tests/test_readme_links.py`` compares them), so the two cannot drift apart.
A view is a page of the app and the query string that sets it up, as a shared link would.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

LOCAL_APP = "http://localhost:8501"  # where `make run` serves the app (the README's links)


@dataclass(frozen=True)
class Demo:
    """One step of the lesson.

    ``view`` names what the link opens (Markdown), ``question`` is asked before the view
    is shown (Markdown, without quotes), ``look_for`` is what answers it (Markdown);
    ``page`` is the page's URL path and ``params`` its query, in order; ``before`` is what
    to do before class for this step (Markdown; empty for most).
    """

    title: str
    minutes: int
    view: str
    question: str
    look_for: str
    page: str
    params: tuple[tuple[str, str], ...]
    before: str = ""

    @property
    def path(self) -> str:
        """The view relative to the app's root: ``page?query``."""
        return f"{self.page}?{urlencode(self.params)}" if self.params else self.page

    def url(self, app: str = LOCAL_APP) -> str:
        """The view's full address on the app served at ``app``."""
        return f"{app.rstrip('/')}/{self.path}"


_PROJECTOR = ("proj", "1")  # every demo is shown on a projector
# where the page has a quiz (BERT, ELMo, the board): its figure waits behind the demo's kind of
# question until Reveal, so the class commits to an answer before it sees one
_QUIZ = ("quiz", "1")

DEMOS = (
    Demo(
        title="One word, two meanings", minutes=4,
        view="BERT: *bank* of money vs *bank* of a river",
        question="Are the two 'bank's more alike at the input layer or at the top layer?",
        look_for="The per-layer chart starts near 1 (the same word piece) and falls as the layers mix in "
                 "context. The dashed line is what two random words score: a cosine means \"alike\" only "
                 "as far as it rises above it.",
        page="bert", params=(_QUIZ, _PROJECTOR),
    ),
    Demo(
        title="Characters don't know the context", minutes=4,
        view="ELMo: *bat* the club vs *bat* the animal",
        question="What is the cosine of the two 'bat's at `input (layer 0)`?",
        look_for="Exactly 1.000: the character layer sees only the letters; only the LSTM layers tell the "
                 "two apart. The sliders under *The scalar mix* show that `elmo` is a weighted sum of the three "
                 "layers.",
        page="elmo", params=(("a", "He swung the bat and hit the ball."),
                             ("b", "A bat flew out of the cave at dusk."), _QUIZ, _PROJECTOR),
    ),
    Demo(
        title="Padding must be masked", minutes=5,
        view="a Transformer block with its padding mask off, one weight step by step",
        question="The shorter sentence was filled up with `[PAD]`. Will its words attend to the padding?",
        look_for="With the mask off they give a share of their attention to `[PAD]` (the red notice says "
                 "how much). Step by step, a `[PAD]` key is selected: its score is a real bar and the "
                 "softmax gives it a real weight (the line under the bars says how much); switch "
                 "*Padding mask on* and the mask's −10⁹ (a cross) makes that weight exactly 0.",
        page="attention", params=(("att_mask", "0"), ("att_steps_block", "1"), ("att_sk_block", "8"), _QUIZ,
                                   _PROJECTOR),
    ),
    Demo(
        title="One sentence looks at the other", minutes=3,
        view="BERT attention, the two sentences packed as a pair, A → B",
        question="When BERT reads 'bank' in A, which word of B gets its attention?",
        look_for="Click *bank* under *Query token*, then rows of the last chart to compare heads, or a "
                 "square of the model view (every layer and head) to open that head.",
        page="attention", params=(("att_mode", "pair"), ("att_filter", "ab"), _PROJECTOR),
    ),
    Demo(
        title="The room's own sentences", minutes=4,
        view="the class board",
        question="At which layer are the class's sentences sorted most like the senses they meant?",
        look_for="Create a board (the *bank* preset), put its code and QR code on the projector, and let the "
                 "class send sentences from their phones. Move the layer sliders: the dots sort themselves "
                 "by sense in the upper layers. The separation chart under the maps answers the question "
                 "for both models.",
        page="board", params=(_QUIZ, _PROJECTOR),
        before="Make the board on this laptop before class: open it, pick the preset *bank* and press *Create "
               "the board*. Keep the teacher link it shows (the only way back to moderation), and check from "
               "one phone that the join link opens.",
    ),
)
