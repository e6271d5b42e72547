"""The pytest plugin as another project sees it (pytester: a throwaway project in a temp dir, its own
pytest run), plus engine and image errors."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from kafka_placement.testing import image as image_mod
from kafka_placement.testing import pytest_plugin
from kafka_placement.testing.cluster import EngineUnavailable, KafkaCluster, docker_client


def test_no_engine_is_reported(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-such.sock")
    with pytest.raises(EngineUnavailable, match=r"no Docker engine answers .*ensure-engine\.sh"):
        docker_client()
    with pytest.raises(EngineUnavailable):
        KafkaCluster(image="x").start()


pytest_plugins = ["pytester"]

USER_TEST = """
import pytest

@pytest.mark.kafka
@pytest.mark.integration
def test_uses_kafka(kafka_cluster):
    assert kafka_cluster.bootstrap_servers
"""


def test_markers_are_registered_and_options_listed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user="@__import__('pytest').mark.kafka\ndef test_marked():\n    pass\n")
    assert pytester.runpytest_subprocess("--strict-markers").ret == 0
    help_text = pytester.runpytest_subprocess("--help").stdout.str()
    for name in (
        "--kafka-image",
        "--kafka-brokers",
        "--kafka-racks",
        "--kafka-security",
        "--kafka-bootstrap-server",
        "--kafka-client-config",
        "--kafka-unavailable",
        "--kafka-sigterm-cleanup",
    ):
        assert name in help_text
    markers = pytester.runpytest_subprocess("--markers").stdout.str()
    assert "@pytest.mark.kafka:" in markers and "@pytest.mark.integration:" in markers


def test_an_unreachable_bootstrap_server_skips_or_fails_as_configured(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    skipped = pytester.runpytest_subprocess("--kafka-bootstrap-server=127.0.0.1:1", "-rs")
    skipped.assert_outcomes(skipped=1)
    skipped.stdout.fnmatch_lines(["*Kafka cluster unavailable (skipped*127.0.0.1:1*"])
    pytester.makeini("[pytest]\nkafka_unavailable = fail\nkafka_bootstrap_server = 127.0.0.1:1\n")
    failed = pytester.runpytest_subprocess()
    failed.assert_outcomes(errors=1)
    failed.stdout.fnmatch_lines(["*--kafka-unavailable=fail*127.0.0.1:1*"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--kafka-security=tls"],
            "--kafka-security must be one of plaintext, ssl, sasl_plaintext, sasl_ssl",
        ),
        (["--kafka-brokers=0"], "--kafka-brokers must be an integer in [[]1, 12[]], got '0'"),
        (["--kafka-racks=0:a,x"], "--kafka-racks item 'x' is not id:rack*"),
        (["--kafka-brokers=2", "--kafka-racks=0:a,1:b,2:c"], "--kafka-brokers 2 but --kafka-racks names 3*"),
        (["--kafka-unavailable=ignore"], "--kafka-unavailable must be skip or fail, got 'ignore'"),
        (["--kafka-client-config=x.properties"], "--kafka-client-config goes with --kafka-bootstrap-server"),
    ],
)
def test_bad_options_are_usage_errors(pytester: pytest.Pytester, args: list[str], message: str) -> None:
    pytester.makepyfile(test_user="def test_nothing():\n    pass\n")
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])


def test_options_become_the_cluster_shape(pytester: pytest.Pytester) -> None:
    config = pytester.parseconfigure(
        "--kafka-brokers=4", "--kafka-security=SASL_SSL", "--kafka-image=me/kafka:1"
    )
    options = pytest_plugin.cluster_options(config)
    assert options.racks == {0: "rack1", 1: "rack2", 2: "rack3", 3: "rack1"}
    assert (options.security, options.image, options.on_unavailable) == ("sasl_ssl", "me/kafka:1", "skip")
    default = pytest_plugin.cluster_options(pytester.parseconfigure())
    assert default.racks == {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert not default.sigterm_cleanup


def test_nothing_in_the_environment_changes(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TESTCONTAINERS_RYUK_DISABLED", raising=False)  # our own test run sets it
    probe = (
        "import os, signal, sys\n"
        "before = dict(os.environ)\n"
        "import kafka_placement.testing.cluster, kafka_placement.testing.pytest_plugin\n"
        "assert dict(os.environ) == before, set(os.environ.items()) ^ set(before.items())\n"
        "assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL\n"
    )
    result = pytester.run(sys.executable, "-c", probe)
    assert result.ret == 0, result.stderr.str()


def test_reuse_without_state_skips_by_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("KAFKA_PLACEMENT_STATE", str(tmp_path / "none.json"))
    options = pytest_plugin.ClusterOptions(None, {}, "plaintext", None, None, "skip", False)
    with pytest.raises(pytest.skip.Exception, match="KAFKA_PLACEMENT_REUSE=1 but no shared cluster state"):
        pytest_plugin._attach(options)
    failing = pytest_plugin.ClusterOptions(None, {}, "plaintext", None, None, "fail", False)
    with pytest.raises(pytest.fail.Exception, match="--kafka-unavailable=fail"):
        pytest_plugin._attach(failing)


class _Images:
    def __init__(self, present: set[str], pull_ok: bool = False) -> None:
        self.present = present
        self.pull_ok = pull_ok
        self.pulled: list[tuple[str, str]] = []

    def pull(self, repository: str, tag: str) -> object:
        import docker.errors

        self.pulled.append((repository, tag))
        if not self.pull_ok:
            raise docker.errors.APIError("pull access denied (no registry reachable)")
        return object()

    def get(self, name: str) -> object:
        import docker.errors

        if name not in self.present:
            raise docker.errors.ImageNotFound(name)
        return object()


class _Client:
    def __init__(self, present: set[str], pull_ok: bool = False) -> None:
        self.images = _Images(present, pull_ok)


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
    pattern = r"neither apache/kafka:\S+ nor kafka-placement/kafka:\S+ is in the Docker engine, the official"
    with pytest.raises(image_mod.ImageUnavailable, match=pattern):
        image_mod.resolve_image(_Client(set()), build=False)


def test_the_official_image_is_pulled_where_the_engine_can(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAFKA_IMAGE", raising=False)
    pulling = _Client(set(), pull_ok=True)
    assert image_mod.resolve_image(pulling, build=False) == image_mod.official_image()
    assert pulling.images.pulled == [("apache/kafka", image_mod.KAFKA_VERSION)]


def test_image_names_use_the_pin() -> None:
    from kafka_placement.versions import KAFKA_VERSION

    assert image_mod.official_image() == f"apache/kafka:{KAFKA_VERSION}"
    assert image_mod.offline_image() == f"kafka-placement/kafka:{KAFKA_VERSION}"
    assert image_mod.ensure_image_script() is not None  # running from the checkout
