"""franz-go's side of ``bench_vs_java.py``: its sticky balancers on the very group ours and Java's get.

``benchmarks/franz/`` is a small Go module (``go.mod``/``go.sum``; franz-go is a module dependency, fetched by
``go`` into its module cache, never vendored here) that calls franz-go's public API —
``kgo.StickyBalancer()`` / ``kgo.CooperativeStickyBalancer()``, each member's JoinGroup metadata made by the
balancer's own ``JoinGroupMetadata(topics, owned, generation)`` as a franz-go client sends it. It is built
here when ``go`` is installed (once per source and Go version, in the Java reference cache); without it
the franz-go rows say "not measured".

The group is written by :func:`bench_vs_java.case_input` — the same function our rows take their input
from — to a JSON file the Go program reads, and franz-go's answer is checked here, independently of both
algorithms (:func:`kafka_placement.assignment.sticky.checks.problems`): valid and KIP-54 balanced; with
history the cooperative answer must be franz-go's sticky answer on the same input minus exactly the
partitions that change owner (KIP-429), and that sticky answer valid and balanced.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FRANZ_DIR = HERE / "franz"
#: beyond this many partitions the answer is checked by sizes only (the full check builds a set of every
#: TopicPartition: ~15 s and ~1 GB at 4M)
FULL_CHECK_LIMIT = 1_000_000


def franz_binary() -> tuple[Path | None, str]:
    """(the built Go program, "") or (None, why not: the rows then say "not measured")."""
    go = shutil.which("go")
    if go is None:
        return None, "not measured (no go)"
    sources = b"".join((FRANZ_DIR / name).read_bytes() for name in ("go.mod", "go.sum", "main.go"))
    version = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, check=False).stdout
    digest = hashlib.sha256(sources + version.encode()).hexdigest()[:16]
    from kafka_placement.conformance.jars import cache_dir

    binary = cache_dir() / "bench" / f"franzbench-{digest}"
    if not binary.exists():
        binary.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            [go, "build", "-o", str(binary), "."],
            cwd=FRANZ_DIR,
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "GOFLAGS": "-mod=readonly"},
        )
        if proc.returncode != 0:
            return None, f"not measured (go build failed: {proc.stderr.strip().splitlines()[-1:]})"
    return binary, ""


def write_group(path: Path, ppt: Mapping[str, int], group: Mapping[str, Any]) -> None:
    """The group as the Go program reads it: topics with partition counts; members with their
    subscriptions, owned partitions by topic and generation."""
    members = []
    for member_id, member in group.items():
        owned: dict[str, list[int]] = {}
        for topic, partition in member.owned:
            owned.setdefault(topic, []).append(partition)
        members.append(
            {"id": member_id, "topics": list(member.topics), "owned": owned, "generation": member.generation}
        )
    with path.open("w") as f:
        json.dump({"topics": dict(ppt), "members": members}, f)


def _run(binary: Path, group_file: Path, balancer: str, reps: int, plan_file: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [str(binary), str(group_file), balancer, str(reps), str(plan_file)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"franzbench {balancer} failed:\n{proc.stderr[-3000:]}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def _as_assignment(plan_file: Path, group: Mapping[str, Any]) -> dict[str, list[Any]]:
    from kafka_placement.vocabulary import TopicPartition

    with plan_file.open() as f:
        plan: dict[str, dict[str, list[int]]] = json.load(f)
    result = {m: sorted(TopicPartition(t, p) for t, ps in plan.get(m, {}).items() for p in ps) for m in group}
    extra = set(plan) - set(group)
    if extra:
        raise SystemExit(f"franz-go assigned to members not in the group: {sorted(extra)[:5]}")
    return result


def _problems(ppt: Mapping[str, int], group: Mapping[str, Any], result: Mapping[str, list[Any]]) -> list[str]:
    """Every way ``result`` is not valid and KIP-54 balanced (sizes only past FULL_CHECK_LIMIT: every
    partition once, counts within one — enough for the equal-subscription growth rows)."""
    from kafka_placement.assignment.sticky.checks import problems

    total = sum(ppt[t] for t in {t for m in group.values() for t in m.topics} if t in ppt)
    if total <= FULL_CHECK_LIMIT:
        return problems(ppt, group, result)
    sizes = [len(v) for v in result.values()]
    distinct = len({tp for v in result.values() for tp in v}) if sum(sizes) == total else -1
    found = [] if distinct == total else [f"{sum(sizes)} assigned, {distinct} distinct, of {total}"]
    return found + ([f"sizes {min(sizes)}..{max(sizes)}"] if max(sizes) - min(sizes) > 1 else [])


def measure(
    case: str,
    strategy: str,
    ppt: Mapping[str, int],
    group: Mapping[str, Any],
    reps: int,
    ours: Mapping[str, list[Any]] | None,
) -> dict[str, Any]:
    """franz-go's times on the group and what checking its answer found (``note``); ``ours`` (our answer
    on the same group, optional) for the number of owned partitions each side keeps."""
    from kafka_placement.assignment.sticky.checks import kept

    binary, why = franz_binary()
    if binary is None:
        return {"note": why}
    previous = {m: list(member.owned) for m, member in group.items()}
    with tempfile.TemporaryDirectory() as tmp:
        group_file, plan_file = Path(tmp) / "group.json", Path(tmp) / "plan.json"
        write_group(group_file, ppt, group)
        out = _run(binary, group_file, strategy, reps, plan_file)
        result = _as_assignment(plan_file, group)
        found: list[str]
        if strategy == "cooperative-sticky":
            # the target: franz-go's eager sticky balancer on the same group; the cooperative answer is it
            # minus every partition that changes owner (to be revoked first)
            _run(binary, group_file, "sticky", 1, plan_file)
            target = _as_assignment(plan_file, group)
            found = _problems(ppt, group, target)
            owner_before = {tp: m for m, tps in previous.items() for tp in tps}
            expected = {m: [tp for tp in tps if owner_before.get(tp, m) == m] for m, tps in target.items()}
            if expected != result:
                found.append("cooperative answer is not the sticky target minus the moved partitions")
            kept_by = kept(previous, target)
        else:
            found = _problems(ppt, group, result)
            kept_by = kept(previous, result)
    out["valid"] = not found
    note = "franz-go valid, KIP-54 balanced" if not found else f"franz-go INVALID: {found[:3]}"
    if any(previous.values()) and ours is not None:
        note += f"; kept {kept_by:,} of the owned (ours {kept(previous, ours):,})"
    out["note"] = note
    return out
