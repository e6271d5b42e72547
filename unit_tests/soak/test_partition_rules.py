"""The iptables rules of a broker partition: what they match (loopback only, the broker's listener ports,
its container's cgroup), their tag, and finding them again in ``iptables -S`` output (lines iptables
1.8.9 (nf_tables) printed here for rules added from these argv lists)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.soak.partition_rules import (
    cgroup_v2_path,
    partition_rules,
    rule_tag,
    tagged_rule_deletions,
)

CONTAINER = "/docker/3c51d0b4ceeb83ca4e58edf57d9179b027aede3c6f02a29c32f441aed256b53e"
TAG = "kafka-placement-soak/25252"


def test_a_full_partition_drops_what_reaches_its_ports_and_what_its_cgroup_sends_on_loopback() -> None:
    rules = partition_rules([47999], CONTAINER, TAG)
    assert rules.isolation == "full"
    assert rules.add == (
        (
            "iptables",
            "-w",
            "-I",
            "INPUT",
            "-i",
            "lo",
            "-d",
            "127.0.0.0/8",
            "-p",
            "tcp",
            "--dport",
            "47999",
            "-m",
            "comment",
            "--comment",
            TAG,
            "-j",
            "DROP",
        ),
        (
            "iptables",
            "-w",
            "-I",
            "OUTPUT",
            "-o",
            "lo",
            "-d",
            "127.0.0.0/8",
            "-m",
            "cgroup",
            "--path",
            CONTAINER,
            "-m",
            "comment",
            "--comment",
            TAG,
            "-j",
            "DROP",
        ),
    )
    assert rules.delete == tuple((*argv[:2], "-D", *argv[3:]) for argv in rules.add)


def test_without_a_cgroup_only_the_ports_are_cut_each_once() -> None:
    rules = partition_rules([9093, 9092, 9093], None, TAG)
    assert rules.isolation == "ports"
    assert [argv[argv.index("--dport") + 1] for argv in rules.add] == ["9092", "9093"]
    assert all(argv[3:6] == ("INPUT", "-i", "lo") for argv in rules.add)


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "",
        "docker/x",
        "/docker//x",
        "/docker/../x",
        "/docker/./x",
        "/docker/x y",
        "/docker/x\n",
        '/docker/"x',
        "/docker/x\n-A OUTPUT",
        "/docker/x/",
    ],
)
def test_the_root_cgroup_and_odd_paths_are_refused(path: str) -> None:
    with pytest.raises(InvalidArgumentError, match="cgroup path"):
        partition_rules([9092], path, TAG)


def test_bad_ports_and_tags_are_refused() -> None:
    with pytest.raises(InvalidArgumentError, match="at least one listener port"):
        partition_rules([], None, TAG)
    with pytest.raises(InvalidArgumentError, match=r"port 65536 out of range \[1, 65535\]"):
        partition_rules([65536], None, TAG)
    with pytest.raises(InvalidArgumentError, match="is not kafka-placement-soak/<pid>"):
        partition_rules([9092], None, "kafka-placement-soak/x")
    with pytest.raises(InvalidArgumentError, match="pid must be >= 1"):
        rule_tag(0)
    assert rule_tag(25252) == TAG


@given(st.text(min_size=1, max_size=40))
def test_any_path_with_a_character_outside_the_safe_set_is_refused(tail: str) -> None:
    path = "/docker/" + tail
    safe = all(c.isascii() and (c.isalnum() or c in "_.:@-/") for c in tail)
    if safe and all(part not in ("", ".", "..") for part in path.split("/")[1:]):
        assert partition_rules([9092], path, TAG).isolation == "full"
    else:
        with pytest.raises(InvalidArgumentError):
            partition_rules([9092], path, TAG)


def test_the_cgroup_v2_path_of_a_container_hybrid_pure_v2_and_none() -> None:
    hybrid = "\n".join(
        [f"{n}:{c}:{CONTAINER}" for n, c in ((9, "name=systemd"), (8, "pids"), (4, "memory"), (1, "cpu"))]
        + [f"0::{CONTAINER}"]
    )
    assert cgroup_v2_path(hybrid + "\n") == CONTAINER
    scope = "/system.slice/docker-3c51d0b4.scope"
    assert cgroup_v2_path(f"0::{scope}\n") == scope
    assert cgroup_v2_path("0::/\n") is None  # the root holds every process of the host
    assert cgroup_v2_path(f"4:memory:{CONTAINER}\n1:cpu:{CONTAINER}\n") is None  # v1 only


OTHER = "kafka-placement-soak/777"
LISTING = f"""-P INPUT ACCEPT
-P FORWARD ACCEPT
-P OUTPUT ACCEPT
-A INPUT -d 127.0.0.0/8 -i lo -p tcp -m tcp --dport 47999 -m comment --comment "{TAG}" -j DROP
-A INPUT -p tcp -m tcp --dport 22 -m comment --comment "ssh kafka-placement-soak/25252 note" -j ACCEPT
-A INPUT -d 127.0.0.0/8 -i lo -p tcp -m tcp --dport 48001 -m comment --comment "{OTHER}" -j DROP
-A INPUT -i lo -m comment --comment "my-kafka-placement-soak/25252" -j DROP
-A INPUT -i lo -m comment --comment "kafka-placement-soak/25252x" -j DROP
-A OUTPUT -d 127.0.0.0/8 -o lo -m cgroup --path "{CONTAINER}" -m comment --comment "{TAG}" -j DROP
"""


def test_tagged_rules_are_found_by_exact_tag_and_pid_and_nothing_else() -> None:
    ours = tagged_rule_deletions(LISTING, lambda pid: pid == 25252)
    assert ours == [
        (
            "iptables",
            "-w",
            "-D",
            "INPUT",
            "-d",
            "127.0.0.0/8",
            "-i",
            "lo",
            "-p",
            "tcp",
            "-m",
            "tcp",
            "--dport",
            "47999",
            "-m",
            "comment",
            "--comment",
            TAG,
            "-j",
            "DROP",
        ),
        (
            "iptables",
            "-w",
            "-D",
            "OUTPUT",
            "-d",
            "127.0.0.0/8",
            "-o",
            "lo",
            "-m",
            "cgroup",
            "--path",
            CONTAINER,
            "-m",
            "comment",
            "--comment",
            TAG,
            "-j",
            "DROP",
        ),
    ]
    assert [
        argv[argv.index("--dport") + 1] for argv in tagged_rule_deletions(LISTING, lambda p: p == 777)
    ] == ["48001"]
    assert len(tagged_rule_deletions(LISTING, lambda _pid: True)) == 3
    assert tagged_rule_deletions(LISTING, lambda _pid: False) == []
    assert tagged_rule_deletions('-A INPUT -m comment --comment "kafka-placement-soak/1 -j DROP', bool) == []
