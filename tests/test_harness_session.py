"""harness/served.py's protocol client picks a word as the browser does: pills send the
option in a string array, the select box a page shows past ``ui.frame.MAX_PILLS`` words
sends the option's label (Streamlit's selectbox serde)."""

import asyncio
import concurrent.futures

from streamlit.proto.Delta_pb2 import Delta

from harness.served import Session


def picked(kind: str, option: int):
    """The widget state ``Session.pick`` sends for option ``option`` of a ``kind`` element."""
    s = Session("http://127.0.0.1:1")
    delta = Delta()
    el = getattr(delta.new_element, kind)
    el.id, el.label = f"$$ID-{kind}", "Word in sentence A"
    words = ["We", "sat", "on", "the", "river", "bank"]
    if kind == "selectbox":
        el.options.extend(words)
    else:
        for w in words:
            el.options.add(content=w)
    delta.fragment_id = "f1"
    s._note(delta, [])
    sent = {}

    async def rerun(timeout, **client_state):
        sent.update(client_state)

    s._rerun = rerun
    # in a thread of its own: after the browser tests, Playwright's loop runs in this one
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, s.pick("Word in sentence A", option)).result()
    assert sent["fragment_id"] == "f1"
    (state,) = sent["widget_states"].widgets
    assert state.id == f"$$ID-{kind}"
    return state


def test_pills_send_the_option_in_a_string_array():
    state = picked("button_group", 4)
    assert state.WhichOneof("value") == "string_array_value" and list(state.string_array_value.data) == ["river"]


def test_a_select_box_sends_the_options_label():
    state = picked("selectbox", 5)
    assert state.WhichOneof("value") == "string_value" and state.string_value == "bank"
