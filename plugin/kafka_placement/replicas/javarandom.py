"""Bit-exact ``java.util.Random`` and Kafka's test ``MockRandom``.

Kafka's placers draw from a ``java.util.Random``; reproducing a Java placement therefore needs the
same generator *and* the same derived methods (``nextInt(bound)`` with its rejection loop,
``Collections.shuffle``). Semantics follow the JDK documentation of ``java.util.Random`` (the 48-bit
linear congruential generator of Knuth, TAOCP 3.2.1) and Kafka's ``MockRandom`` (test utility:
a 64-bit LCG ``state = state * 2862933555777941757 + 3037000493`` whose ``next(bits)`` returns
the top ``bits`` bits, starting from state 17).
"""

from __future__ import annotations

from collections.abc import MutableSequence
from typing import TypeVar

__all__ = ["JavaRandom", "JavaRandomBase", "MockRandom", "to_int32", "to_int64"]

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.java import INT_MAX, to_int32

_MASK48 = (1 << 48) - 1
_MASK64 = (1 << 64) - 1
_MULTIPLIER = 0x5DEECE66D
_ADDEND = 0xB
_MOCK_MULTIPLIER = 2862933555777941757
_MOCK_ADDEND = 3037000493
_LONG_MIN = -(2**63)
_LONG_MAX = 2**63 - 1

T = TypeVar("T")


def to_int64(value: int) -> int:
    """Java ``(long)`` narrowing: keep the low 64 bits, two's complement."""
    value &= _MASK64
    return value - (1 << 64) if value & (1 << 63) else value


def _check_bits(bits: int) -> None:
    if isinstance(bits, bool) or not isinstance(bits, int) or not 1 <= bits <= 32:
        raise InvalidArgumentError(f"bits must be an int in [1, 32], got {bits!r}")


def _check_seed(seed: int) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int) or not _LONG_MIN <= seed <= _LONG_MAX:
        raise InvalidArgumentError(f"seed must be a Java long in [{_LONG_MIN}, {_LONG_MAX}], got {seed!r}")


class JavaRandomBase:
    """The derived methods of ``java.util.Random``, built on an abstract ``next(bits)``."""

    def next(self, bits: int) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def next_int(self, bound: int | None = None) -> int:
        """``nextInt()`` (no bound: ``next(32)``) or ``nextInt(bound)`` with Java's rejection loop."""
        if bound is None:
            return self.next(32)
        if isinstance(bound, bool) or not isinstance(bound, int):
            raise InvalidArgumentError(f"bound must be an int, got {bound!r}")
        if bound <= 0 or bound > INT_MAX:
            # Java: IllegalArgumentException("bound must be positive"); > 2^31-1 is not an int at all.
            raise InvalidArgumentError(f"bound must be positive (an int in [1, {INT_MAX}]), got {bound}")
        r = self.next(31)
        m = bound - 1
        if bound & m == 0:  # a power of two: take the high bits
            return (bound * r) >> 31
        u = r
        while True:
            r = u % bound
            # Java: `u - r + m < 0` in int arithmetic, i.e. the sum overflowed past 2^31 - 1.
            if to_int32(u - r + m) >= 0:
                return r
            u = self.next(31)

    def next_long(self) -> int:
        """``nextLong()``: ``((long) next(32) << 32) + next(32)`` in 64-bit arithmetic."""
        high = self.next(32)
        low = self.next(32)
        return to_int64((high << 32) + low)

    def next_boolean(self) -> bool:
        """``nextBoolean()``: ``next(1) != 0``."""
        return self.next(1) != 0

    def next_float(self) -> float:
        """``nextFloat()``: ``next(24) / 2^24`` (exact in a double)."""
        return self.next(24) / float(1 << 24)

    def next_double(self) -> float:
        """``nextDouble()``: ``((long) next(26) << 27) + next(27)) * 2^-53``."""
        high = self.next(26)
        low = self.next(27)
        return ((high << 27) + low) * (1.0 / (1 << 53))

    def next_bytes(self, size: int) -> bytes:
        """``nextBytes(new byte[size])``: ints from ``nextInt()``, low byte first."""
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise InvalidArgumentError(f"size must be an int >= 0, got {size!r}")
        out = bytearray()
        while len(out) < size:
            rnd = self.next_int() & 0xFFFFFFFF
            for _ in range(min(4, size - len(out))):
                out.append(rnd & 0xFF)
                rnd >>= 8
        return bytes(out)

    def shuffle(self, items: MutableSequence[T]) -> None:
        """``Collections.shuffle(list, this)`` for a random-access list: swap i-1 with nextInt(i)."""
        for i in range(len(items), 1, -1):
            j = self.next_int(i)
            items[i - 1], items[j] = items[j], items[i - 1]


class JavaRandom(JavaRandomBase):
    """``new java.util.Random(seed)``: the 48-bit LCG, bit for bit."""

    def __init__(self, seed: int) -> None:
        _check_seed(seed)
        self.set_seed(seed)

    def set_seed(self, seed: int) -> None:
        """``setSeed(seed)``: scramble with the multiplier."""
        self._seed = (seed ^ _MULTIPLIER) & _MASK48

    def next(self, bits: int) -> int:
        _check_bits(bits)
        self._seed = (self._seed * _MULTIPLIER + _ADDEND) & _MASK48
        return to_int32(self._seed >> (48 - bits))


class MockRandom(JavaRandomBase):
    """Kafka's test ``MockRandom`` (default state 17): deterministic, used by the placer's unit tests."""

    def __init__(self, seed: int = 17) -> None:
        _check_seed(seed)
        self._state = seed & _MASK64

    def next(self, bits: int) -> int:
        _check_bits(bits)
        self._state = (self._state * _MOCK_MULTIPLIER + _MOCK_ADDEND) & _MASK64
        return to_int32(self._state >> (64 - bits))
