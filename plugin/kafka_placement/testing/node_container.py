"""What one node of the cluster runs as: its image, environment, mounts, command and labels.

Built here, started by :class:`~kafka_placement.testing.cluster.KafkaCluster` (which tracks the
container before it starts, so a failed start still removes it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kafka_placement.testing.engine import LABEL, NODE_LABEL, OWNER_LABEL, ROLE_LABEL
from kafka_placement.testing.failover_plugin import LIBS_MOUNT
from kafka_placement.testing.layout import CONTROLLER_ID, ENTRY_SCRIPT, SECRETS_MOUNT, ClusterLayout


def container_name(cluster: str, node: int) -> str:
    role = "controller" if node == CONTROLLER_ID else f"broker-{node}"
    return f"{cluster}-{role}"


def node_container(
    image: str,
    layout: ClusterLayout,
    node: int,
    *,
    cluster: str,
    owner_pid: int | None,
    plugin_jar: Path | None,
    secrets_dir: Path | None,
) -> Any:
    """A testcontainers ``DockerContainer`` for ``node`` (not started), on the host network.

    ``owner_pid``: the process whose death makes the container an orphan (None: a persistent cluster).
    ``plugin_jar``: our failover assignor, mounted into every broker. ``secrets_dir``: the TLS/SASL
    files of a secured cluster, whose entry script then starts the node.
    """
    from testcontainers.core.container import DockerContainer

    is_controller = node == CONTROLLER_ID
    env = layout.controller_env() if is_controller else layout.broker_env(node)
    tc = DockerContainer(image, env=env, name=container_name(cluster, node))
    if not is_controller and plugin_jar is not None:
        tc.with_volume_mapping(str(plugin_jar), LIBS_MOUNT, mode="ro")
    if secrets_dir is not None:
        tc.with_volume_mapping(str(secrets_dir), SECRETS_MOUNT, mode="ro")
        tc.with_command(["bash", f"{SECRETS_MOUNT}/{ENTRY_SCRIPT}"])
    tc.with_kwargs(
        network_mode="host",
        labels={
            LABEL: cluster,
            ROLE_LABEL: "controller" if is_controller else "broker",
            NODE_LABEL: str(node),
            OWNER_LABEL: "" if owner_pid is None else str(owner_pid),
        },
    )
    return tc
