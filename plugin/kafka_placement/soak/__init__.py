"""The fault-injection soak: sustained load through our partitioners and assignors while brokers and
group members are killed, paused and restarted on a seeded schedule, then checked against invariants.

Sans-I/O core: :mod:`~kafka_placement.soak.events` (what producers and members log) and
:mod:`~kafka_placement.soak.invariants` (lost, duplicated, double-owned, misplaced, standby consumption,
failover times), :mod:`~kafka_placement.soak.poll_order` (Jepsen's nonmonotonic polls, poll skips and
inconsistent offsets) and the running counts of :mod:`~kafka_placement.soak.drain` import no Kafka client.
The live parts (load, member processes, faults, the rig, the runner's stages) are adapters.
"""
