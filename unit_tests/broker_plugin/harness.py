"""Drives ``java/io/kafkaplacement/harness/FailoverHarness.java``: our compiled broker plugin, handed the
group specs the broker's own ``GroupSpecImpl`` builds, in one JVM fed line by line."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from kafka_placement.broker_plugin.build import build_jar
from kafka_placement.broker_plugin.maven import REFERENCE, BrokerPluginUnavailable, resolve
from kafka_placement.versions import KAFKA_VERSION

SOURCE_ROOT = Path(__file__).with_name("java")


def hex_text(text: str | None) -> str:
    if text is None:
        return "-"
    return text.encode().hex() or "="


def unhex_text(text: str) -> str | None:
    if text == "-":
        return None
    return "" if text == "=" else bytes.fromhex(text).decode()


class Harness:
    """One JVM answering requests; close() ends it."""

    def __init__(self, build_dir: Path) -> None:
        javac, java = shutil.which("javac"), shutil.which("java")
        if javac is None or java is None:
            raise BrokerPluginUnavailable("no JDK (javac/java) on PATH")
        class_path = [*map(str, resolve(KAFKA_VERSION, REFERENCE)), str(build_jar(KAFKA_VERSION))]
        classes = build_dir / "harness-classes"
        sources = [str(p) for p in SOURCE_ROOT.rglob("*.java")]
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
                *sources,
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        )
        self._process = subprocess.Popen(
            [
                java,
                "-Xmx512m",
                "-cp",
                os.pathsep.join([*class_path, str(classes)]),
                "io.kafkaplacement.harness.FailoverHarness",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
        )

    def ask(self, line: str) -> str:
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(line + "\n")
        self._process.stdin.flush()
        answer = self._process.stdout.readline()
        assert answer, "the Java harness ended"
        return answer.rstrip("\n")

    def ask_many(self, lines: Sequence[str]) -> list[str]:
        """Answers to ``lines``, pipelined: a thread writes while this one reads (no pipe can fill up)."""
        assert self._process.stdin is not None and self._process.stdout is not None
        stdin, stdout = self._process.stdin, self._process.stdout

        def write() -> None:
            for line in lines:
                stdin.write(line + "\n")
            stdin.flush()

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        answers = [stdout.readline().rstrip("\n") for _ in lines]
        writer.join(timeout=60)
        assert all(answers), "the Java harness ended"
        return answers

    def assign(
        self,
        counts: Sequence[int],
        members: Sequence[tuple[str, str | None, Sequence[int]]],
        *,
        homogeneous: bool,
    ) -> list[frozenset[int]] | str:
        """Per member (in order) the topic indexes it owns whole, or the harness's complaint."""
        return owners(self.ask(assign_request(counts, members, homogeneous=homogeneous)))

    def parse(self, value: str | None) -> tuple[int | None, str | None, bool]:
        return parsed(self.ask(f"P {hex_text(value)}"))

    def select(self, value: str | None) -> int:
        return int(self.ask(f"S {hex_text(value)}"))

    def load_properties(self, text: str) -> dict[str | None, str | None]:
        """What ``java.util.Properties.load`` reads from ``text`` (ISO-8859-1, as Kafka's tools do)."""
        answer = self.ask(f"L {hex_text(text)}")
        if answer == "EMPTY":
            return {}
        return dict(map(unhex_text, pair.split(":")) for pair in answer.split(" "))  # type: ignore[misc]

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait(timeout=30)


def assign_request(
    counts: Sequence[int], members: Sequence[tuple[str, str | None, Sequence[int]]], *, homogeneous: bool
) -> str:
    parts = ["A", "H" if homogeneous else "X", str(len(counts)), *map(str, counts), str(len(members))]
    for member_id, rack, topics in members:
        parts += [hex_text(member_id), hex_text(rack), str(len(topics)), *map(str, topics)]
    return " ".join(parts)


def owners(answer: str) -> list[frozenset[int]] | str:
    """Per member (in request order) the topic indexes it owns whole, or the harness's complaint."""
    if answer and not answer.endswith(";"):
        return answer
    return [frozenset(int(t) for t in chunk.split(",") if t) for chunk in answer.split(";")[:-1]]


def parsed(answer: str) -> tuple[int | None, str | None, bool]:
    """(priority, rack, has a problem) from a ``P`` answer."""
    head, rack, problem = answer.split(" ")
    return (None if head == "none" else int(head)), unhex_text(rack), problem == "1"


def start_harness(build_dir: Path) -> Harness:
    """The harness, or a skip (a failure in CI) when Maven, the network or a JDK is missing."""
    try:
        return Harness(build_dir)
    except (BrokerPluginUnavailable, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", None) or str(exc)
        if os.environ.get("CI") == "true":
            pytest.fail(f"broker plugin harness unavailable in CI: {detail}")
        pytest.skip(f"broker plugin harness unavailable: {detail}")
