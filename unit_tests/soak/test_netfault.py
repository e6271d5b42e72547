"""The iptables adapter of the soak's network partition, against a stand-in for iptables that keeps its
rules in memory and lists them the way ``iptables -S`` does: which rules it adds, that it takes back
exactly its own (also on SIGTERM), sweeps those of dead runs only, and says why it cannot work."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from kafka_placement.soak.netfault import NetworkPartitions

REFUSED = "iptables v1.8.9 (nf_tables): Couldn't load match"
NO_RULESET = "iptables v1.8.9 (nf_tables): Could not fetch rule set"
CONTAINER = "/docker/3c51d0b4ceeb83ca4e58edf57d9179b027aede3c6f02a29c32f441aed256b53e"


class FakeIptables:
    """``-I``/``-D``/``-S``/``-L`` of the filter table; refuses any argv containing a word of ``refuse``."""

    def __init__(self, refuse: Sequence[str] = ()) -> None:
        self.rules: list[tuple[str, ...]] = []  # (chain, *spec)
        self.refuse = refuse
        self.calls: list[tuple[str, ...]] = []

    def __call__(self, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        argv = tuple(argv)
        self.calls.append(argv)
        assert argv[:2] == ("iptables", "-w")
        op, rule = argv[2], argv[3:]
        if op == "-L":
            return subprocess.CompletedProcess(argv, 0, "", "")
        if op == "-S":
            rules = "".join(f"-A {shlex.join(r)}\n" for r in self.rules)
            return subprocess.CompletedProcess(argv, 0, "-P INPUT ACCEPT\n-P OUTPUT ACCEPT\n" + rules, "")
        if any(word in argv for word in self.refuse):
            return subprocess.CompletedProcess(argv, 2, "", REFUSED)
        if op == "-I":
            self.rules.insert(0, rule)
        elif op == "-D" and rule in self.rules:
            self.rules.remove(rule)
        else:
            return subprocess.CompletedProcess(argv, 1, "", "iptables: Bad rule")
        return subprocess.CompletedProcess(argv, 0, "", "")


def proc_with(tmp_path: Path, pid: int, text: str) -> Path:
    (tmp_path / str(pid)).mkdir()
    (tmp_path / str(pid) / "cgroup").write_text(text)
    return tmp_path


def dead_pid() -> int:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait(30)
    return done.pid


def test_cut_isolates_by_port_and_cgroup_and_heal_removes_only_its_own(tmp_path: Path) -> None:
    iptables = FakeIptables()
    foreign = ("INPUT", "-p", "tcp", "--dport", "22", "-j", "ACCEPT")
    other_run = (
        "INPUT",
        "-i",
        "lo",
        "-p",
        "tcp",
        "--dport",
        "1",
        "-m",
        "comment",
        "--comment",
        f"kafka-placement-soak/{os.getppid()}",
        "-j",
        "DROP",
    )  # a live process's rule
    iptables.rules += [foreign, other_run]
    proc = proc_with(tmp_path, 77, f"1:cpu:/x\n0::{CONTAINER}\n")
    network = NetworkPartitions(iptables, pid=4242, proc_root=proc)
    rules = network.cut([39092], 77)
    assert rules.isolation == "full"
    added = [r for r in iptables.rules if "kafka-placement-soak/4242" in r]
    assert added == [argv[3:] for argv in reversed(rules.add)]
    output = next(r for r in iptables.rules if "OUTPUT" in r)
    assert output[output.index("--path") + 1] == CONTAINER
    assert len(network.left()) == 2
    assert network.heal() == 2
    assert network.left() == [] and iptables.rules == [foreign, other_run]


def test_without_cgroup_v2_or_a_refused_cgroup_match_the_partition_is_by_port(tmp_path: Path) -> None:
    root_only = NetworkPartitions(FakeIptables(), pid=4242, proc_root=proc_with(tmp_path, 5, "0::/\n"))
    assert root_only.cut([39092], 5).isolation == "ports"
    no_container = NetworkPartitions(FakeIptables(), pid=4242, proc_root=tmp_path)
    assert no_container.cut([39092], None).isolation == "ports"
    assert no_container.cut([39093], 999999).isolation == "ports"  # no such /proc entry
    refusing = FakeIptables(refuse=["cgroup"])
    network = NetworkPartitions(refusing, pid=4242, proc_root=proc_with(tmp_path, 6, f"0::{CONTAINER}\n"))
    rules = network.cut([39092], 6)
    assert rules.isolation == "ports"
    assert [r[:1] + r[r.index("--dport") :][:2] for r in refusing.rules] == [("INPUT", "--dport", "39092")]
    network.heal()
    assert refusing.rules == []


def test_a_refused_port_rule_raises_with_nothing_left(tmp_path: Path) -> None:
    iptables = FakeIptables(refuse=["39093"])
    network = NetworkPartitions(iptables, pid=4242, proc_root=tmp_path)
    with pytest.raises(OSError, match=r"exited 2: .*Couldn't load match"):
        network.cut([39092, 39093], None)
    assert iptables.rules == []


def test_the_sweep_removes_rules_of_dead_runs_only() -> None:
    iptables = FakeIptables()
    dead, alive = dead_pid(), os.getppid()
    for pid in (dead, alive, 4242):
        iptables.rules.append(
            (
                "INPUT",
                "-i",
                "lo",
                "-p",
                "tcp",
                "--dport",
                "1",
                "-m",
                "comment",
                "--comment",
                f"kafka-placement-soak/{pid}",
                "-j",
                "DROP",
            )
        )
    assert NetworkPartitions(iptables, pid=4242).sweep_stale() == 1
    assert [r[-3] for r in iptables.rules] == [f"kafka-placement-soak/{alive}", "kafka-placement-soak/4242"]


def test_sigterm_inside_guarded_heals_then_exits_and_the_old_handler_comes_back(tmp_path: Path) -> None:
    iptables = FakeIptables()
    network = NetworkPartitions(iptables, pid=4242, proc_root=tmp_path)
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as exited, network.guarded():
        network.cut([39092], None)
        assert len(iptables.rules) == 1
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler runs at the next bytecode; the sleep is interrupted by it
    assert exited.value.code == 128 + signal.SIGTERM
    assert iptables.rules == []
    assert signal.getsignal(signal.SIGTERM) == before


def test_leaving_guarded_by_an_exception_heals(tmp_path: Path) -> None:
    iptables = FakeIptables()
    network = NetworkPartitions(iptables, pid=4242, proc_root=tmp_path)
    with pytest.raises(KeyboardInterrupt), network.guarded():
        network.cut([39092], None)
        raise KeyboardInterrupt
    assert iptables.rules == []


def test_a_soak_process_killed_by_sigterm_leaves_no_rule(tmp_path: Path) -> None:
    """A separate process (the soak's situation: SIGTERM from outside while a partition is held); its
    stand-in iptables keeps the rules in a file."""
    state = tmp_path / "rules.txt"
    script = f"""
import sys, time, shlex, subprocess
sys.path.insert(0, {str(Path(__file__).parent)!r})
from test_netfault import FakeIptables
from kafka_placement.soak.netfault import NetworkPartitions
fake = FakeIptables()
def run(argv):
    done = fake(argv)
    open({str(state)!r}, "w").write("".join(shlex.join(r) + "\\n" for r in fake.rules))
    return done
network = NetworkPartitions(run, proc_root={str(tmp_path)!r})
with network.guarded():
    network.cut([39092], None)
    print("cut", flush=True)
    time.sleep(60)
"""
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "cut"
    assert "--dport 39092" in state.read_text()
    child.send_signal(signal.SIGTERM)
    assert child.wait(30) == 128 + signal.SIGTERM
    assert state.read_text() == ""


def test_unavailable_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert NetworkPartitions(FakeIptables()).unavailable() == (
        "iptables needs root (this process runs as uid 1000)"
    )
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr("shutil.which", lambda _name: "/usr/sbin/iptables")

    def broken(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(argv, 4, "", NO_RULESET)

    assert NetworkPartitions(broken).unavailable() == (
        "iptables -L exited 4: iptables v1.8.9 (nf_tables): Could not fetch rule set"
    )
    assert NetworkPartitions(FakeIptables()).unavailable() is None
    monkeypatch.setattr("shutil.which", lambda _name: None)
    assert NetworkPartitions(FakeIptables()).unavailable() == "no iptables on PATH"
