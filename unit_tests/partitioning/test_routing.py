"""The C record router: keyed records placed exactly as the schemes' pure-Python index (computed with
the C accelerator off), keyless records exactly as the sticky strategy under a lease, everything else
handed to the slow path untouched."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_placement.partitioning import native
from kafka_placement.partitioning.routing import grant_lease, record_router, routable, set_route, take_lease
from kafka_placement.partitioning.schemes import SCHEMES, get_scheme
from kafka_placement.partitioning.sticky import UniformSticky
from kafka_placement.partitioning.topicview import TopicView

pytestmark = pytest.mark.skipif(native.native_module() is None, reason="the C accelerator is not built")

ROUTED = [name for name, scheme in SCHEMES.items() if routable(scheme)]
FOREVER = time.monotonic() + 3600


class Recorder:
    def __init__(self) -> None:
        self.sent: list[tuple[Any, ...]] = []
        self.slow: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def sink(self, *args: Any) -> str:
        self.sent.append(args)
        return "sent"

    def slow_path(self, *args: Any, **kwargs: Any) -> str:
        self.slow.append((args, kwargs))
        return "slow"


def router() -> tuple[Any, Recorder]:
    rec = Recorder()
    made = record_router(rec.sink, rec.slow_path)
    assert made is not None
    return made, rec


def python_partition(scheme_name: str, partitions: tuple[int, ...], key: bytes) -> int:
    with native.numpy_only():  # the pure-Python hashes: murmur2.py, zlib's crc32, fnv1a, jump.py
        return partitions[get_scheme(scheme_name).keyed_index(key, len(partitions))]


@settings(max_examples=150, deadline=None)
@given(
    scheme_name=st.sampled_from(ROUTED),
    ids=st.lists(st.integers(0, 5000), min_size=1, max_size=40, unique=True),
    keys=st.lists(
        st.one_of(st.binary(min_size=1, max_size=64), st.text(min_size=1, max_size=20)), max_size=30
    ),
)
def test_keyed_records_go_where_the_python_index_puts_them(
    scheme_name: str, ids: list[int], keys: list[bytes | str]
) -> None:
    r, rec = router()
    partitions = tuple(sorted(ids))
    set_route(r, "t", get_scheme(scheme_name), partitions, FOREVER)
    for key in keys:
        assert r("t", b"v", key) == "sent"
    raw = [k.encode() if isinstance(k, str) else k for k in keys]
    assert [s[3] for s in rec.sent] == [python_partition(scheme_name, partitions, k) for k in raw]
    assert [s[2] for s in rec.sent] == keys  # the key goes on as given (confluent encodes a str itself)
    assert rec.slow == [] and r.fast == len(keys)


def test_none_and_empty_keys_follow_the_scheme() -> None:
    parts = tuple(range(7))
    for name in ("murmur2", "consistent", "fnv1a"):  # NULL hashed like b""
        r, rec = router()
        set_route(r, "t", get_scheme(name), parts, FOREVER)
        r("t", b"v", None)
        r("t", b"v", b"")
        assert [s[3] for s in rec.sent] == [python_partition(name, parts, b"")] * 2, name
    r, rec = router()
    set_route(r, "t", get_scheme("consistent_random"), parts, FOREVER)
    assert r("t", b"v", b"") == "slow" and r("t", b"v", None) == "slow"  # keyless, and no lease
    r, rec = router()
    set_route(r, "t", get_scheme("murmur2_random"), parts, FOREVER)
    assert r("t", b"v", None) == "slow" and r("t", b"v") == "slow"
    assert r("t", b"v", b"") == "sent"  # Java hashes an empty key


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        (("t", b"v", b"k", 3), {}),  # explicit partition
        (("t", b"v", b"k"), {"on_delivery": print}),
        (("t", b"v", b"k"), {"headers": [("h", b"1")]}),
        (("t", b"v", b"k"), {"timestamp": 5}),
        (("t", b"v", bytearray(b"k")), {}),  # only exact bytes/str are read in C
        (("t", b"v", 7), {}),
        (("other", b"v", b"k"), {}),  # no route
        ((b"t", b"v", b"k"), {}),
        ((), {"topic": "t", "value": b"v", "key": b"k"}),
        (("t",), {"key": b"k", "value": b"v", "partition": 1}),
    ],
)
def test_everything_else_reaches_the_slow_path_unchanged(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    r, rec = router()
    set_route(r, "t", get_scheme("murmur2_random"), (0, 1, 2), FOREVER)
    assert r(*args, **kwargs) == "slow"
    assert rec.slow == [(args, kwargs)] and rec.sent == [] and r.slow_calls == 1


def test_keywords_value_and_key_are_read() -> None:
    r, rec = router()
    set_route(r, "t", get_scheme("murmur2_random"), (0, 1, 2), FOREVER)
    r("t", key=b"k", value=b"v")
    r("t", b"v", key=b"k")
    assert rec.sent == [("t", b"v", b"k", python_partition("murmur2_random", (0, 1, 2), b"k"))] * 2


def test_an_expired_or_dropped_route_asks_the_slow_path() -> None:
    r, _ = router()
    scheme = get_scheme("murmur2_random")
    set_route(r, "t", scheme, (0, 1), time.monotonic() - 1)  # the C clock reads at tick resolution
    assert r("t", b"v", b"k") == "slow"
    set_route(r, "t", scheme, (0, 1), FOREVER)
    assert r("t", b"v", b"k") == "sent"
    r.drop_route("t")
    assert r("t", b"v", b"k") == "slow" and not r.has_route("t")


def test_bad_routes_are_refused() -> None:
    r, _ = router()
    with pytest.raises(ValueError, match="1 to 2147483647 partitions"):
        r.set_route("t", 0, 0x7FFFFFFF, (), False, False, False, FOREVER)
    with pytest.raises(ValueError, match="algo must be"):
        r.set_route("t", 9, 0x7FFFFFFF, (0,), False, False, False, FOREVER)
    with pytest.raises(TypeError, match="partition ids must be ints"):
        r.set_route("t", 0, 0x7FFFFFFF, (0, "1"), False, False, False, FOREVER)
    with pytest.raises(ValueError, match="room >= 1"):
        r.set_lease("t", 0, 0)
    with pytest.raises(TypeError):
        record_router(None, print)  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    batch_size=st.integers(1, 400),
    records=st.lists(st.tuples(st.booleans(), st.integers(0, 120)), min_size=1, max_size=300),
)
def test_keyless_records_under_a_lease_go_where_the_sticky_strategy_puts_them(
    seed: int, batch_size: int, records: list[tuple[bool, int]]
) -> None:
    """A producer loop in miniature: the router first, the strategy (taking and granting leases as the
    confluent Producer does) on the slow path; compared with the strategy alone, record by record."""
    view = TopicView("t", tuple(range(6)), (0, 2, 3, 5), {})
    scheme = get_scheme("murmur2_random")
    sticky = UniformSticky(batch_size, rng=random.Random(seed))
    chosen: list[int] = []

    def slow(topic: str, value: Any = None, key: Any = None) -> None:
        if key is None:
            take_lease(r, topic, sticky)
            chosen.append(sticky.choose(view, len(value) if value is not None else 0))
            grant_lease(r, topic, sticky)
        else:
            chosen.append(view.partitions[scheme.keyed_index(key, view.num_partitions)])

    r = record_router(lambda topic, value, key, partition: chosen.append(partition), slow)
    assert r is not None
    set_route(r, "t", scheme, view.partitions, FOREVER)
    alone = UniformSticky(batch_size, rng=random.Random(seed))
    expected: list[int] = []
    for i, (keyless, size) in enumerate(records):
        value = b"x" * size
        if keyless:
            r("t", value, None)
            expected.append(alone.choose(view, size))
        else:
            key = str(i).encode()
            r("t", value, key)
            expected.append(view.partitions[scheme.keyed_index(key, view.num_partitions)])
    assert chosen == expected
    assert r.fast + r.slow_calls == len(records)


def test_a_lease_counts_str_values_by_length_and_is_taken_back_once() -> None:
    r, rec = router()
    set_route(r, "t", get_scheme("murmur2_random"), (0, 1, 2), FOREVER)
    r.set_lease("t", 2, 10)
    assert r("t", "abc", None) == "sent" and r("t", b"abcdef", None) == "sent"
    assert r("t", b"x", None) == "slow"  # 3 + 6 + 1 reaches the room: the strategy decides
    assert r("t", bytearray(b"x"), None) == "slow"
    assert [s[3] for s in rec.sent] == [2, 2]
    assert r.take_lease("t") == (2, 9)
    assert r.take_lease("t") is None
    assert r("t", b"", None) == "slow"


def test_lease_arithmetic_of_the_sticky_strategy() -> None:
    sticky = UniformSticky(100, rng=random.Random(1))
    view = TopicView.of_count("t", 4)
    assert sticky.lease("t") is None
    first = sticky.choose(view, 30)
    assert sticky.lease("t") == (first, 70)
    sticky.add_produced("t", first, 69)
    assert sticky.lease("t") == (first, 1)
    sticky.add_produced("t", (first + 1) % 4, 50)  # another partition: not this one's bytes
    assert sticky.lease("t") == (first, 1)
    sticky.choose(view, 1)  # reaches 100: switches
    assert sticky.lease("t") == (sticky.current("t"), 100)
