"""One key per call in C: :func:`partition_key` and the per-scheme scalar functions, as fast as a builtin.

A Python function call costs several times what hashing a short key does, so the one-key entry points
(``partition_key``, ``murmur2``, ``murmur2_unsigned``, ``crc32``, ``fnv1a``, ``jump_hash``) are builtins of
the optional C accelerator (``_one_key.c``, :func:`one_key`) when it is compiled and allowed
(:func:`~kafka_placement.accelerators.native_allowed`, read at import). Each is bound to its pure-Python
definition, which stays the reference: the builtin answers the plain case (a bytes, bytearray or — where
the reference reads one — str key; an exact int partition count in range; a known scheme name) and hands
every other call to the reference unchanged, so validation, errors and their messages are the
reference's own. Without the accelerator the reference is the function; :func:`reference` gives it
either way. :func:`~kafka_placement.partitioning.native.numpy_only` sends every call to the references
for its block. Tested equal key for key in ``unit_tests/partitioning/test_one_key.py``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar, cast

from kafka_placement.accelerators import native_allowed

try:
    from kafka_placement.partitioning import _native
except ImportError:  # not compiled: the references are the functions
    _native = None  # type: ignore[assignment]

F = TypeVar("F", bound=Callable[..., Any])

_ON = _native is not None and hasattr(_native, "one_key") and native_allowed()


def one_key_available() -> bool:
    """True if the one-key functions of this process are the C builtins."""
    return _ON


_REFERENCES: dict[object, Callable[..., Any]] = {}


def one_key(definition: F) -> F:
    """Decorator: the C form of ``definition`` (same name and module; it pickles by reference as the
    function did), or ``definition`` itself without the accelerator. The definition keeps its name, so the
    messages Python writes for it (a missing argument) are unchanged."""
    if not _ON:
        return definition
    fast = _native.one_key(definition.__name__, definition, definition.__module__)
    _REFERENCES[fast] = definition
    return cast(F, fast)


def reference(function: F) -> F:
    """The pure-Python definition behind a one-key function (``function`` itself when it is one)."""
    return cast(F, _REFERENCES.get(function, function))


class SchemeNumbers(Protocol):
    """What the C ``partition_key`` is told of a scheme (:class:`~kafka_placement.partitioning.schemes.Scheme`
    has these; named here so this module, which the hash functions import, does not import the schemes)."""

    @property
    def hash_kind(self) -> str: ...
    @property
    def index_mask(self) -> int: ...
    @property
    def null_is_keyless(self) -> bool: ...
    @property
    def empty_is_keyless(self) -> bool: ...
    @property
    def jump(self) -> bool: ...
    @property
    def always_random(self) -> bool: ...


def register_schemes(schemes: Mapping[str, SchemeNumbers]) -> None:
    """Tell the C ``partition_key`` each scheme's numbers (the same the record router is given)."""
    if not _ON:
        return
    algo = {"murmur2": _native.MURMUR2, "crc32": _native.CRC32, "fnv1a": _native.FNV1A}
    _native.one_key_schemes(
        {
            name: (
                algo[s.hash_kind],
                s.index_mask,
                s.null_is_keyless,
                s.empty_is_keyless,
                s.jump,
                s.always_random,
            )
            for name, s in schemes.items()
        },
        random,
    )


def set_enabled(enabled: bool) -> bool:
    """Switch the C answers on or off (off: every call goes to its reference); returns the previous state."""
    if not _ON:
        return False
    previous = bool(_native.one_key_enabled())
    _native.one_key_enabled(1 if enabled else 0)
    return previous
