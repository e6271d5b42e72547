/*
 * kafka-placement conformance helper (our own code): the active/passive failover/priority assignor
 * written against Kafka's Java ConsumerPartitionAssignor API, independently of the Python one, for
 * the mixed Java/Python live group tests. Protocol name "failover"; each member's priority is a
 * 4-byte big-endian int in its subscription userData (config "failover.priority"). Per topic, the
 * subscriber with the highest priority gets every partition; ties go to the smallest member id
 * (String.compareTo); a member without a priority ranks below every number.
 */
package io.kafkaplacement.conformance.live;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.TopicPartition;

public final class FailoverAssignor implements ConsumerPartitionAssignor, Configurable {
    public static final String PRIORITY_CONFIG = "failover.priority";
    private Integer priority;

    @Override
    public void configure(Map<String, ?> configs) {
        Object value = configs.get(PRIORITY_CONFIG);
        priority = value == null ? null : Integer.valueOf(value.toString());
    }

    @Override
    public String name() {
        return "failover";
    }

    @Override
    public ByteBuffer subscriptionUserData(Set<String> topics) {
        if (priority == null) {
            return null;
        }
        ByteBuffer buffer = ByteBuffer.allocate(4);
        buffer.putInt(priority);
        buffer.flip();
        return buffer;
    }

    private static Integer priorityOf(Subscription subscription) {
        ByteBuffer data = subscription.userData();
        if (data == null || data.remaining() < 4) {
            return null;
        }
        return data.duplicate().getInt();
    }

    /** True when member a is preferred over member b. */
    private static boolean better(String a, Integer pa, String b, Integer pb) {
        if (pa != null && pb == null) {
            return true;
        }
        if (pa == null && pb != null) {
            return false;
        }
        if (pa != null && !pa.equals(pb)) {
            return pa > pb;
        }
        return a.compareTo(b) < 0;
    }

    @Override
    public GroupAssignment assign(Cluster metadata, GroupSubscription groupSubscription) {
        Map<String, Subscription> subscriptions = groupSubscription.groupSubscription();
        Map<String, List<TopicPartition>> assigned = new HashMap<>();
        Set<String> topics = new TreeSet<>();
        for (Map.Entry<String, Subscription> entry : subscriptions.entrySet()) {
            assigned.put(entry.getKey(), new ArrayList<>());
            topics.addAll(entry.getValue().topics());
        }
        for (String topic : topics) {
            Integer count = metadata.partitionCountForTopic(topic);
            if (count == null || count <= 0) {
                continue;
            }
            String owner = null;
            Integer ownerPriority = null;
            for (Map.Entry<String, Subscription> entry : subscriptions.entrySet()) {
                if (!entry.getValue().topics().contains(topic)) {
                    continue;
                }
                Integer p = priorityOf(entry.getValue());
                if (owner == null || better(entry.getKey(), p, owner, ownerPriority)) {
                    owner = entry.getKey();
                    ownerPriority = p;
                }
            }
            for (int partition = 0; partition < count; partition++) {
                assigned.get(owner).add(new TopicPartition(topic, partition));
            }
        }
        Map<String, Assignment> result = new HashMap<>();
        for (Map.Entry<String, List<TopicPartition>> entry : assigned.entrySet()) {
            result.put(entry.getKey(), new Assignment(entry.getValue()));
        }
        return new GroupAssignment(result);
    }
}
