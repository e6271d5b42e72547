"""Failover on Kafka's consumer group protocol (KIP-848): our assignor inside the broker.

On that protocol the broker's group coordinator assigns partitions. ``java/io/kafkaplacement/broker``
holds a ``ConsumerGroupPartitionAssignor`` (``FailoverServerAssignor``, name ``failover``) with the rule
of :func:`kafka_placement.assignment.failover.assign_failover`, and a ``ReplicaSelector`` that keeps
fetch-from-follower working for members whose ``client.rack`` carries a priority
(:mod:`kafka_placement.assignment.rack_priority`). :mod:`.build` compiles them against the published
plugin API jars of the Kafka version the user names (:mod:`.maven` fetches those); :mod:`.settings`
says what to put in the broker's and the clients' configuration.
"""
