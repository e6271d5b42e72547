"""Drives ``java/io/kafkaplacement/clientharness/ClientHarness.java``: our compiled client-side failover
assignor (and the test suite's independent Java ``FailoverAssignor``) behind Kafka's own ``ConsumerProtocol``,
in one JVM fed line by line, its slf4j log lines returned with every answer."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from unit_tests.broker_plugin.harness import Harness, hex_text

from kafka_placement.client_assignor.build import BUILD, TEST, ClientAssignorUnavailable, build_jar
from kafka_placement.versions import KAFKA_VERSION

REPO = Path(__file__).resolve().parents[2]
SOURCES = [
    *Path(__file__).with_name("java").rglob("*.java"),
    # the independent oracle the live mixed-group tests use (not ours to change)
    REPO / "integration_tests/java/member/io/kafkaplacement/conformance/live/FailoverAssignor.java",
]
#: A setting's Java type in a request: Integer, Boolean or String (as a properties file gives every value).
Setting = int | bool | str


def hex_bytes(data: bytes | None) -> str:
    if data is None:
        return "-"
    return data.hex() or "="


def unhex_bytes(text: str) -> bytes | None:
    return None if text == "-" else (b"" if text == "=" else bytes.fromhex(text))


@dataclass(frozen=True)
class Assigned:
    """What the Java leader gave one member: the topic indexes it owns whole, the assignment's userData and
    the assignment as Kafka's ConsumerProtocol serialized it."""

    topics: frozenset[int]
    user_data: bytes | None
    wire: bytes


@dataclass(frozen=True)
class Answer:
    status: str
    fields: list[str]
    logs: list[str]

    def warnings(self) -> list[str]:
        return [line for line in self.logs if line.startswith("WARN")]


def parse_answer(line: str) -> Answer:
    head, _, logs = line.partition(" |")
    status, *fields = head.split(" ")
    return Answer(status, fields, [bytes.fromhex(token).decode() for token in logs.split()])


class ClientHarness(Harness):
    """One JVM answering requests (``ask``/``ask_many``/``close`` as the broker plugin's harness)."""

    def __init__(self, build_dir: Path, kafka_version: str = KAFKA_VERSION) -> None:  # not the broker's JVM
        javac, java = shutil.which("javac"), shutil.which("java")
        if javac is None or java is None:
            raise ClientAssignorUnavailable("no JDK (javac/java) on PATH")
        class_path = [*map(str, BUILD.resolve(kafka_version, TEST)), str(build_jar(kafka_version))]
        classes = build_dir / "client-harness-classes"
        subprocess.run(
            [
                javac,
                "--release",
                "17",
                "-nowarn",
                "-d",
                str(classes),
                "-cp",
                os.pathsep.join(class_path),
                *map(str, SOURCES),
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        )
        self._process = subprocess.Popen(
            [
                java,
                "-Xmx256m",
                "-Dorg.slf4j.simpleLogger.showThreadName=false",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
                "-cp",
                os.pathsep.join([*class_path, str(classes)]),
                "io.kafkaplacement.clientharness.ClientHarness",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
        )

    def configure(self, settings: Mapping[str, Setting]) -> Answer:
        """A member with ``settings``: its subscription bytes (``OK``) or the ConfigException (``ERR``)."""
        answer = parse_answer(self.ask(" ".join(["S", *settings_fields(settings)])))
        if answer.status == "ERR":
            answer.fields[0] = bytes.fromhex(answer.fields[0]).decode()
        return answer

    def receive(self, settings: Mapping[str, Setting], assignments: Sequence[bytes]) -> list[str]:
        """The log lines of a member with ``settings`` receiving ``assignments`` (serialized), one by one."""
        answer = parse_answer(
            self.ask(" ".join(["M", *settings_fields(settings), ";", *map(hex_bytes, assignments)]))
        )
        assert answer.status == "OK", answer
        return answer.logs


def settings_fields(settings: Mapping[str, Setting]) -> list[str]:
    kinds = {bool: "b", int: "i", str: "s"}
    return [
        hex_text(f"{key}={kinds[type(value)]}:{str(value).lower() if isinstance(value, bool) else value}")
        for key, value in settings.items()
    ]


def assign_request(mode: str, counts: Sequence[int], subscriptions: Sequence[tuple[str, bytes]]) -> str:
    """``mode``: R (a migration-ready leader of ours), P (a protected one), O (the independent oracle)."""
    parts = ["A", mode, str(len(counts)), *map(str, counts), str(len(subscriptions))]
    for member_id, wire in subscriptions:
        parts += [hex_text(member_id), hex_bytes(wire)]
    return " ".join(parts)


def assigned(answer: Answer) -> list[Assigned]:
    """Per member (in request order) what the leader gave it; fails on any other answer."""
    assert answer.status == "OK", (answer.status, answer.fields)
    out = []
    for field in answer.fields:
        topics, user_data, wire = field.split("/")
        owned = frozenset() if topics == "_" else frozenset(int(t) for t in topics.split(","))
        out.append(Assigned(owned, unhex_bytes(user_data), bytes.fromhex(wire)))
    return out


def start_client_harness(build_dir: Path, kafka_version: str = KAFKA_VERSION) -> ClientHarness:
    """The harness, or a skip (a failure in CI) when Maven, the network or a JDK is missing."""
    try:
        return ClientHarness(build_dir, kafka_version)
    except (ClientAssignorUnavailable, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", None) or str(exc)
        if os.environ.get("CI") == "true":
            pytest.fail(f"client assignor harness unavailable in CI: {detail}")
        pytest.skip(f"client assignor harness unavailable: {detail}")
