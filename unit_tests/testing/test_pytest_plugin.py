"""The CI-fail / local-skip rule of the kafka_cluster fixture, and engine/image errors."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_placement.testing import image as image_mod
from kafka_placement.testing import pytest_plugin
from kafka_placement.testing.cluster import EngineUnavailable, KafkaCluster, docker_client


@pytest.mark.parametrize(("value", "expected"), [("true", True), ("1", True), ("TRUE", True), ("", False),
                                                  ("false", False)])
def test_in_ci(monkeypatch: pytest.MonkeyPatch, value: str, expected: bool) -> None:
    monkeypatch.setenv("CI", value)
    assert pytest_plugin.in_ci() is expected


def test_unavailable_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="unavailable in CI: no engine"):
        pytest_plugin._unavailable("no engine")


def test_unavailable_skips_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="outside CI, so skipped\\): no engine"):
        pytest_plugin._unavailable("no engine")


def test_no_engine_is_reported(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-such.sock")
    with pytest.raises(EngineUnavailable, match=r"no Docker engine answers .*ensure-engine\.sh"):
        docker_client()
    with pytest.raises(EngineUnavailable):
        KafkaCluster(image="x").start()


def test_reuse_without_state_skips_outside_ci(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("KAFKA_PLACEMENT_STATE", str(tmp_path / "none.json"))
    with pytest.raises(pytest.skip.Exception, match="KAFKA_PLACEMENT_REUSE=1 but no shared cluster state"):
        pytest_plugin._attach()


class _Images:
    def __init__(self, present: set[str]) -> None:
        self.present = present

    def get(self, name: str) -> object:
        import docker.errors

        if name not in self.present:
            raise docker.errors.ImageNotFound(name)
        return object()


class _Client:
    def __init__(self, present: set[str]) -> None:
        self.images = _Images(present)


def test_image_env_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKA_IMAGE", "my/kafka:1")
    assert image_mod.resolve_image(_Client({image_mod.official_image()})) == "my/kafka:1"


def test_image_official_then_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAFKA_IMAGE", raising=False)
    both = {image_mod.official_image(), image_mod.offline_image()}
    assert image_mod.resolve_image(_Client(both)) == image_mod.official_image()
    assert image_mod.resolve_image(_Client({image_mod.offline_image()})) == image_mod.offline_image()


def test_image_none_without_build(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAFKA_IMAGE", raising=False)
    pattern = r"neither apache/kafka:\S+ nor kafka-placement/kafka:"
    with pytest.raises(image_mod.ImageUnavailable, match=pattern):
        image_mod.resolve_image(_Client(set()), build=False)


def test_image_names_use_the_pin() -> None:
    from kafka_placement.versions import KAFKA_VERSION

    assert image_mod.official_image() == f"apache/kafka:{KAFKA_VERSION}"
    assert image_mod.offline_image() == f"kafka-placement/kafka:{KAFKA_VERSION}"
    assert image_mod.ensure_image_script() is not None  # running from the checkout
