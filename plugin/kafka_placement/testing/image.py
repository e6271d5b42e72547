"""Which Kafka image the harness runs (same rules as ``scripts/ensure-image.sh``).

For the pinned ``KAFKA_VERSION`` (the default) or any other supported 4.x release (``version=``):
1. env ``KAFKA_IMAGE`` (pinned version only: it names the pin's image); 2. the official
``apache/kafka:<KAFKA_VERSION>`` if present in the engine;
3. the offline ``kafka-placement/kafka:<KAFKA_VERSION>`` if built; 4. the official image pulled, where
the engine can pull it; 5. in a source checkout, run ``scripts/ensure-image.sh`` to build the offline
image from Maven Central (its last stdout line is the tag; ``KAFKA_PLACEMENT_KAFKA_VERSION`` tells it the
version when it is not the pin).
"""

from __future__ import annotations

import importlib
import os
import subprocess
from pathlib import Path
from typing import Any

from kafka_placement.errors import ClusterError
from kafka_placement.versions import KAFKA_VERSION, supported_kafka_version

OFFICIAL_REPOSITORY = "apache/kafka"
OFFLINE_REPOSITORY = "kafka-placement/kafka"
#: What ``scripts/ensure-image.sh`` reads to build another version than the pin.
VERSION_ENV = "KAFKA_PLACEMENT_KAFKA_VERSION"


class ImageUnavailable(ClusterError):
    """No usable Kafka image and none could be built."""


def official_image(version: str = KAFKA_VERSION) -> str:
    return f"{OFFICIAL_REPOSITORY}:{version}"


def offline_image(version: str = KAFKA_VERSION) -> str:
    return f"{OFFLINE_REPOSITORY}:{version}"


def ensure_image_script() -> Path | None:
    """``scripts/ensure-image.sh`` of the source checkout this package is imported from, if any."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "scripts" / "ensure-image.sh"
        if candidate.is_file() and (parent / "docker" / "offline" / "pom.xml").is_file():
            return candidate
    return None


def _present(client: Any, image: str) -> bool:
    not_found: type[Exception] = importlib.import_module("docker.errors").ImageNotFound
    try:
        client.images.get(image)
    except not_found:
        return False
    return True


def pull_official(client: Any, version: str = KAFKA_VERSION) -> str | None:
    """Pull the official image; its name, or None where the engine cannot pull it (offline, no access)."""
    errors = importlib.import_module("docker.errors")
    try:
        client.images.pull(OFFICIAL_REPOSITORY, tag=version)
    except (errors.APIError, errors.DockerException, OSError):
        return None
    return official_image(version)


def resolve_image(client: Any, *, build: bool = True, pull: bool = True, version: str = KAFKA_VERSION) -> str:
    """The image to run Kafka ``version`` (checked first); may pull the official image or build the offline
    one (minutes when cold)."""
    supported_kafka_version(version)
    env = os.environ.get("KAFKA_IMAGE")
    if env and version == KAFKA_VERSION:
        return env
    for candidate in (official_image(version), offline_image(version)):
        if _present(client, candidate):
            return candidate
    if pull:
        pulled = pull_official(client, version)
        if pulled is not None:
            return pulled
    script = ensure_image_script()
    if not build or script is None:
        hint = " and KAFKA_IMAGE is unset" if version == KAFKA_VERSION else ""
        raise ImageUnavailable(
            f"neither {official_image(version)} nor {offline_image(version)} is in the Docker engine"
            + (", the official image could not be pulled" if pull else "")
            + f"{hint}; run scripts/ensure-image.sh from a kafka-placement checkout"
            + (f" with {VERSION_ENV}={version}" if version != KAFKA_VERSION else "")
            + ", pull the official image"
            + (", or set KAFKA_IMAGE" if version == KAFKA_VERSION else "")
        )
    env_vars = dict(os.environ)
    if version != KAFKA_VERSION:
        env_vars[VERSION_ENV] = version
    else:
        env_vars.pop(VERSION_ENV, None)  # a stray override must not build another version for the pin
    proc = subprocess.run(["bash", str(script)], stdout=subprocess.PIPE, text=True, check=False, env=env_vars)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise ImageUnavailable(f"{script} failed with exit code {proc.returncode} (see its stderr above)")
    return lines[-1].strip()
