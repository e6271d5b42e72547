package io.kafkaplacement.client;

/**
 * {@link FailoverAssignor} under the protocol name {@code priority} (kafka_placement's alias of {@code failover}):
 * for groups whose Python members use {@code PriorityAssignor}. Members must share the protocol name to share a group.
 */
public class PriorityAssignor extends FailoverAssignor {
    @Override
    public String name() {
        return "priority";
    }
}
