"""The baseline: Cruise Control's documented greedy (REFERENCE.md, "Load-aware rebalancing"), on
our load model and our bands, for the benchmark only.

Goals one after another in Cruise Control's default order restricted to ours (DiskUsageDistribution,
NetworkInboundUsageDistribution, NetworkOutboundUsageDistribution, LeaderReplicaDistribution,
LeaderBytesInDistribution); for each, brokers above the band (highest first) shed load and brokers
below it (lowest first) take load; leadership moves are tried before replica moves; candidate
replicas largest first (by the goal's resource), destinations least loaded first; a move must keep
the rack rule, keep the destination within the goal's upper end, and not push any broker out of the
band of a goal already optimized. No term for bytes moved.
"""

from __future__ import annotations

import numpy as np

from kafka_placement.replicas.loads.goals import Goals, make_bands
from kafka_placement.replicas.loads.model import (
    BYTES_IN,
    BYTES_OUT,
    DISK,
    LEADER_BYTES_IN,
    LEADERS,
    LoadModel,
    broker_loads,
)

ORDER = (DISK, BYTES_IN, BYTES_OUT, LEADERS, LEADER_BYTES_IN)
LEADER_SIDE = (BYTES_OUT, LEADERS, LEADER_BYTES_IN)


def baseline_plan(model: LoadModel, goals: Goals | None = None, max_tries: int = 400) -> np.ndarray:
    """The target replica matrix (broker indices, leader first)."""
    goals = goals or Goals()
    reps = model.replicas.copy()
    loads = broker_loads(model)
    bands = make_bands(loads, model.capacity, np.zeros(model.num_brokers, dtype=bool), goals)
    lower, upper = bands.lower[0], bands.upper[0]
    rack, _ = model.rack_index()
    n = model.num_brokers
    hosted = [set(np.flatnonzero((reps == b).any(axis=1)).tolist()) for b in range(n)]

    def carried(p: int, leading: bool) -> np.ndarray:
        lead = 1.0 if leading else 0.0
        return np.array(
            [model.size[p], model.bytes_in[p], model.bytes_out[p] * lead, model.bytes_in[p] * lead, lead]
        )

    def keeps_done(b: int, new: np.ndarray, done: list[int]) -> bool:
        return all(
            lower[g] - 1e-9 <= new[g] <= upper[g] + 1e-9
            or not (lower[g] - 1e-9 <= loads[b, g] <= upper[g] + 1e-9)
            for g in done
        )

    def rack_ok(p: int, src: int, dst: int) -> bool:
        row = [b for b in reps[p].tolist() if b >= 0]
        if dst in row:
            return False
        before = len({rack[b] for b in row})
        after = len({rack[b] for b in row if b != src} | {rack[dst]})
        return after >= before

    def move(p: int, src: int, dst: int) -> None:
        row = reps[p]
        pos = row.tolist().index(src)
        change = carried(p, pos == 0)
        row[pos] = dst
        loads[src] -= change
        loads[dst] += change
        hosted[src].discard(p)
        hosted[dst].add(p)

    def lead(p: int, new: int) -> None:
        row = reps[p]
        old = int(row[0])
        pos = row.tolist().index(new)
        row[0], row[pos] = new, old
        change = carried(p, True) - carried(p, False)
        loads[old] -= change
        loads[new] += change

    done: list[int] = []
    for g in ORDER:
        if g not in [RESOURCES_INDEX[r] for r in goals.soft]:
            continue
        for _ in range(4):  # passes
            changed = False
            for b in sorted(range(n), key=lambda x: -loads[x, g]):
                tries = 0
                while loads[b, g] > upper[g] and tries < max_tries:
                    tries += 1
                    acted = False
                    if g in LEADER_SIDE:
                        led = [p for p in hosted[b] if reps[p, 0] == b]
                        for p in sorted(led, key=lambda q: -carried(q, True)[g])[:max_tries]:
                            for f in sorted(
                                (int(x) for x in reps[p, 1:] if x >= 0), key=lambda x: loads[x, g]
                            ):
                                delta = carried(p, True) - carried(p, False)
                                if (
                                    loads[f, g] + delta[g] <= upper[g]
                                    and keeps_done(f, loads[f] + delta, done)
                                    and keeps_done(b, loads[b] - delta, done)
                                ):
                                    lead(p, f)
                                    acted = True
                                    break
                            if acted:
                                break
                    if not acted:
                        for p in sorted(hosted[b], key=lambda q: (-carried(q, reps[q, 0] == b)[g], q))[
                            :max_tries
                        ]:
                            delta = carried(p, reps[p, 0] == b)
                            if delta[g] <= 0:
                                break
                            for d in sorted(range(n), key=lambda x: loads[x, g]):
                                if d == b or loads[d, g] + delta[g] > upper[g] or not rack_ok(p, b, d):
                                    continue
                                if keeps_done(d, loads[d] + delta, done) and keeps_done(
                                    b, loads[b] - delta, done
                                ):
                                    move(p, b, d)
                                    acted = True
                                    break
                            if acted:
                                break
                    if not acted:
                        break
                    changed = True
            for b in sorted(range(n), key=lambda x: loads[x, g]):
                tries = 0
                while loads[b, g] < lower[g] and tries < max_tries:
                    tries += 1
                    acted = False
                    for s in sorted(range(n), key=lambda x: -loads[x, g]):
                        if s == b or loads[s, g] <= lower[g]:
                            continue
                        for p in sorted(hosted[s], key=lambda q: (-carried(q, reps[q, 0] == s)[g], q))[
                            :max_tries
                        ]:
                            delta = carried(p, reps[p, 0] == s)
                            if (
                                delta[g] <= 0
                                or loads[b, g] + delta[g] > upper[g]
                                or loads[s, g] - delta[g] < lower[g]
                                or not rack_ok(p, s, b)
                            ):
                                continue
                            if keeps_done(b, loads[b] + delta, done) and keeps_done(
                                s, loads[s] - delta, done
                            ):
                                move(p, s, b)
                                acted = True
                                break
                        if acted:
                            break
                    if not acted:
                        break
                    changed = True
            if not changed:
                break
        done.append(g)
    return reps


RESOURCES_INDEX = {
    "disk": DISK,
    "bytes_in": BYTES_IN,
    "bytes_out": BYTES_OUT,
    "leader_bytes_in": LEADER_BYTES_IN,
    "leaders": LEADERS,
}
