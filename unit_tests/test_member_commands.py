import io
import os

from kafka_placement.member_commands import watch_stdin


def test_close_sets_the_event_and_stops_reading() -> None:
    seen: list[str] = []
    closing = watch_stdin(seen.append, io.StringIO("recover\n\n  pause \nclose\nrecover\n"))
    assert closing.wait(5)
    assert seen == ["recover", "pause"]


def test_end_of_input_sets_the_event() -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(read_end) as stream:
        closing = watch_stdin(stream=stream)
        assert not closing.wait(0.2)  # nothing sent yet: still open
        os.close(write_end)
        assert closing.wait(5)
