"""What every scenario generator shares: a seeded stream per scenario and names from all of Unicode.

The generators, one per differential check, live with their area: :mod:`.key_scenarios`,
:mod:`.group_scenarios`, :mod:`.placement_scenarios`. Every generator takes a :class:`random.Random`
and returns a plain frozen dataclass, so a scenario
is reproducible from ``(seed, index)`` alone (see :func:`scenario_rng`) and printable as a minimal
failing case. Sizes are kept small on purpose: edge cases (empty keys, one member, unequal
subscriptions, missing topic metadata, rackless brokers, fenced brokers, RF > brokers) are far more
likely in small scenarios than in big ones.
"""

from __future__ import annotations

import random


def scenario_rng(seed: int, algorithm: str, index: int) -> random.Random:
    """Independent stream per (seed, algorithm, index): any scenario can be replayed alone."""
    return random.Random(f"{seed}/{algorithm}/{index}")


#: Code points where Java's UTF-16 order and Python's code point order part ways, or that test
#: encoders: around the surrogate block, private use (BMP and astral), emoji, combining marks,
#: the BMP's last code points and the first and last astral ones. (Lone surrogates are not valid
#: Unicode strings and cannot cross to Java as such.)
_SPECIAL_CODE_POINTS: tuple[int, ...] = (
    0x41,
    0x61,
    0x7F,
    0xE9,
    0x0301,
    0x0308,
    0x20DD,
    0x4E2D,
    0xD7FF,
    0xE000,
    0xE001,
    0xF8FF,
    0xFB01,
    0xFE0F,
    0xFFFD,
    0xFFFF,
    0x10000,
    0x1D11E,
    0x1F600,
    0x1F9D1,
    0xF0000,
    0x10FFFD,
    0x10FFFF,
)


def _code_point(rng: random.Random) -> str:
    """One code point from all of Unicode (surrogates excluded), special ones over-weighted."""
    r = rng.random()
    if r < 0.5:
        return chr(rng.choice(_SPECIAL_CODE_POINTS))
    if r < 0.7:
        return chr(rng.randint(0xE000, 0xFFFF))  # private use and the BMP's top: above surrogates
    if r < 0.9:
        return chr(rng.randint(0x10000, 0x10FFFF))  # astral: a surrogate pair in Java
    cp = rng.randint(0x20, 0xD7FF)
    return chr(cp)


def unicode_name(rng: random.Random, max_length: int = 4) -> str:
    """A short non-empty string from all of Unicode (see :func:`_code_point`)."""
    return "".join(_code_point(rng) for _ in range(rng.randint(1, max_length)))
