"""The shared dev cluster's state file (JSON), written by ``kafka-placement cluster up``.

Location: env ``KAFKA_PLACEMENT_STATE``, else ``~/.cache/kafka-placement/dev-cluster.json``.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_placement.cache import cache_root
from kafka_placement.errors import KafkaPlacementError
from kafka_placement.testing.layout import ClusterLayout

STATE_VERSION = 1


def default_state_path() -> Path:
    env = os.environ.get("KAFKA_PLACEMENT_STATE")
    if env:
        return Path(env)
    return cache_root() / "dev-cluster.json"


class StateError(KafkaPlacementError, ValueError):
    """The state file is missing, unreadable or not ours."""


@dataclass(frozen=True)
class ClusterState:
    """What another process needs to attach to a running cluster."""

    name: str
    image: str
    layout: ClusterLayout
    controller_container: str
    broker_containers: dict[int, str]
    started_at: float
    #: Client listener protocol, ACL switch and secrets directory (absent in older state files).
    security: str = "plaintext"
    acls: bool = False
    secrets_dir: str | None = None

    def to_json(self) -> dict[str, Any]:
        lay = self.layout
        return {
            "version": STATE_VERSION,
            "name": self.name,
            "image": self.image,
            "cluster_id": lay.cluster_id,
            "bootstrap_servers": lay.bootstrap_servers,
            "controller_port": lay.controller_port,
            "broker_ports": {str(b): p for b, p in sorted(lay.broker_ports.items())},
            "broker_racks": {str(b): r for b, r in sorted(lay.racks.items())},
            "heap_opts": lay.heap_opts,
            "jvm_performance_opts": lay.jvm_performance_opts,
            "broker_properties": dict(lay.broker_properties),
            "controller_container": self.controller_container,
            "broker_containers": {str(b): c for b, c in sorted(self.broker_containers.items())},
            "started_at": self.started_at,
            "security": self.security,
            "acls": self.acls,
            "secrets_dir": self.secrets_dir,
        }

    @classmethod
    def from_json(cls, data: Any) -> ClusterState:
        if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
            raise StateError(f"not a kafka-placement cluster state (version {STATE_VERSION}): {data!r:.200}")
        try:
            layout = ClusterLayout(
                cluster_id=str(data["cluster_id"]),
                controller_port=int(data["controller_port"]),
                broker_ports={int(b): int(p) for b, p in data["broker_ports"].items()},
                racks={int(b): str(r) for b, r in data["broker_racks"].items()},
                heap_opts=str(data["heap_opts"]),
                jvm_performance_opts=str(data["jvm_performance_opts"]),
                broker_properties={str(k): str(v) for k, v in data["broker_properties"].items()},
                security=str(data.get("security", "plaintext")),
                acls=bool(data.get("acls", False)),
            )
            return cls(
                name=str(data["name"]),
                image=str(data["image"]),
                layout=layout,
                controller_container=str(data["controller_container"]),
                broker_containers={int(b): str(c) for b, c in data["broker_containers"].items()},
                started_at=float(data["started_at"]),
                security=str(data.get("security", "plaintext")),
                acls=bool(data.get("acls", False)),
                secrets_dir=None if data.get("secrets_dir") is None else str(data["secrets_dir"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise StateError(f"malformed cluster state: {exc}") from exc


def write_state(state: ClusterState, path: Path | None = None) -> Path:
    """Atomically write ``state`` (temp file + rename)."""
    path = path or default_state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".state-", dir=path.parent)
    with os.fdopen(fd, "w") as f:
        json.dump(state.to_json(), f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)
    return path


def read_state(path: Path | None = None) -> ClusterState:
    path = path or default_state_path()
    try:
        text = path.read_text()
    except FileNotFoundError as exc:
        raise StateError(
            f"no shared cluster state at {path}; start one with `kafka-placement cluster up`"
        ) from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StateError(f"state file {path} is not JSON: {exc}") from exc
    return ClusterState.from_json(data)


def remove_state(path: Path | None = None) -> bool:
    path = path or default_state_path()
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True
