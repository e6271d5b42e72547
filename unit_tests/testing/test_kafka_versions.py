"""The embedded cluster on any Kafka 4.x: the version is checked before any work, picks the image and the
broker plugin's build, and the pytest factory keeps one cluster per version (no engine, no Maven here)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from unit_tests.testing.test_pytest_plugin import _Client  # the engine's images, faked

from kafka_placement.errors import InvalidArgumentError, UnsupportedKafkaVersionError
from kafka_placement.testing import cluster as cluster_mod
from kafka_placement.testing import image as image_mod
from kafka_placement.versions import (
    KAFKA_VERSION,
    KAFKA_VERSION_MATRIX,
    OLDEST_KAFKA_VERSION,
    supported_kafka_version,
)

OTHER = "4.2.2"  # a supported version that is not the pin


@pytest.mark.parametrize("version", [*KAFKA_VERSION_MATRIX, "4.0.0", "4.4.9", "4.0.10"])
def test_every_release_from_4_0_to_the_pins_minor_is_accepted(version: str) -> None:
    assert supported_kafka_version(version) == version


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("3.9.0", "Kafka version 3.9.0 is outside the range the embedded cluster runs: 4.0.0 to 4.4.x"),
        ("4.5.0", "Kafka version 4.5.0 is outside the range the embedded cluster runs: 4.0.0 to 4.4.x"),
        ("5.0.0", "Kafka version 5.0.0 is outside"),
        ("4.0", "got '4.0'"),
        ("4.01.0", "got '4.01.0'"),
        (" 4.0.0", "got ' 4.0.0'"),
        ("4.0.0-rc1", "got '4.0.0-rc1'"),
        ("", "got ''"),
        (None, "got None"),
        (4.0, "got 4.0"),
    ],
)
def test_anything_else_is_a_typed_error_naming_the_value_and_the_range(value: object, shown: str) -> None:
    with pytest.raises(UnsupportedKafkaVersionError) as refused:
        supported_kafka_version(value)
    assert shown in str(refused.value)
    assert "4.0.0 to 4.4.x" in str(refused.value)
    assert isinstance(refused.value, InvalidArgumentError)  # a ValueError, as every bad argument here


def test_the_matrix_is_the_newest_patch_of_each_minor_up_to_the_pin() -> None:
    minors = [tuple(int(p) for p in v.split(".")[:2]) for v in KAFKA_VERSION_MATRIX]
    oldest = tuple(int(p) for p in OLDEST_KAFKA_VERSION.split(".")[:2])
    pin = tuple(int(p) for p in KAFKA_VERSION.split(".")[:2])
    assert minors == [(4, minor) for minor in range(oldest[1], pin[1] + 1)]
    assert KAFKA_VERSION_MATRIX[-1] == KAFKA_VERSION


def test_another_version_gets_its_own_image_not_the_pins_kafka_image(monkeypatch: pytest.MonkeyPatch) -> None:
    # KAFKA_IMAGE names the pinned version's image (the dev cluster's environment sets it)
    monkeypatch.setenv("KAFKA_IMAGE", f"kafka-placement/kafka:{KAFKA_VERSION}")
    present = {f"kafka-placement/kafka:{OTHER}", f"kafka-placement/kafka:{KAFKA_VERSION}"}
    assert image_mod.resolve_image(_Client(present), version=OTHER) == f"kafka-placement/kafka:{OTHER}"
    assert image_mod.resolve_image(_Client(present)) == f"kafka-placement/kafka:{KAFKA_VERSION}"
    official = {f"apache/kafka:{OTHER}", f"kafka-placement/kafka:{OTHER}"}
    assert image_mod.resolve_image(_Client(official), version=OTHER) == f"apache/kafka:{OTHER}"


def test_a_missing_image_is_built_for_the_version_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAFKA_IMAGE", raising=False)
    monkeypatch.setenv(image_mod.VERSION_ENV, "4.1.2")  # a stray override in the caller's environment
    runs: list[dict[str, str]] = []

    def run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        env = kwargs["env"]
        runs.append(env)
        version = env.get(image_mod.VERSION_ENV, KAFKA_VERSION)
        return subprocess.CompletedProcess(command, 0, stdout=f"progress\nkafka-placement/kafka:{version}\n")

    monkeypatch.setattr(image_mod.subprocess, "run", run)
    client = _Client(set())
    assert image_mod.resolve_image(client, version=OTHER) == f"kafka-placement/kafka:{OTHER}"
    assert client.images.pulled == [("apache/kafka", OTHER)]
    # the pin builds under its own name even when the caller's environment names another version
    assert image_mod.resolve_image(_Client(set())) == f"kafka-placement/kafka:{KAFKA_VERSION}"
    assert runs[0][image_mod.VERSION_ENV] == OTHER and image_mod.VERSION_ENV not in runs[1]


def test_without_a_build_the_error_says_how_to_build_that_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAFKA_IMAGE", raising=False)
    with pytest.raises(
        image_mod.ImageUnavailable,
        match=rf"neither apache/kafka:{OTHER} nor kafka-placement/"
        rf"kafka:{OTHER} .* with KAFKA_PLACEMENT_KAFKA_VERSION={OTHER}",
    ):
        image_mod.resolve_image(_Client(set()), build=False, pull=False, version=OTHER)
    with pytest.raises(UnsupportedKafkaVersionError):
        image_mod.resolve_image(_Client(set()), version="3.9.0")


def test_ensure_image_refuses_a_version_outside_4x_before_touching_the_engine() -> None:
    script = image_mod.ensure_image_script()
    assert script is not None
    env = {**os.environ, "KAFKA_PLACEMENT_KAFKA_VERSION": "3.9.0", "PATH": os.environ["PATH"]}
    env.pop("KAFKA_IMAGE", None)
    done = subprocess.run(
        ["bash", str(script)], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert done.returncode == 1 and done.stdout == ""
    assert "KAFKA_PLACEMENT_KAFKA_VERSION=3.9.0 is not a Kafka 4.x release" in done.stderr


def test_a_bad_version_fails_before_any_container_or_build(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_engine() -> None:
        raise AssertionError("the engine was asked before the version was checked")

    monkeypatch.setattr(cluster_mod, "docker_client", no_engine)
    with pytest.raises(UnsupportedKafkaVersionError, match=r"Kafka version 4\.9\.0 is outside"):
        cluster_mod.KafkaCluster(kafka_version="4.9.0")
    assert cluster_mod.KafkaCluster().kafka_version == KAFKA_VERSION


class _Stop(Exception):
    pass


def test_the_cluster_resolves_the_image_and_builds_the_plugin_for_its_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[tuple[str, str]] = []

    def resolve(client: object, *, version: str) -> str:
        asked.append(("image", version))
        return f"kafka-placement/kafka:{version}"

    def plugin(log: object, kafka_version: str) -> Path:
        asked.append(("plugin", kafka_version))
        raise _Stop  # enough: no container is started here

    monkeypatch.setattr(cluster_mod, "docker_client", lambda: object())
    monkeypatch.setattr(cluster_mod, "remove_orphans", lambda client: [])
    monkeypatch.setattr(cluster_mod, "resolve_image", resolve)
    monkeypatch.setattr(cluster_mod, "plugin_jar", plugin)
    cluster = cluster_mod.KafkaCluster(racks={0: "rack1"}, kafka_version=OTHER)
    with pytest.raises(_Stop):
        cluster.start()
    assert asked == [("image", OTHER), ("plugin", OTHER)]
    assert cluster.image == f"kafka-placement/kafka:{OTHER}"


def test_the_plugin_is_built_for_the_version_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from kafka_placement.broker_plugin import build
    from kafka_placement.testing.failover_plugin import plugin_jar

    built: list[str] = []

    def fake_build(version: str) -> Path:
        built.append(version)
        return Path(f"/jars/{version}.jar")

    monkeypatch.setattr(build, "build_jar", fake_build)
    assert plugin_jar(lambda line: None, OTHER) == Path(f"/jars/{OTHER}.jar")
    assert plugin_jar(lambda line: None) == Path(f"/jars/{KAFKA_VERSION}.jar")
    assert built == [OTHER, KAFKA_VERSION]
    # each version's jar is its own file: the group-coordinator API differs between minors
    assert build.jar_name(OTHER) != build.jar_name(KAFKA_VERSION)
    assert build.BUILD.cache_dir(OTHER) != build.BUILD.cache_dir(KAFKA_VERSION)


def test_the_factory_keeps_one_cluster_per_version_and_releases_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from kafka_placement.testing import pytest_plugin
    from kafka_placement.testing.plugin_options import ClusterOptions

    events: list[tuple[str, str, str | None]] = []

    def start(self: Any) -> Any:
        events.append(("start", self.kafka_version, self._image))
        return self

    def stop(self: Any) -> None:
        events.append(("stop", self.kafka_version, self._image))

    monkeypatch.setattr(cluster_mod.KafkaCluster, "start", start)
    monkeypatch.setattr(cluster_mod.KafkaCluster, "stop", stop)
    options = ClusterOptions(
        image="my/kafka:pinned",
        racks={0: "rack1"},
        security="plaintext",
        bootstrap_server=None,
        client_config=None,
        on_unavailable="fail",
        sigterm_cleanup=False,
    )
    factory = pytest_plugin._ClusterFactory(options)
    other = factory(racks={0: "rack1"}, kafka_version=OTHER)
    pinned = factory(racks={0: "rack1"})
    assert factory(racks={0: "rack1"}, kafka_version=OTHER) is other and other is not pinned
    # --kafka-image names the pinned version's image; another version resolves its own at start
    assert events == [("start", OTHER, None), ("start", KAFKA_VERSION, "my/kafka:pinned")]
    factory.release(other)
    assert events[-1] == ("stop", OTHER, None)
    assert factory(racks={0: "rack1"}, kafka_version=OTHER) is not other  # a fresh one after release
    with pytest.raises(UnsupportedKafkaVersionError):
        factory(racks={0: "rack1"}, kafka_version="4.5.0")
    factory.stop()
