"""Whether every broker already lists a new topic.

CreateTopics only says the controller accepted a topic; each broker applies it from the metadata log on
its own, so one broker can describe it while another does not list it yet — and the next client may ask
that one.
"""

from __future__ import annotations

import time
from typing import Any


def wait_for_every_broker(admin: Any, name: str, partitions: int, *, deadline: float) -> None:
    """Block until every broker's own metadata shows ``name`` with ``partitions`` led partitions.

    A broker that does not answer (one that is stopped) is not waited for; ``TimeoutError`` after
    ``deadline`` (``time.monotonic()``). kafka-python's admin has no public way to ask one broker, so this
    uses its connection manager (kafka-python 3.x); where that is not there the check is skipped.
    """
    from kafka.errors import KafkaError

    not_answering = (KafkaError, OSError, TimeoutError)
    manager = getattr(admin, "_manager", None)
    if manager is None or not hasattr(manager, "send") or not hasattr(manager, "run"):
        return
    from kafka.protocol.metadata import MetadataRequest

    request = MetadataRequest(
        topics=[MetadataRequest.MetadataRequestTopic(name=name)], allow_auto_topic_creation=False
    )

    async def ask(node_id: int) -> Any:
        return await manager.send(request, node_id=node_id)

    def knows(node_id: int) -> bool:
        topics = manager.run(ask, node_id).to_dict()["topics"]
        known = [t for t in topics if t["name"] == name and not t["error_code"]]
        return bool(known) and all_led(known[0].get("partitions") or [], partitions)

    pending = {broker["broker_id"] for broker in admin.describe_cluster()["brokers"]}
    last: object = "no answer yet"
    while pending:
        for node_id in sorted(pending):
            try:
                if knows(node_id):
                    pending.discard(node_id)
            except not_answering as exc:  # a broker a test stopped serves no client: not waited for
                pending.discard(node_id)
                last = f"broker {node_id}: {type(exc).__name__}: {exc}"
        if not pending:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"topic {name!r} was created but brokers {sorted(pending)} did not list it with "
                f"{partitions} led partitions in time (last: {last})"
            )
        time.sleep(0.1)


def all_led(parts: list[dict[str, Any]], partitions: int) -> bool:
    """A topic's partitions, as a metadata answer lists them: ``partitions`` of them, each with a leader."""
    return len(parts) == partitions and all(p.get("leader_id", -1) >= 0 for p in parts)
