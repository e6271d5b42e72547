"""``kafka-placement group describe``: text and JSON output, exit codes (cluster access stubbed), and
its usage errors (one line, exit 2)."""

from __future__ import annotations

import json

import pytest

from kafka_placement.cli import group as group_cli
from kafka_placement.cli import main
from kafka_placement.groups.description import DescribedGroup, DescribedMember
from kafka_placement.vocabulary import TopicPartition


def _group(active: str) -> DescribedGroup:
    def m(mid: str, priority: int) -> DescribedMember:
        parts = tuple(TopicPartition("orders", p) for p in range(2)) if mid == active else ()
        return DescribedMember(
            mid,
            f"client-{mid}",
            "/127.0.0.1",
            priority=priority,
            priority_source="userData",
            topics=("orders",),
            assignment=parts,
            assignment_user_data="failover",
        )

    return DescribedGroup("billing", "classic", "Stable", "failover", (m("a", 10), m("b", 5)), {"orders": 2})


PLUGIN = ("uniform", "range", "io.kafkaplacement.broker.FailoverServerAssignor")


def _run(
    monkeypatch: pytest.MonkeyPatch,
    active: str,
    *extra: str,
    offered: dict[int, tuple[str, ...]] | None = None,
) -> int:
    monkeypatch.setattr(group_cli, "check_connection", lambda settings: {})
    monkeypatch.setattr(group_cli, "read_group", lambda settings, group_id: _group(active))
    monkeypatch.setattr(group_cli, "read_server_assignors", lambda settings: offered)
    return main(["group", "describe", "billing", "--bootstrap-server", "127.0.0.1:9", *extra])


def test_text_output_and_exit_codes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(monkeypatch, "a") == 0
    out = capsys.readouterr().out
    assert "group billing: protocol classic, state Stable, assignor failover" in out
    assert "refused by Kafka (a member's assignment userData is non-empty, KAFKA-18134)" in out
    assert "should be active: client-a (a); active: client-a (a)" in out
    assert "orders-0,orders-1" in out
    assert _run(monkeypatch, "b") == 1
    out = capsys.readouterr().out
    assert "topic orders: NOT OK: should own: client-a (a); owned by: client-b (b)" in out


def test_json_output(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(monkeypatch, "b", "--json") == 1
    out = json.loads(capsys.readouterr().out)
    assert out["protocol"] == "classic" and out["failover"]["ok"] is False
    assert [m["priority"] for m in out["members"]] == [10, 5]
    assert _run(monkeypatch, "b", "--json", "--no-failover") == 0


def test_migration_lines_and_a_cluster_without_the_plugin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(monkeypatch, "a", offered={0: PLUGIN, 1: PLUGIN}) == 0
    out = capsys.readouterr().out
    assert (
        "migration: classic; ranked by the classic group leader (failover); protected against conversion"
    ) in out
    assert _run(monkeypatch, "a", "--json", offered={0: PLUGIN, 1: ("uniform", "range")}) == 0
    migration = json.loads(capsys.readouterr().out)["migration"]
    assert migration["brokers_without_failover"] == [1]
    assert migration["advice"].startswith(
        "stay classic: broker(s) [1] do not offer the failover server assignor"
    )


def test_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["group", "describe", "billing"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--bootstrap-server" in err
    assert main(["group", "describe", "billing", "--bootstrap-server", " "]) == 2
    assert "--bootstrap-server is empty" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["group", "describe", "g", "--bootstrap-server", "x:1", "--failover", "--no-failover"])


def test_share_group_says_failover_does_not_apply(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    share = DescribedGroup("queue", "share", "Stable", None, notes=("a share group: members not read",))
    monkeypatch.setattr(group_cli, "check_connection", lambda settings: {})
    monkeypatch.setattr(group_cli, "read_group", lambda settings, group_id: share)
    assert main(["group", "describe", "queue", "--bootstrap-server", "127.0.0.1:9", "--failover"]) == 0
    out = capsys.readouterr().out
    assert "protocol share" in out and "failover does not apply to a share group" in out
    assert "no members" not in out
