"""The proxied cluster's handle on its Toxiproxy proxies: one per broker, in front of its client listener.

``KafkaCluster(fault_proxy=True)`` starts a :class:`~kafka_placement.testing.toxiproxy.ToxiproxyServer` and
:meth:`ClusterFaults.create_proxies` before its brokers, so that each broker can advertise its proxy's port;
tests then reach the proxies through ``cluster.faults``::

    with cluster.faults.toxic(reset_peer(), brokers=[0]):   # broker 0's client connections reset
        ...
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping

from kafka_placement.errors import InvalidBrokerError
from kafka_placement.testing.layout import HOST
from kafka_placement.testing.toxiproxy import Proxy, Toxic, ToxiproxyClient

__all__ = ["ClusterFaults"]


class ClusterFaults:
    """Toxics per broker on a proxied cluster's client traffic (inter-broker traffic never passes here)."""

    def __init__(self, client: ToxiproxyClient, cluster_name: str) -> None:
        self.client = client
        self._prefix = cluster_name
        self._proxies: dict[int, str] = {}  # broker id → proxy name

    def proxy_name(self, broker_id: int) -> str:
        if broker_id not in self._proxies:
            raise InvalidBrokerError(
                f"broker id {broker_id!r} has no proxy (brokers {sorted(self._proxies)})"
            )
        return self._proxies[broker_id]

    @property
    def broker_ids(self) -> list[int]:
        return sorted(self._proxies)

    def create_proxies(self, upstream_ports: Mapping[int, int]) -> dict[int, int]:
        """One proxy per broker (listening on a port Toxiproxy picks) to ``127.0.0.1:<upstream port>``;
        broker id → the proxy's port. Proxies of an earlier call are replaced."""
        self.delete_proxies()
        ports: dict[int, int] = {}
        for broker_id, upstream in sorted(upstream_ports.items()):
            name = f"{self._prefix}-broker-{broker_id}"
            proxy = self.client.create_proxy(name, f"{HOST}:0", f"{HOST}:{upstream}")
            self._proxies[broker_id] = name
            ports[broker_id] = proxy.listen_port
        return ports

    def delete_proxies(self) -> None:
        for name in self._proxies.values():
            self.client.delete_proxy(name)
        self._proxies.clear()

    def _targets(self, brokers: Iterable[int] | None) -> list[int]:
        chosen = self.broker_ids if brokers is None else list(brokers)
        for broker_id in chosen:
            self.proxy_name(broker_id)
        return chosen

    def proxy(self, broker_id: int) -> Proxy:
        return self.client.proxy(self.proxy_name(broker_id))

    def add(self, toxic: Toxic, brokers: Iterable[int] | None = None) -> None:
        """``toxic`` on the proxy of every broker in ``brokers`` (default: all)."""
        for broker_id in self._targets(brokers):
            self.client.add_toxic(self.proxy_name(broker_id), toxic)

    def remove(self, name: str, brokers: Iterable[int] | None = None) -> None:
        """The toxic called ``name`` off the proxies of ``brokers`` (default: all)."""
        for broker_id in self._targets(brokers):
            self.client.remove_toxic(self.proxy_name(broker_id), name)

    def disable(self, brokers: Iterable[int] | None = None) -> None:
        """The proxies of ``brokers`` down: nothing listens, open connections are dropped."""
        for broker_id in self._targets(brokers):
            self.client.disable(self.proxy_name(broker_id))

    def enable(self, brokers: Iterable[int] | None = None) -> None:
        for broker_id in self._targets(brokers):
            self.client.enable(self.proxy_name(broker_id))

    def clear(self) -> None:
        """Every proxy of this cluster enabled and without toxics."""
        for broker_id in self.broker_ids:
            name = self.proxy_name(broker_id)
            self.client.enable(name)
            for toxic in self.client.toxics(name):
                self.client.remove_toxic(name, toxic.name)

    @contextlib.contextmanager
    def toxic(self, *toxics: Toxic, brokers: Iterable[int] | None = None) -> Iterator[None]:
        """``toxics`` on ``brokers`` (default: all) for the ``with`` block, removed afterwards."""
        targets = self._targets(brokers)
        added: list[tuple[str, int]] = []  # what to take off again, even if a later add failed
        try:
            for toxic in toxics:
                for broker_id in targets:
                    self.client.add_toxic(self.proxy_name(broker_id), toxic)
                    added.append((toxic.name, broker_id))
            yield
        finally:
            for name, broker_id in reversed(added):
                self.client.remove_toxic(self.proxy_name(broker_id), name)
