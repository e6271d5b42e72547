"""java.util.Random and Kafka's MockRandom, bit for bit.

Expected values were printed by OpenJDK 17 (``new java.util.Random(seed)`` and a ``Random`` subclass
overriding ``next(bits)`` exactly as Kafka's test ``MockRandom`` does), call by call in this order.
"""

from __future__ import annotations

import pytest

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.replicas.javarandom import JavaRandom, JavaRandomBase, MockRandom

# name -> (generator, expected) ; sequence: nextInt x2, nextInt(10) x6, nextInt(2^30+1) x6,
# nextInt(16), nextLong, nextBoolean, nextDouble (hex), nextFloat (hex), nextBytes(7), shuffle(0..9)
JAVA_VECTORS = {
    "J42": (
        lambda: JavaRandom(42),
        [-1170105035, 234785527],
        [8, 4, 0, 5, 5, 8],
        [196118093, 969067502, 791955276, 819572292, 592164476, 995688456],
        12,
        -4004755535478349341,
        True,
        "0x1.3735e2df7bbe8p-3",
        "0x1.c25aep-2",
        [-42, -39, -7, -65, 82, -40, 61],
        [3, 6, 2, 9, 7, 8, 5, 1, 4, 0],
    ),
    "J-7": (
        lambda: JavaRandom(-7),
        [1155869324, -423064701],
        [0, 7, 8, 7, 1, 6],
        [184135245, 425474944, 988357177, 370061409, 272470848, 234734917],
        5,
        2751347608029331444,
        True,
        "0x1.4ea5260201aacp-2",
        "0x1.10886p-2",
        [-37, 18, -38, 70, -17, -7, -98],
        [8, 6, 0, 2, 7, 4, 3, 5, 9, 1],
    ),
    "M17": (
        MockRandom,
        [-1553064625, -1379575778],
        [7, 7, 0, 0, 2, 2],
        [272681878, 781899194, 528858883, 779386366, 82848634, 626345427],
        14,
        442553574498903140,
        True,
        "0x1.b03d1ae084664p-2",
        "0x1.ab6e1cp-1",
        [-85, -12, 32, 32, 112, 51, -4],
        [6, 9, 2, 3, 0, 1, 4, 8, 5, 7],
    ),
    "M-3": (
        lambda: MockRandom(-3),
        [-1999735987, -1592932472],
        [8, 5, 6, 8, 5, 3],
        [579465056, 991215926, 504816679, 597411173, 358218837, 974918370],
        6,
        9195715652241807689,
        True,
        "0x1.690ff8316dac8p-3",
        "0x1.23646p-4",
        [108, 114, -67, -113, -71, 100, 72],
        [9, 8, 5, 3, 2, 4, 1, 0, 7, 6],
    ),
}


def _java_float_hex(value: float) -> str:
    # Java's Float.toHexString drops trailing zero nibbles of the 23-bit fraction (padded to 24 bits).
    text = value.hex()  # Python prints the double; a float's fraction fits in 6 nibbles
    mantissa, exponent = text.split("p")
    whole, frac = mantissa.split(".")
    return f"{whole}.{frac.rstrip('0') or '0'}p{exponent}"


@pytest.mark.parametrize("name", sorted(JAVA_VECTORS))
def test_sequence_matches_openjdk(name: str) -> None:
    factory, ints, b10, big, b16, long_, bool_, dbl, flt, raw, shuffled = JAVA_VECTORS[name]
    rng: JavaRandomBase = factory()  # type: ignore[operator]
    assert [rng.next_int(), rng.next_int()] == ints
    assert [rng.next_int(10) for _ in range(6)] == b10
    assert [rng.next_int(2**30 + 1) for _ in range(6)] == big
    assert rng.next_int(16) == b16
    assert rng.next_long() == long_
    assert rng.next_boolean() is bool_
    assert rng.next_double().hex() == dbl
    assert _java_float_hex(rng.next_float()) == flt
    assert [b - 256 if b > 127 else b for b in rng.next_bytes(7)] == raw
    items = list(range(10))
    rng.shuffle(items)
    assert items == shuffled


@pytest.mark.parametrize(
    ("factory", "expected", "after"),
    [
        (
            lambda: JavaRandom(42),
            [
                1562431130,
                117392763,
                1467211248,
                102948884,
                662969970,
                595021505,
                1519796918,
                1429255519,
                196118093,
                969067502,
                791955276,
                819572292,
            ],
            1184328952,
        ),
        (
            MockRandom,
            [
                1370951335,
                1457695759,
                324654877,
                437157150,
                451014632,
                1457134632,
                272681878,
                1579054877,
                781899194,
                528858883,
                779386366,
                82848634,
            ],
            -1182997361,
        ),
    ],
)
def test_next_int_rejection_loop_consumes_like_java(factory: object, expected: list[int], after: int) -> None:
    # bound 1.5 * 2^30 + 1 rejects a third of the draws: the count of next(31) calls must match Java's.
    rng: JavaRandomBase = factory()  # type: ignore[operator]
    assert [rng.next_int(1610612737) for _ in range(12)] == expected
    assert rng.next_int() == after


def test_mock_random_default_state_is_17() -> None:
    assert [MockRandom().next_int(100) for _ in range(1)] == [MockRandom(17).next_int(100)]


@pytest.mark.parametrize("bound", [0, -1, 2**31])
def test_bad_bound_names_value(bound: int) -> None:
    with pytest.raises(InvalidArgumentError, match=f"bound must be positive.*got {bound}"):
        JavaRandom(1).next_int(bound)


@pytest.mark.parametrize("seed", [2**63, -(2**63) - 1, 1.5, True])
def test_bad_seed(seed: object) -> None:
    with pytest.raises(InvalidArgumentError, match="seed must be a Java long"):
        JavaRandom(seed)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="seed must be a Java long"):
        MockRandom(seed)  # type: ignore[arg-type]


def test_bad_bits() -> None:
    with pytest.raises(InvalidArgumentError, match=r"bits must be an int in \[1, 32\], got 33"):
        JavaRandom(1).next(33)
