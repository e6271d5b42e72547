"""An aiokafka client that goes back to its bootstrap servers when no broker it knows answers (KIP-899).

aiokafka (0.14) refreshes metadata from the brokers of its current metadata only
(``AIOKafkaClient._metadata_update``: each known broker in turn, then "Unable to update metadata from
[...]"), and never resolves ``bootstrap_servers`` again after start-up. A broker whose own metadata lags
(a loaded cluster fences and unfences brokers) can answer with a broker list of one; when that broker
goes down the client has nobody to ask, and its producer sends to leaders that moved long ago until the
broker comes back. Seen in a 30-minute soak: "Unable to update metadata from [5]" 2,300 times while
broker 5 was down, two aiokafka producers acknowledged nothing for 4–5.5 minutes (docs/reliability.md).

Java's clients rebootstrap ([KIP-899](https://cwiki.apache.org/confluence/display/KAFKA/KIP-899%3A+Allow+
producer+and+consumer+clients+to+rebootstrap), ``metadata.recovery.strategy=rebootstrap``, the default
since Kafka 4.0): when they cannot reach any broker they know, they start again from
``bootstrap.servers``. :func:`mend_rebootstrap` does the same for one client: a metadata update that no
known broker answered runs aiokafka's own ``bootstrap()`` (the same connection settings, TLS, SASL) and
then the update again, on the brokers the bootstrap server named.

aiokafka has no public hook here; the one private name is :data:`_UPDATE`, checked against the installed
release by ``unit_tests/clients/test_aiokafka_rebootstrap.py``.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from aiokafka.client import AIOKafkaClient
from aiokafka.errors import KafkaError

__all__ = ["Rebootstraps", "mend_rebootstrap"]

log = logging.getLogger(__name__)

#: ``AIOKafkaClient``'s one metadata update (private): asks each known broker, returns whether one answered.
_UPDATE = "_metadata_update"

if not inspect.iscoroutinefunction(getattr(AIOKafkaClient, _UPDATE, None)):  # pragma: no cover
    raise ImportError(f"this aiokafka has no coroutine AIOKafkaClient.{_UPDATE}; kafka_placement needs 0.1x")


@dataclass
class Rebootstraps:
    """What the mend did on one client: each rebootstrap, as ``answered`` / ``failed: <error>``."""

    outcomes: list[str] = field(default_factory=list)


def mend_rebootstrap(client: Any) -> Rebootstraps:
    """Mend ``client`` (an ``aiokafka.AIOKafkaClient``; a producer's or consumer's ``client``) as the
    module docstring says; idempotent. Returns the record of its rebootstraps."""
    done = getattr(client, "_kafka_placement_rebootstraps", None)
    if isinstance(done, Rebootstraps):
        return done
    record = Rebootstraps()
    update: Callable[[Any, Any], Coroutine[Any, Any, bool]] = getattr(client, _UPDATE)

    async def metadata_update(cluster_metadata: Any, topics: Any) -> bool:
        if await update(cluster_metadata, topics):
            return True
        try:  # no broker of the metadata answered: start again from bootstrap_servers
            await client.bootstrap()
        except (KafkaError, OSError) as exc:
            record.outcomes.append(f"failed: {type(exc).__name__}: {exc}")
            return False
        record.outcomes.append("answered")
        log.warning("no known broker answered a metadata request: rebootstrapped from bootstrap_servers")
        return await update(cluster_metadata, topics)

    setattr(client, _UPDATE, metadata_update)
    client._kafka_placement_rebootstraps = record
    return record
