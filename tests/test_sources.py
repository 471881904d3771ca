"""``lab.sources.failure_sentence``: each common failure said in words, never by class name."""

import errno
import http.client
import io
import socket
import urllib.error

import pytest

from lab import sources

HANDLE = "https://tfhub.dev/google/elmo/3"
CLASS_NAMES = ("Error", "Exception", "gaierror", "Errno", "urlopen", "Traceback")


def http_error(code: int, reason: str) -> urllib.error.HTTPError:
    return urllib.error.HTTPError(HANDLE, code, reason, {}, io.BytesIO())


@pytest.mark.parametrize("source, exc, cause, advice", [
    (HANDLE, urllib.error.URLError(socket.gaierror(-2, "Name or service not known")),
     "this machine cannot reach the internet (name lookup failed).", "python -m lab fetch"),
    (HANDLE, urllib.error.URLError(ConnectionRefusedError(111, "Connection refused")),
     "the server refused the connection.", "python -m lab fetch"),
    (HANDLE, urllib.error.URLError(TimeoutError("timed out")), "no answer within 20 s.", "python -m lab fetch"),
    (HANDLE, TimeoutError("timed out"), "no answer within 20 s.", "python -m lab fetch"),
    (HANDLE, sources.GaveUp("the download took longer than 5 s"), "the download took longer than 5 s.",
     "python -m lab fetch"),
    (HANDLE, http_error(404, "Not Found"), "there is no model at that address (HTTP 404 Not Found).",
     "Check the handle"),
    (HANDLE, http_error(403, "Forbidden"), "the server refused access to it (HTTP 403 Forbidden).",
     "Check the handle"),
    (HANDLE, http_error(503, "Service Unavailable"), "the server answered HTTP 503 Service Unavailable.",
     "Try again later"),
    (HANDLE, urllib.error.URLError(OSError(errno.ENETUNREACH, "Network is unreachable")),
     "this machine has no route to the server (network unreachable).", "python -m lab fetch"),
    (HANDLE, http.client.RemoteDisconnected("Remote end closed connection without response"),
     "the connection broke off.", "Try again"),
    (HANDLE, ValueError("Trying to load a model of incompatible/unknown type. '/tmp/x' contains neither "
                        "'saved_model.pb' nor 'saved_model.pbtxt'."),
     "what it sent is not a SavedModel (no saved_model.pb in it).", "TF2 SavedModel"),
    ("/models/bert", ValueError("Trying to load a model of incompatible/unknown type. '/models/bert' contains "
                                "neither 'saved_model.pb' nor 'saved_model.pbtxt'."),
     "it is not a SavedModel folder (it holds no saved_model.pb).", "Give the folder that holds saved_model.pb"),
    ("/models/bert", OSError("/models/bert does not exist."), "that folder was not found.", "Check the path"),
    ("/models/bert", FileNotFoundError(errno.ENOENT, "No such file or directory"), "that folder was not found.",
     "Check the path"),
    ("/models/bert", KeyError("encoder_outputs"), "'encoder_outputs'.", ""),
])
def test_each_failure_is_a_sentence_saying_what_failed_and_what_to_do(source, exc, cause, advice):
    text = sources.failure_sentence(source, exc, seconds=20)
    verb = "download" if source.startswith("https") else "load"
    assert text.startswith(f"Could not {verb} the model from {source}: {cause}")
    assert advice in text
    assert not any(name in text for name in CLASS_NAMES), text
    assert "\n" not in text


def test_a_message_written_for_people_comes_back_as_it_is():
    message = "A TF Hub BERT encoder needs its preprocessor too: set LAB_BERT_PREPROCESS."
    assert sources.failure_sentence(HANDLE, sources.SourceError(message)) == message


def test_a_timeout_with_no_limit_known_and_a_local_one():
    assert "the server did not answer in time." in sources.failure_sentence(HANDLE, TimeoutError("timed out"))
    local = sources.failure_sentence("/models/bert", sources.GaveUp("no answer within 600 s"))
    assert local == ("Could not load the model from /models/bert: no answer within 600 s. "
                     "Pick the embedded model meanwhile.")


def test_a_missing_folder_and_one_that_is_no_savedmodel(tmp_path):
    with pytest.raises(sources.SourceError) as missing:
        sources.check_local_dir(str(tmp_path / "nowhere"))
    assert str(missing.value) == sources.failure_sentence(str(tmp_path / "nowhere"), FileNotFoundError())
    with pytest.raises(sources.SourceError, match="it is not a SavedModel folder"):
        sources.check_local_dir(str(tmp_path))


def test_a_loader_failure_becomes_the_sentence_and_keeps_its_cause():
    refused = urllib.error.URLError(ConnectionRefusedError(111, "Connection refused"))

    def load():
        raise refused

    with pytest.raises(sources.SourceError) as caught:
        sources.call_with_timeout(load, 5, HANDLE)
    assert str(caught.value) == sources.failure_sentence(HANDLE, refused)
    assert caught.value.__cause__ is refused  # the log shows the whole chain
