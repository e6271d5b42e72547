"""What a differential check returns and how results are kept: outcomes, mismatches, per-algorithm
results, and the adapters that import our code lazily and compare it with Java's result or exception."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafka_placement.conformance.bridge import JavaError, JavaReference
from kafka_placement.errors import KafkaPlacementError

#: Kept per algorithm in a result; the count of mismatches is always exact.
MAX_KEPT_MISMATCHES = 5


class ReferenceAnomaly(str):
    """A check outcome where Java's own result broke an invariant but ours did not: not counted as
    a mismatch of ours, counted and reported separately."""


class Agreement(str):
    """A passing outcome of a quality check, with how ours compares (``equal to Java`` or
    ``better than Java: ...``): counted per label in the result, not a mismatch."""


class OursUnavailable(Exception):
    """Our implementation of an algorithm cannot be imported (not written yet, or broken)."""


@dataclass(frozen=True)
class Mismatch:
    algorithm: str
    index: int
    scenario: Any
    detail: str

    def __str__(self) -> str:
        return f"{self.algorithm} #{self.index}: {self.detail}\n    scenario: {self.scenario!r}"


@dataclass
class AlgorithmResult:
    algorithm: str
    scenarios: int = 0
    mismatches: int = 0
    examples: list[Mismatch] = field(default_factory=list)
    seconds: float = 0.0
    unavailable: str | None = None
    reference_anomalies: int = 0
    anomaly_examples: list[Mismatch] = field(default_factory=list)
    #: mismatch count per kind (see :func:`mismatch_kind`)
    kinds: dict[str, int] = field(default_factory=dict)
    #: passing outcomes of quality checks per label (see :class:`Agreement`)
    agreements: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.unavailable is None and self.mismatches == 0

    def line(self) -> str:
        text = f"{self.algorithm}: scenarios={self.scenarios} mismatches={self.mismatches}"
        if self.unavailable:
            text += f" (ours unavailable: {self.unavailable})"
        return text


Check = Callable[[JavaReference, random.Random], "tuple[Any, str | None]"]  # detail may be a ReferenceAnomaly


# ---- adapters to our code (imported lazily: a missing module is reported, not fatal) --------------
def _ours(module: str, name: str) -> Any:
    import importlib

    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise OursUnavailable(f"{module}.{name}: {exc}") from exc


def _exception_kind(name: str) -> str:
    for suffix in ("Exception", "Error"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _compare_outcome(java: Any, ours_call: Callable[[], Any]) -> str | None:
    """Run ours; compare with Java's result or exception (class meaning and message)."""
    try:
        ours = ours_call()
    except KafkaPlacementError as exc:
        if not isinstance(java, JavaError):
            return f"ours raised {type(exc).__name__}: {exc}; Java returned {java!r}"
        if (
            _exception_kind(type(exc).__name__) != _exception_kind(java.class_name)
            or str(exc) != java.message
        ):
            return (
                f"exception differs: Java {java.class_name}: {java.message!r}; "
                f"ours {type(exc).__name__}: {str(exc)!r}"
            )
        return None
    except Exception as exc:  # an untyped crash is always a mismatch
        return f"ours crashed with {type(exc).__name__}: {exc}; Java gave {java!r}"
    if isinstance(java, JavaError):
        return f"Java threw {java.class_name}: {java.message!r}; ours returned {ours!r}"
    if ours != java:
        return f"result differs: Java {java!r}; ours {ours!r}"
    return None


_BALANCE = re.compile(r"balance score Java (\d+), ours (\d+)")


def mismatch_kind(detail: str) -> str:
    """A short class of a mismatch, for the per-algorithm breakdown."""
    if "crashed" in detail:
        return "ours crashed"
    if "invalid" in detail or ("while" in detail and "still owns" in detail):
        return "ours invalid"
    if "less balanced" in detail:
        return "less balanced"
    if "unassigned" in detail:
        return "leaves more unassigned"
    if "moves more" in detail:
        match = _BALANCE.search(detail)
        if match and int(match[2]) < int(match[1]):
            return "moves more for a strictly better balance"
        return "moves more"
    if "exception" in detail or "threw" in detail or "raised" in detail:
        return "exception differs"
    return "result differs"
