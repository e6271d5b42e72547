"""Leftover removal: only clusters whose owning process is gone (never persistent ones)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from kafka_placement.testing.engine import LABEL, OWNER_LABEL, remove_leftovers, remove_orphans


class _Container:
    def __init__(self, name: str, labels: dict[str, str], store: list[_Container]) -> None:
        self.name = name
        self.labels = labels
        self._store = store

    def remove(self, force: bool = False, v: bool = False) -> None:
        assert force
        self._store.remove(self)


class _Containers:
    def __init__(self) -> None:
        self.items: list[_Container] = []

    def add(self, cluster: str, owner: str, n: int = 2) -> None:
        for i in range(n):
            self.items.append(_Container(f"{cluster}-{i}", {LABEL: cluster, OWNER_LABEL: owner}, self.items))

    def list(self, all: bool, filters: dict[str, str]) -> list[_Container]:
        key, _, value = filters["label"].partition("=")
        return [c for c in self.items if key in c.labels and (not value or c.labels[key] == value)]


class _Client:
    def __init__(self) -> None:
        self.containers = _Containers()


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_only_orphans_are_removed() -> None:
    client: Any = _Client()
    client.containers.add("kp-dead", str(_dead_pid()))
    client.containers.add("kp-alive", str(os.getpid()))
    client.containers.add("kp-dev-1", "")  # persistent (`up`)
    assert remove_orphans(client) == ["kp-dead"]
    assert sorted({c.labels[LABEL] for c in client.containers.items}) == ["kp-alive", "kp-dev-1"]
    assert remove_orphans(client) == []


def test_remove_leftovers_by_name_and_all() -> None:
    client: Any = _Client()
    client.containers.add("a", "", 3)
    client.containers.add("b", "", 2)
    assert sorted(remove_leftovers(client, "a")) == ["a-0", "a-1", "a-2"]
    assert len(client.containers.items) == 2
    assert sorted(remove_leftovers(client)) == ["b-0", "b-1"]
    assert client.containers.items == []
