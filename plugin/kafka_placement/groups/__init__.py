"""Consumer groups, sans-I/O: as the broker describes them, what failover means for them, and a member's
offset commits (no Kafka client imported).

* :mod:`~kafka_placement.groups.description`: a described group and its members, in our vocabulary,
  built by the client adapters (``clients/kafka_python/group_description.py`` for classic groups,
  ``clients/kafka_python/consumer_group_describe.py`` for consumer-protocol groups, with
  ``clients/confluent/group_description.py`` as the fallback that shows no racks);
* :mod:`~kafka_placement.groups.failover_check`: which member should be active by priority, which is,
  and whether the group's partitions are on its highest-priority live member;
* :mod:`~kafka_placement.groups.commit_queue`: a member's offset commits queued and coalesced per
  partition, one OffsetCommit in flight (driven by ``clients/confluent/offsets.py``).
"""
