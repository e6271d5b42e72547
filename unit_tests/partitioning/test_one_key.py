"""The one-key functions in C (``onekey.py``, ``_one_key.c``) vs their pure-Python definitions and librdkafka.

Oracles, none of them the C code under test: confluent-kafka's ``murmur2``, ``consistent`` and ``fnv1a``
(librdkafka's partitioners, one key per call), :func:`zlib.crc32`, Python's ``random`` module for keyless
records, and the pure-Python definitions (:func:`~kafka_placement.partitioning.onekey.reference`) — the
functions as they were, checked against Java and kafka-python in the other test files. Errors: the same
type and the same message as the definition's, for every bad call tried.
"""

from __future__ import annotations

import inspect
import os
import pickle
import random
import subprocess
import sys
import zlib
from collections.abc import Callable
from typing import Any

import confluent_kafka
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from unit_tests.partitioning.test_schemes import ORACLE

from kafka_placement.partitioning import (
    SCHEMES,
    crc32,
    fnv1a,
    jump_hash,
    murmur2,
    murmur2_unsigned,
    native,
    partition_key,
)
from kafka_placement.partitioning.onekey import one_key_available, reference

needs_c = pytest.mark.skipif(not one_key_available(), reason="C accelerator not compiled or switched off")

FUNCTIONS: list[Callable[..., int]] = [partition_key, murmur2, murmur2_unsigned, crc32, fnv1a, jump_hash]
EDGE_COUNTS = [1, 2, 3, 7, 12, 255, 256, 257, 1000, 2**16, 2**31 - 2, 2**31 - 1]
LIBRDKAFKA: dict[str, Callable[[bytes, int], int]] = ORACLE  # scheme -> librdkafka's own partitioner


def _keys(count: int, seed: int) -> list[bytes | None]:
    rng = np.random.default_rng(seed)
    keys: list[bytes | None] = [None, b"", b"\x00", b"\xff" * 3, b"21", b"kafka"]
    keys += [rng.bytes(int(n)) for n in rng.integers(0, 200, size=count)]
    keys += [rng.bytes(16) for _ in range(count // 4)]
    return keys


def _outcome(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[str, Any]:
    """What a call did: its value, or the type and message of what it raised."""
    try:
        return "value", fn(*args, **kwargs)
    except Exception as exc:
        return type(exc).__name__, str(exc)


@needs_c
def test_each_function_is_the_c_builtin_bound_to_its_definition() -> None:
    for fn in FUNCTIONS:
        ref = reference(fn)
        assert type(fn).__name__ == "builtin_function_or_method" and inspect.isfunction(ref)
        assert (fn.__name__, fn.__module__) == (ref.__name__, ref.__module__)
        assert pickle.loads(pickle.dumps(fn)) is fn  # by reference, as the function pickled
        c_params = inspect.signature(fn).parameters.values()
        py_params = inspect.signature(ref).parameters.values()
        assert [(p.name, p.kind, p.default) for p in c_params] == [
            (p.name, p.kind, p.default) for p in py_params
        ]


def test_every_scheme_equals_the_definition_and_librdkafka_over_random_keys() -> None:
    ref = reference(partition_key)
    rng = random.Random(47)
    for key in _keys(2500, 1):
        n = rng.choice(EDGE_COUNTS) if rng.random() < 0.5 else rng.randrange(1, 2**31)
        for name, scheme in SCHEMES.items():
            if scheme.is_keyless(key):
                continue  # random: below
            got = partition_key(key, n, name)
            assert got == ref(key, n, name), (key, n, name)
            if name in LIBRDKAFKA:  # librdkafka hashes a NULL key as an empty one
                assert got == LIBRDKAFKA[name](b"" if key is None else key, n), (key, n, name)
        assert partition_key(key, n) == ref(key, n)  # the default scheme


@pytest.mark.parametrize("n", EDGE_COUNTS)
def test_partition_counts_at_the_edges(n: int) -> None:
    for key in _keys(300, n % 1000):
        k = b"" if key is None else key
        assert partition_key(key, n) == confluent_kafka.murmur2(k, n)
        assert partition_key(k, n, "consistent") == confluent_kafka.consistent(k, n)
        assert partition_key(k, n, "fnv1a") == confluent_kafka.fnv1a(k, n)
        assert partition_key(k, n, "jump") == reference(partition_key)(k, n, "jump")


def test_hash_functions_equal_their_definitions_and_librdkafka() -> None:
    for key in _keys(3000, 2):
        k = b"" if key is None else key
        for fn in (murmur2, murmur2_unsigned, crc32, fnv1a):
            assert fn(k) == reference(fn)(k), (fn.__name__, k)
        assert murmur2_unsigned(k) == murmur2(k) & 0xFFFFFFFF and -(2**31) <= murmur2(k) < 2**31
        assert crc32(k) == zlib.crc32(k)
        assert (murmur2(k) & 0x7FFFFFFF) % 1000 == confluent_kafka.murmur2(k, 1000)
        assert fnv1a(k) % 1000 == confluent_kafka.fnv1a(k, 1000)


@given(st.integers(-(2**70), 2**70), st.sampled_from(EDGE_COUNTS) | st.integers(1, 2**31 - 1))
def test_jump_hash_equals_its_definition(key: int, n: int) -> None:
    assert jump_hash(key, n) == reference(jump_hash)(key, n)


@given(
    st.one_of(st.none(), st.binary(max_size=80), st.text(max_size=20)),
    st.sampled_from(EDGE_COUNTS) | st.integers(1, 2**31 - 1),
    st.sampled_from([s for s in SCHEMES if not SCHEMES[s].always_random]),
)
def test_any_key_form_any_scheme(key: bytes | str | None, n: int, name: str) -> None:
    if SCHEMES[name].is_keyless(key.encode() if isinstance(key, str) else key):
        return
    assert partition_key(key, n, name) == reference(partition_key)(key, n, name)
    assert partition_key(key=key, num_partitions=n, scheme=name) == reference(partition_key)(key, n, name)


KEY_FORMS: list[object] = [
    "user-42",
    "ключ ✓",
    "lone \udc80 surrogate",  # not strict UTF-8: the definition encodes it (surrogatepass)
    "",
    bytearray(b"user-42"),
    bytearray(),
    memoryview(b"user-42"),
    memoryview(np.arange(6, dtype=np.uint32).reshape(2, 3)),
    memoryview(np.arange(12, dtype=np.uint8).reshape(3, 4))[::2],  # not contiguous
    type("BytesKid", (bytes,), {})(b"user-42"),
    None,
    17,
    1.5,
    [1, 2, 3],
    object(),
]


@pytest.mark.parametrize("key", KEY_FORMS, ids=lambda k: type(k).__name__)
def test_every_key_form_answers_or_fails_as_the_definition_does(key: object) -> None:
    for fn in (murmur2, murmur2_unsigned, crc32, fnv1a):
        assert _outcome(fn, key) == _outcome(reference(fn), key), fn.__name__
    raw = key.encode("utf-8", "surrogatepass") if isinstance(key, str) else key
    for name, scheme in SCHEMES.items():
        if (
            scheme.always_random
            or key is None
            or (isinstance(raw, bytes | bytearray) and scheme.is_keyless(bytes(raw)))
        ):
            continue  # keyless: random, tested below
        assert _outcome(partition_key, key, 12, name) == _outcome(reference(partition_key), key, 12, name), (
            name
        )


class _Count(int):
    pass


class _Name(str):
    pass


BAD_CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((b"k", 0), {}),
    ((b"k", -1), {}),
    ((b"k", 2**31), {}),
    ((b"k", 2**100), {}),
    ((b"k", True), {}),
    ((b"k", 3.0), {}),
    ((b"k", "3"), {}),
    ((b"k", None), {}),
    ((b"k", np.int64(3)), {}),
    ((b"k", 3, "nope"), {}),
    ((b"k", 3, None), {}),
    ((b"k", 3, 5), {}),
    ((b"k", 3, "Murmur2"), {}),
    ((17, 3, "random"), {}),  # the key is checked before the scheme says keyless
    ((17, 0, "nope"), {}),  # the partition count first, then the scheme, then the key
    ((17, 3, "nope"), {}),
    ((), {}),
    ((b"k",), {}),
    ((b"k", 3, "murmur2", None), {}),
    ((b"k", 3), {"scheme": "jump", "rng": None, "other": 1}),
    ((b"k", 3), {"num_partitions": 3}),
    ((b"k",), {"key": b"k", "num_partitions": 3}),
]


@pytest.mark.parametrize(("args", "kwargs"), BAD_CALLS)
def test_bad_calls_raise_exactly_what_the_definition_raises(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    expected = _outcome(reference(partition_key), *args, **kwargs)
    assert expected[0] != "value"
    assert _outcome(partition_key, *args, **kwargs) == expected


def test_unusual_but_valid_arguments() -> None:
    ref = reference(partition_key)
    for name in ("murmur2", "consistent", "fnv1a_random", "jump"):
        built = "".join(list(name))  # equal, not the interned object
        for args in (
            (b"k", 12, built),
            (b"k", _Count(12), name),
            (b"k", 12, _Name(name)),
            (b"k", 12, SCHEMES[name]),
        ):
            assert partition_key(*args) == ref(*args) == ref(b"k", 12, name)
    assert partition_key(num_partitions=12, key=b"k", scheme="jump", rng=None) == ref(b"k", 12, "jump")
    for fn in (murmur2, murmur2_unsigned, crc32, fnv1a):
        assert fn(data=b"k") == reference(fn)(b"k")  # keyword calls go to the definition
    for bad in ((), (b"a", b"b"), (None,)):
        assert _outcome(murmur2, *bad) == _outcome(reference(murmur2), *bad)
    for args in ((1.0, 3), (True, 3), (5, 0), (5, True), (5, 2**31), ("5", 3), (5,)):
        assert _outcome(jump_hash, *args) == _outcome(reference(jump_hash), *args)
    assert jump_hash(key=5, num_buckets=3) == reference(jump_hash)(5, 3)


KEYLESS = [
    (None, "murmur2_random"),
    (None, "fnv1a_random"),
    (None, "consistent_random"),
    (b"", "consistent_random"),
    (None, "jump"),
    (b"k", "random"),
    (None, "random"),
    ("", "consistent_random"),
]


@pytest.mark.parametrize(("key", "name"), KEYLESS)
def test_keyless_records_draw_from_random_as_the_definition_does(key: bytes | None, name: str) -> None:
    for n in (1, 2, 12, 2**31 - 1):
        random.seed(n)
        expected = [random.randrange(n) for _ in range(20)]
        random.seed(n)
        assert [partition_key(key, n, name) for _ in range(20)] == expected
        assert partition_key(key, n, name, rng=random.Random(n)) == random.Random(n).randrange(n)
        random.seed(n)
        assert partition_key(key, n, name, rng=None) == expected[0]


def test_keyless_looks_up_random_randrange_at_each_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(random, "randrange", lambda n: n - 1)  # as the definition's (rng or random).randrange
    assert (
        partition_key(None, 5, "murmur2_random") == 4 == reference(partition_key)(None, 5, "murmur2_random")
    )


def test_numpy_only_sends_every_call_to_the_definitions(monkeypatch: pytest.MonkeyPatch) -> None:
    definitions = sys.modules["kafka_placement.partitioning.murmur2"]  # the package's `murmur2`: the function
    monkeypatch.setattr(definitions, "to_int32", lambda h: -1)  # only the definition of murmur2 calls it
    if one_key_available():
        assert murmur2(b"21") == -973932308  # Kafka's UtilsTest.testMurmur2, answered in C
    with native.numpy_only():
        assert murmur2(b"21") == -1
    assert murmur2(b"21") == (-973932308 if one_key_available() else -1)


def test_switched_off_by_the_environment_the_definitions_are_the_functions() -> None:
    code = (
        "from kafka_placement.partitioning import partition_key, murmur2, crc32, fnv1a, jump_hash;"
        "import inspect;"
        "print(all(inspect.isfunction(f) for f in (partition_key, murmur2, crc32, fnv1a, jump_hash)),"
        " partition_key(b'21', 12), murmur2(b'21'))"
    )
    env = dict(os.environ, KAFKA_PLACEMENT_NO_NATIVE="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", str(confluent_kafka.murmur2(b"21", 12)), "-973932308"]


def test_no_reference_leak_per_call() -> None:
    """100,000 fast calls leave the key's and the count's reference counts as they were."""
    key, n = b"some-key-bytes", 1000
    before = (sys.getrefcount(key), sys.getrefcount(n))
    for _ in range(100_000):
        partition_key(key, n, "jump")
        murmur2(key)
        jump_hash(12345, n)
    assert (sys.getrefcount(key), sys.getrefcount(n)) == before
