"""kafka-placement's failover assignor for the Java consumer (classic group protocol), built for the user's
Kafka.

``java/io/kafkaplacement/client`` holds ``FailoverAssignor`` (a ``ConsumerPartitionAssignor``, protocol name
``failover``) and ``PriorityAssignor`` (``priority``): the rule of
:func:`kafka_placement.assignment.failover.assign_failover` and the userData formats of our Python members, so
Java and Python members share one group. :mod:`.build` compiles them against the published ``kafka-clients``
jar of the version the user names and says which consumer settings use them (docs/java-client-assignor.md).
"""
