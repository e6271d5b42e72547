"""Free-port selection for concurrent clusters."""

from __future__ import annotations

import socket

import pytest

from kafka_placement.testing.ports import free_ports, port_is_free


def test_free_ports_are_distinct_and_bindable() -> None:
    ports = free_ports(7)
    assert len(set(ports)) == 7
    for p in ports:
        assert 1 <= p <= 65535
        assert port_is_free(p)


def test_port_in_use_is_not_free() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        assert not port_is_free(s.getsockname()[1])


def test_two_calls_while_first_ports_are_held_do_not_overlap() -> None:
    first = free_ports(7)
    held = []
    try:
        for p in first:  # a cluster binds its ports...
            s = socket.socket()
            s.bind(("127.0.0.1", p))
            s.listen()
            held.append(s)
        second = free_ports(7)  # ...so a concurrent cluster gets different ones
        assert not set(first) & set(second)
    finally:
        for s in held:
            s.close()


@pytest.mark.parametrize("bad", [0, -1, 1001])
def test_count_range(bad: int) -> None:
    with pytest.raises(ValueError, match=rf"count {bad} out of range \[1, 1000\]"):
        free_ports(bad)
