/*
 * kafka-placement benchmark (our own code): the broker-side failover assignor next to Kafka's own
 * UniformAssignor and RangeAssignor (kafka-group-coordinator), on the same group specs, in one JVM.
 *
 * Usage: ServerAssignorBench <members> <topics> <partitionsPerTopic> <homogeneous|heterogeneous> <seconds>
 * Each member's client.rack is "#priority=<i>"; no member owns anything yet (a fresh target assignment,
 * the coordinator's worst case). Heterogeneous: member i subscribes to the topics t with (t + i) % 2 == 0
 * plus topic 0. Per assignor: warm-up calls for a third of the time budget, then timed calls for the rest;
 * prints one JSON line {"assignor":..,"median_ms":..,"min_ms":..,"calls":..,"assigned":..} per assignor.
 */
package io.kafkaplacement.bench;

import io.kafkaplacement.broker.FailoverServerAssignor;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

public final class ServerAssignorBench {
    public static void main(String[] args) {
        int members = Integer.parseInt(args[0]);
        int topics = Integer.parseInt(args[1]);
        int perTopic = Integer.parseInt(args[2]);
        boolean homogeneous = args[3].equals("homogeneous");
        double seconds = Double.parseDouble(args[4]);

        List<Uuid> topicIds = new ArrayList<>();
        Map<Uuid, Integer> counts = new HashMap<>();
        java.util.Random random = new java.util.Random(42);  // ids like the broker's random ones
        for (int t = 0; t < topics; t++) {
            Uuid id = new Uuid(random.nextLong(), random.nextLong());
            topicIds.add(id);
            counts.put(id, perTopic);
        }
        Map<String, MemberSubscriptionAndAssignmentImpl> specMembers = new HashMap<>();
        Set<Uuid> all = new HashSet<>(topicIds);
        for (int i = 0; i < members; i++) {
            Set<Uuid> subscribed = all;
            if (!homogeneous) {
                subscribed = new HashSet<>();
                subscribed.add(topicIds.get(0));
                for (int t = 0; t < topics; t++) {
                    if ((t + i) % 2 == 0) {
                        subscribed.add(topicIds.get(t));
                    }
                }
            }
            specMembers.put(String.format("member-%05d", i), new MemberSubscriptionAndAssignmentImpl(
                Optional.of("#priority=" + i), Optional.empty(), subscribed, Assignment.EMPTY));
        }
        GroupSpec spec = new GroupSpecImpl(specMembers,
            homogeneous ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS, Collections.emptyMap());
        SubscribedTopicDescriber describer = new SubscribedTopicDescriber() {
            @Override
            public int numPartitions(Uuid topicId) {
                return counts.getOrDefault(topicId, -1);
            }

            @Override
            public Set<String> racksForPartition(Uuid topicId, int partition) {
                return Collections.emptySet();
            }
        };
        ConsumerGroupPartitionAssignor[] assignors = {
            new FailoverServerAssignor(), new UniformAssignor(), new RangeAssignor()};
        for (ConsumerGroupPartitionAssignor assignor : assignors) {
            long budget = (long) (seconds * 1e9);
            long start = System.nanoTime();
            long assigned = 0;
            while (System.nanoTime() - start < budget / 3) {
                assigned = count(assignor.assign(spec, describer));
            }
            List<Long> times = new ArrayList<>();
            long timedStart = System.nanoTime();
            while (times.size() < 3 || (System.nanoTime() - timedStart < budget * 2 / 3 && times.size() < 1000)) {
                long t0 = System.nanoTime();
                GroupAssignment result = assignor.assign(spec, describer);
                times.add(System.nanoTime() - t0);
                assigned = count(result);
            }
            Collections.sort(times);
            System.out.printf("{\"assignor\":\"%s\",\"median_ms\":%.4f,\"min_ms\":%.4f,\"calls\":%d,\"assigned\":%d}%n",
                assignor.name(), times.get(times.size() / 2) / 1e6, times.get(0) / 1e6, times.size(), assigned);
        }
    }

    /** Partitions in the result, walked as the coordinator walks them (every set iterated). */
    private static long count(GroupAssignment result) {
        long n = 0;
        for (MemberAssignment member : result.members().values()) {
            for (Set<Integer> partitions : member.partitions().values()) {
                for (Integer ignored : partitions) {
                    n++;
                }
            }
        }
        return n;
    }
}
