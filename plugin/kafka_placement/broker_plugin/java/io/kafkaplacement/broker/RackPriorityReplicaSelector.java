package io.kafkaplacement.broker;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.replica.ClientMetadata;
import org.apache.kafka.common.replica.PartitionView;
import org.apache.kafka.common.replica.RackAwareReplicaSelector;
import org.apache.kafka.common.replica.ReplicaSelector;
import org.apache.kafka.common.replica.ReplicaView;
import org.apache.kafka.common.security.auth.KafkaPrincipal;

import java.net.InetAddress;
import java.util.Optional;

/**
 * Fetch-from-follower (KIP-392) for members whose {@code client.rack} also carries a failover priority: the
 * {@code "#priority=<n>"} suffix is taken off and Kafka's own {@link RackAwareReplicaSelector} chooses, so a
 * member in rack {@code "az1#priority=10"} reads from a replica in rack {@code "az1"} exactly as a member in
 * {@code "az1"} would. Set as the broker's {@code replica.selector.class}.
 */
public final class RackPriorityReplicaSelector implements ReplicaSelector {
    private final RackAwareReplicaSelector rackAware = new RackAwareReplicaSelector();

    @Override
    public Optional<ReplicaView> select(TopicPartition topicPartition, ClientMetadata clientMetadata,
                                        PartitionView partitionView) {
        String rackId = clientMetadata.rackId();
        if (rackId == null || rackId.indexOf('#') < 0) {
            return rackAware.select(topicPartition, clientMetadata, partitionView);
        }
        String rack = RackPriority.parse(rackId).rack();
        return rackAware.select(topicPartition, new WithRack(clientMetadata, rack), partitionView);
    }

    /** The client's metadata with its real rack (the empty string when it has none: the leader serves it). */
    private static final class WithRack implements ClientMetadata {
        private final ClientMetadata client;
        private final String rack;

        WithRack(ClientMetadata client, String rack) {
            this.client = client;
            this.rack = rack == null ? "" : rack;
        }

        @Override
        public String rackId() {
            return rack;
        }

        @Override
        public String clientId() {
            return client.clientId();
        }

        @Override
        public InetAddress clientAddress() {
            return client.clientAddress();
        }

        @Override
        public KafkaPrincipal principal() {
            return client.principal();
        }

        @Override
        public String listenerName() {
            return client.listenerName();
        }
    }
}
