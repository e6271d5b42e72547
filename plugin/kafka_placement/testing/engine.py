"""The Docker engine as the test clusters use it: the client, container labels, and clean-up.

Containers carry ``kafka-placement.*`` labels (cluster name, role, node id, owner pid), so a cluster's
containers are found by name, leftovers removed (:func:`remove_leftovers`, ``kafka-placement cluster down
--all``) and clusters whose owner process died swept (:func:`remove_orphans`) before each start.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kafka_placement.errors import ClusterError
from kafka_placement.testing.secrets_dir import remove_secrets_dir

LABEL = "kafka-placement.cluster"
ROLE_LABEL = "kafka-placement.role"
NODE_LABEL = "kafka-placement.node-id"
#: pid of the process that owns the containers ("" for a persistent cluster such as `up`'s).
OWNER_LABEL = "kafka-placement.owner-pid"


class EngineUnavailable(ClusterError):
    """No Docker engine answers."""


def docker_client() -> Any:
    """A docker-py client for the engine, or :class:`EngineUnavailable` with the reason."""
    try:
        # importlib: a plain `import docker` makes mypy resolve the repository's docker/ directory.
        docker: Any = importlib.import_module("docker")
    except ImportError as exc:  # pragma: no cover - the testing extra is missing
        raise EngineUnavailable(
            "the 'docker' package is missing: pip install 'kafka-placement[testing]'"
        ) from exc
    try:
        client = docker.from_env(timeout=30)
        client.ping()
    except Exception as exc:
        raise EngineUnavailable(
            f"no Docker engine answers ({exc}); run scripts/ensure-engine.sh or set DOCKER_HOST"
        ) from exc
    return client


@contextlib.contextmanager
def _without_ryuk() -> Iterator[None]:
    """Testcontainers' reaper (Ryuk, an image from Docker Hub) is not needed for our containers —
    :meth:`KafkaCluster.stop` removes them, and after a crash the next start sweeps clusters whose
    owner process is gone — and offline it cannot start. So it is off while we start ours, unless the
    environment says otherwise (``TESTCONTAINERS_RYUK_DISABLED``); nothing stays changed afterwards."""
    if "TESTCONTAINERS_RYUK_DISABLED" in os.environ:
        yield
        return
    from testcontainers.core.config import testcontainers_config

    previous = testcontainers_config.ryuk_disabled
    testcontainers_config.ryuk_disabled = True
    try:
        yield
    finally:
        testcontainers_config.ryuk_disabled = previous


def remove_leftovers(client: Any, name: str | None = None) -> list[str]:
    """Force-remove containers labelled by this harness (one cluster by ``name``, or all)."""
    label = f"{LABEL}={name}" if name else LABEL
    removed = []
    for c in client.containers.list(all=True, filters={"label": label}):
        with contextlib.suppress(Exception):
            c.remove(force=True, v=True)
            removed.append(str(c.name))
    return removed


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this machine (ours or another user's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_orphans(client: Any) -> list[str]:
    """Remove clusters whose owning process (on this machine) died without cleaning up.

    Containers of persistent clusters (``kafka-placement cluster up``) carry no owner pid
    and are never touched.
    """
    orphans: set[str] = set()
    for c in client.containers.list(all=True, filters={"label": LABEL}):
        labels = c.labels or {}
        owner = labels.get(OWNER_LABEL, "")
        if owner.isdigit() and not pid_alive(int(owner)):
            orphans.add(labels[LABEL])
    for name in sorted(orphans):
        remove_leftovers(client, name)
        # ... and the secrets directory its process made under the temp dir (see _start_nodes).
        for leftover in Path(tempfile.gettempdir()).glob(f"{name}-secrets-*"):
            remove_secrets_dir(leftover)
    return sorted(orphans)
