package io.kafkaplacement.client;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import io.kafkaplacement.broker.RackPriority;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * kafka-placement's failover assignor for the Java consumer's classic group protocol: per topic, the subscriber with
 * the highest priority owns every partition; ties go to the smallest member id ({@code String.compareTo}); a member
 * without a usable priority ranks below every number. The rule of kafka_placement.assignment.failover.assign_failover
 * and the wire formats of its Python members ({@link FailoverWire}), so Java and Python members share one group.
 *
 * <p>Use: {@code partition.assignment.strategy=io.kafkaplacement.client.FailoverAssignor},
 * {@code failover.priority=<n>}, {@code group.protocol=classic}; settings in {@link FailoverSettings}. Protocol name
 * {@code failover}; {@link PriorityAssignor} is the same under {@code priority}. EAGER only: a standby must not keep
 * consuming while the active member is chosen, and the leader hands whole topics over, never parts.
 *
 * <p>As leader it never throws for what a member sent (a throw would fail the rebalance of the whole group): a
 * member whose userData is not a priority ranks last, with one WARN line per rebalance.
 */
public class FailoverAssignor implements ConsumerPartitionAssignor, Configurable {
    private static final Logger LOG = LoggerFactory.getLogger(FailoverAssignor.class);
    private volatile FailoverSettings settings = FailoverSettings.NONE;
    private final MemberCheck check = new MemberCheck(LOG, name());

    @Override
    public void configure(Map<String, ?> configs) {
        settings = FailoverSettings.from(configs);
    }

    @Override
    public String name() {
        return "failover";
    }

    @Override
    public List<RebalanceProtocol> supportedProtocols() {
        return Collections.singletonList(RebalanceProtocol.EAGER);
    }

    @Override
    public ByteBuffer subscriptionUserData(Set<String> topics) {
        Integer priority = settings.priority;
        return priority == null ? null : FailoverWire.encodePriority(priority);
    }

    @Override
    public GroupAssignment assign(Cluster metadata, GroupSubscription groupSubscription) {
        Map<String, Subscription> subscriptions = groupSubscription == null
            || groupSubscription.groupSubscription() == null
            ? Collections.emptyMap() : groupSubscription.groupSubscription();
        List<Ranked> ranked = new ArrayList<>(subscriptions.size());
        Map<String, String> blockers = new TreeMap<>();
        for (Map.Entry<String, Subscription> entry : subscriptions.entrySet()) {
            Ranked member = Ranked.of(entry.getKey(), entry.getValue());
            if (member == null) {
                continue;  // no member id: nobody to hand partitions to
            }
            ranked.add(member);
            String blocker = member.conversionBlocker();
            if (blocker != null) {
                blockers.put(member.id, blocker);
            }
        }
        Collections.sort(ranked);
        Map<String, List<TopicPartition>> owned = new HashMap<>();
        Set<String> topics = new TreeSet<>();
        for (Ranked member : ranked) {
            owned.put(member.id, new ArrayList<>());
            topics.addAll(member.topics);
        }
        for (String topic : topics) {
            Integer count = metadata == null ? null : metadata.partitionCountForTopic(topic);
            if (count == null || count <= 0) {
                continue;  // unknown to this leader's metadata: nobody owns it yet (Kafka rebalances when it appears)
            }
            for (Ranked member : ranked) {
                if (member.topics.contains(topic)) {
                    List<TopicPartition> parts = owned.get(member.id);
                    for (int p = 0; p < count; p++) {
                        parts.add(new TopicPartition(topic, p));
                    }
                    break;
                }
            }
        }
        // empty userData lets Kafka convert the group (KAFKA-18134): only when this leader is migration-ready and
        // the broker would rank every member as we do, from its subscription's rack id
        boolean convertibleGroup = settings.migrationReady && blockers.isEmpty();
        if (settings.migrationReady && !blockers.isEmpty()) {
            LOG.info("failover group stays protected against conversion to the consumer protocol: {}",
                describe(blockers));
        }
        Map<String, Assignment> result = new HashMap<>();
        for (Ranked member : ranked) {
            // empty, not null: our members tell our ready leader (empty) from the broker or a foreign leader (null)
            ByteBuffer userData = convertibleGroup
                ? ByteBuffer.allocate(0) : FailoverWire.encodeAssignment(member.priority);
            result.put(member.id, new Assignment(owned.get(member.id), userData));
        }
        return new GroupAssignment(result);
    }

    @Override
    public void onAssignment(Assignment assignment, ConsumerGroupMetadata metadata) {
        String generation = metadata == null ? "unknown" : Integer.toString(metadata.generationId());
        check.onAssignment(assignment == null ? null : assignment.userData(), settings, generation);
    }

    private static String describe(Map<String, String> blockers) {
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, String> entry : blockers.entrySet()) {
            if (out.length() > 0) {
                out.append("; ");
            }
            out.append("member ").append(entry.getKey()).append(": ").append(entry.getValue());
        }
        return out.toString();
    }

    /** One member as the leader reads it; ordered best first. */
    private static final class Ranked implements Comparable<Ranked> {
        final String id;
        final Integer priority;
        final Set<String> topics;
        final String rackId;

        private Ranked(String id, Integer priority, Set<String> topics, String rackId) {
            this.id = id;
            this.priority = priority;
            this.topics = topics;
            this.rackId = rackId;
        }

        static Ranked of(String id, Subscription subscription) {
            if (id == null) {
                return null;
            }
            if (subscription == null) {
                return new Ranked(id, null, Collections.emptySet(), null);
            }
            ByteBuffer data = subscription.userData();
            String problem = FailoverWire.priorityProblem(data);
            if (problem != null) {
                LOG.warn("member {} sent unusable failover priority userData ({}); ranking it lowest", id, problem);
            }
            Set<String> topics = new HashSet<>();
            if (subscription.topics() != null) {
                for (String topic : subscription.topics()) {
                    if (topic != null) {
                        topics.add(topic);
                    }
                }
            }
            String rackId = subscription.rackId() == null ? null : subscription.rackId().orElse(null);
            return new Ranked(id, FailoverWire.readPriority(data), topics, rackId);
        }

        /** Why the broker would rank this member otherwise than the leader does (null: it would not). */
        String conversionBlocker() {
            RackPriority seen = RackPriority.parse(rackId);
            Integer visible = seen.hasPriority() ? seen.priority() : null;
            if (Objects.equals(visible, priority)) {
                return null;
            }
            if (visible == null) {
                String why = seen.problem() == null ? "" : " (" + seen.problem() + ")";
                return "its subscription's rack id " + (rackId == null ? "None" : "'" + rackId + "'")
                    + " carries no priority" + why + ", so the broker would rank it last instead of with priority "
                    + priority;
            }
            return "its subscription's rack id says priority " + visible + " but its userData says "
                + (priority == null ? "None" : priority.toString());
        }

        @Override
        public int compareTo(Ranked other) {
            if ((priority == null) != (other.priority == null)) {
                return priority == null ? 1 : -1;
            }
            if (priority != null && !priority.equals(other.priority)) {
                return Integer.compare(other.priority, priority);
            }
            return id.compareTo(other.id);
        }
    }
}
