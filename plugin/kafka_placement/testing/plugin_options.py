"""The pytest plugin's options: command line and ini, validated into :class:`ClusterOptions`.

Each option is also an ini key (``-`` → ``_``); the command line wins. A bad value is a
:class:`pytest.UsageError` naming the option and what is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kafka_placement.testing.layout import BROKER_RACKS

_OPTIONS: dict[str, str] = {
    "kafka_image": "Docker image of the brokers (default: apache/kafka:<version> if present or pullable, "
    "else the offline build)",
    "kafka_brokers": "broker count of kafka_cluster, ids 0..N-1 (default 6)",
    "kafka_racks": "broker racks as id:rack,… (default 0:rack1,1:rack3,2:rack3,3:rack2,4:rack2,5:rack1)",
    "kafka_security": "plaintext | ssl | sasl_plaintext | sasl_ssl (default plaintext)",
    "kafka_bootstrap_server": "use this running cluster (host:port) instead of starting one",
    "kafka_client_config": "Java client .properties for --kafka-bootstrap-server (TLS/SASL settings)",
    "kafka_unavailable": "when no cluster can be had: skip (default) or fail",
}
SECURITY = ("plaintext", "ssl", "sasl_plaintext", "sasl_ssl")
MAX_BROKERS = 12


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kafka-placement", "Kafka clusters for tests (kafka-placement)")
    for dest, help_text in _OPTIONS.items():
        group.addoption("--" + dest.replace("_", "-"), dest=dest, default=None, help=help_text)
        parser.addini(dest, help_text, default="")
    group.addoption(
        "--kafka-sigterm-cleanup",
        dest="kafka_sigterm_cleanup",
        action="store_true",
        default=None,
        help="remove the clusters' containers when pytest gets SIGTERM",
    )
    parser.addini("kafka_sigterm_cleanup", "remove containers on SIGTERM", type="bool", default=False)


def option(config: pytest.Config, name: str) -> str | None:
    """The command line's value, else the ini file's, else None."""
    value = config.getoption(name)
    if value is None:
        value = config.getini(name)
    if isinstance(value, bool):
        return "true" if value else None
    return str(value).strip() or None


@dataclass(frozen=True)
class ClusterOptions:
    image: str | None
    racks: dict[int, str]
    security: str
    bootstrap_server: str | None
    client_config: str | None
    on_unavailable: str
    sigterm_cleanup: bool


def cluster_options(config: pytest.Config) -> ClusterOptions:
    """Validated options (a bad one is a :class:`pytest.UsageError` naming it and what is allowed)."""
    security = (option(config, "kafka_security") or "plaintext").lower()
    if security not in SECURITY:
        raise pytest.UsageError(f"--kafka-security must be one of {', '.join(SECURITY)}, got {security!r}")
    policy = (option(config, "kafka_unavailable") or "skip").lower()
    if policy not in ("skip", "fail"):
        raise pytest.UsageError(f"--kafka-unavailable must be skip or fail, got {policy!r}")
    brokers_text = option(config, "kafka_brokers")
    brokers: int | None = None
    if brokers_text is not None:
        if not brokers_text.isdigit() or not 1 <= int(brokers_text) <= MAX_BROKERS:
            raise pytest.UsageError(
                f"--kafka-brokers must be an integer in [1, {MAX_BROKERS}], got {brokers_text!r}"
            )
        brokers = int(brokers_text)
    racks_text = option(config, "kafka_racks")
    if racks_text is not None:
        racks = _parse_racks(racks_text)
        if brokers is not None and brokers != len(racks):
            raise pytest.UsageError(f"--kafka-brokers {brokers} but --kafka-racks names {len(racks)} brokers")
    elif brokers is None or brokers == len(BROKER_RACKS):
        racks = dict(BROKER_RACKS)
    else:
        racks = {i: f"rack{i % 3 + 1}" for i in range(brokers)}
    client_config = option(config, "kafka_client_config")
    bootstrap = option(config, "kafka_bootstrap_server")
    if client_config is not None and bootstrap is None:
        raise pytest.UsageError("--kafka-client-config goes with --kafka-bootstrap-server")
    return ClusterOptions(
        image=option(config, "kafka_image"),
        racks=racks,
        security=security,
        bootstrap_server=bootstrap,
        client_config=client_config,
        on_unavailable=policy,
        sigterm_cleanup=option(config, "kafka_sigterm_cleanup") is not None,
    )


def _parse_racks(text: str) -> dict[int, str]:
    racks: dict[int, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        ident, sep, rack = item.partition(":")
        if not sep or not ident.isdigit() or not rack.strip():
            raise pytest.UsageError(f"--kafka-racks item {item!r} is not id:rack (e.g. 0:rack1), in {text!r}")
        if int(ident) in racks:
            raise pytest.UsageError(f"--kafka-racks names broker {ident} twice in {text!r}")
        racks[int(ident)] = rack.strip()
    if not 1 <= len(racks) <= MAX_BROKERS:
        raise pytest.UsageError(f"--kafka-racks must name 1 to {MAX_BROKERS} brokers, got {len(racks)}")
    return racks
