"""A producer's per-record hot path in C: keyed records hashed, keyless ones under a sticky lease.

A client that takes ``partition=`` from us (confluent-kafka has no partitioner callback) pays for every
Python call between the user's ``produce(topic, value, key)`` and the client's own C ``produce``. The
C accelerator's :class:`Router` (``_router.c``) removes them for the common case: a keyed record of a
topic whose *route* — the scheme's hash, mask or jump, and the topic's partition ids — is known is
hashed and handed to the client's ``produce`` with its partition at once. Keyless records go to the
sticky partition under a *lease* (:class:`~kafka_placement.partitioning.sticky.UniformSticky` grants the
bytes its partition may still take before the switch; the bytes sent are counted back before the
strategy decides again), so they land exactly where the strategy would put them. Every other call
(explicit partitions, callbacks, headers, a record that would end the sticky batch, a route that
expired) goes to the producer's Python path unchanged, which places the record with
:class:`~kafka_placement.partitioning.record.RecordPartitioner` and renews route and lease from fresh
metadata. Both give the same partition for every record (property-tested); without the C accelerator
there is no router and every record takes the Python path.

One difference in time, not in place: the Python path leaves a sticky partition the moment fresh
metadata says it has no leader; a lease is taken back when its route is renewed, within ``ROUTE_TTL_S``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from kafka_placement.partitioning import native
from kafka_placement.partitioning.schemes import Scheme
from kafka_placement.partitioning.sticky import UniformSticky

if TYPE_CHECKING:  # the C type (its stub: _native.pyi); absent without the C accelerator
    from kafka_placement.partitioning._native import Router as RecordRouter

#: How long a route is used before one record goes the Python way again (which re-reads the topic's
#: cached metadata, refreshed in the background): partition changes are picked up within this time.
ROUTE_TTL_S = 0.5


def record_router(sink: Callable[..., Any], slow: Callable[..., Any]) -> RecordRouter | None:
    """A router sending the records it can place to ``sink(topic, value, key, partition)`` and every other
    call to ``slow(*args, **kwargs)``; None when the C accelerator is not available or switched off."""
    module = native.native_module()
    if module is None:
        return None
    router: RecordRouter = module.Router(sink, slow)
    return router


def routable(scheme: Scheme) -> bool:
    """True if the router can place this scheme's keyed records (every scheme that hashes keys)."""
    return not scheme.always_random


def set_route(
    router: RecordRouter, topic: str, scheme: Scheme, partitions: Sequence[int], expires_at: float
) -> None:
    """Route ``topic``'s keyed records by ``scheme`` over ``partitions`` (all of the topic's partition ids,
    in id order, as the scheme indexes them) until ``time.monotonic()`` passes ``expires_at``."""
    if not routable(scheme) or not partitions:
        router.drop_route(topic)
        return
    router.set_route(
        topic,
        native.algo_code(scheme.hash_kind),
        scheme.index_mask,
        tuple(partitions),
        scheme.null_is_keyless,
        scheme.empty_is_keyless,
        scheme.jump,
        expires_at,
    )


def take_lease(router: RecordRouter, topic: str, sticky: UniformSticky) -> None:
    """End ``topic``'s keyless lease and count what the router sent under it into ``sticky``."""
    taken = router.take_lease(topic)
    if taken is not None:
        sticky.add_produced(topic, taken[0], taken[1])


def grant_lease(router: RecordRouter, topic: str, sticky: UniformSticky) -> None:
    """Let the router send ``topic``'s keyless records to ``sticky``'s current partition while they fit."""
    lease = sticky.lease(topic)
    if lease is not None:
        router.set_lease(topic, lease[0], lease[1])
