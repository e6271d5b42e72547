"""The migration rule of a failover group (``assignment/failover_migration.py``): a member's priority is
visible to the broker when its subscription's rack id carries ``#priority=<n>`` equal to its userData
priority; a group may convert only when every member's is."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.assignment.failover_migration import advertised_rack, group_convertible, visibility

priorities = st.none() | st.integers(-(2**31), 2**31 - 1)
racks = st.none() | st.text(alphabet=st.characters(blacklist_characters="#"), min_size=1, max_size=12)


def test_advertised_rack_is_the_consumer_protocol_client_rack_format() -> None:
    # the documented format of client.rack on the consumer protocol: "<rack>#priority=<n>"
    assert advertised_rack("rack1", 30, True) == "rack1#priority=30"
    assert advertised_rack(None, -5, True) == "#priority=-5"
    assert advertised_rack("rack1", 30, False) == "rack1"  # not migration-ready: the rack as before
    assert advertised_rack("rack1", None, True) == "rack1"  # no priority: nothing to advertise


def test_visibility_names_what_the_broker_would_misread() -> None:
    assert visibility("rack1#priority=30", 30).problem is None
    assert visibility(None, None).problem is None  # ranks last on both sides
    assert "carries no priority" in (visibility("rack1", 30).problem or "")
    assert "carries no priority" in (visibility(None, 30).problem or "")
    assert "priority 'ten' is not an integer" in (visibility("#priority=ten", 30).problem or "")
    assert "says priority 31 but its userData says 30" in (visibility("#priority=31", 30).problem or "")
    assert "carries no priority" in (visibility(b"#priority=30", 30).problem or "")  # not a string


@given(st.lists(st.tuples(racks, priorities, st.booleans()), max_size=8))
def test_a_group_converts_only_when_every_member_is_ready(
    members: list[tuple[str | None, int | None, bool]],
) -> None:
    subscriptions = [
        (f"m{i}", advertised_rack(rack, priority, ready), priority)
        for i, (rack, priority, ready) in enumerate(members)
    ]
    blockers = group_convertible(subscriptions)
    # independent statement of the rule: a member blocks iff it has a priority and is not ready
    expected = {
        f"m{i}" for i, (_, priority, ready) in enumerate(members) if priority is not None and not ready
    }
    assert set(blockers) == expected


@given(st.text(max_size=40), priorities)
def test_no_rack_id_a_member_sends_raises(rack_id: str, priority: int | None) -> None:
    result = visibility(rack_id, priority)
    assert (result.problem is None) == (result.visible == priority)
