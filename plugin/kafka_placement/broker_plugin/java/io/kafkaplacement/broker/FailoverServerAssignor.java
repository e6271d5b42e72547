package io.kafkaplacement.broker;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Failover (priority) assignment on Kafka's consumer group protocol (KIP-848), run by the broker's group
 * coordinator: per topic, the subscriber with the highest priority owns every partition; ties go to the
 * smallest member id (String.compareTo); a member without a usable priority ranks below every number. The
 * priority travels in the member's {@code client.rack} as {@code "<rack>#priority=<n>"} (see
 * {@link RackPriority}); the rule is kafka_placement.assignment.failover.assign_failover's.
 *
 * <p>The coordinator calls this on every membership or metadata change, so the work is one parse per member
 * and one comparison per (member, subscribed topic); an owner's partitions are {@link PartitionRange}s, no
 * per-partition objects. Nothing a member sends makes it throw: a malformed priority ranks the member last and
 * is logged once per member and value.
 */
public final class FailoverServerAssignor implements ConsumerGroupPartitionAssignor {
    /** The name members give in {@code group.remote.assignor}. */
    public static final String NAME = "failover";

    private static final Logger LOG = LoggerFactory.getLogger(FailoverServerAssignor.class);
    private static final MemberAssignment NOTHING = new Assigned(Collections.emptyMap());

    private final OncePerValueLog logged = new OncePerValueLog();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public GroupAssignment assign(GroupSpec groupSpec, SubscribedTopicDescriber topics) {
        Collection<String> memberIds = groupSpec.memberIds();
        Map<String, MemberAssignment> members = new HashMap<>(capacity(memberIds.size()));
        if (memberIds.isEmpty()) {
            return new GroupAssignment(members);
        }
        if (groupSpec.subscriptionType() == SubscriptionType.HOMOGENEOUS) {
            assignHomogeneous(groupSpec, topics, memberIds, members);
        } else {
            assignHeterogeneous(groupSpec, topics, memberIds, members);
        }
        return new GroupAssignment(members);
    }

    /** Every member subscribes to the same topics: the one best member owns all of them. */
    private void assignHomogeneous(GroupSpec groupSpec, SubscribedTopicDescriber topics,
                                   Collection<String> memberIds, Map<String, MemberAssignment> members) {
        Ranked best = null;
        Set<Uuid> subscribed = null;
        for (String memberId : memberIds) {
            MemberSubscription subscription = groupSpec.memberSubscription(memberId);
            Ranked candidate = rank(memberId, subscription);
            if (best == null || candidate.before(best)) {
                best = candidate;
                subscribed = subscription.subscribedTopicIds();
            }
            members.put(memberId, NOTHING);
        }
        Map<Uuid, Set<Integer>> owned = new HashMap<>(capacity(subscribed.size()));
        for (Uuid topicId : subscribed) {
            int count = topics.numPartitions(topicId);
            if (count > 0) {
                owned.put(topicId, new PartitionRange(count));
            }
        }
        if (!owned.isEmpty()) {
            members.put(best.memberId, new Assigned(owned));
        }
    }

    /** Members subscribe to different topics: each topic goes to its own best subscriber. */
    private void assignHeterogeneous(GroupSpec groupSpec, SubscribedTopicDescriber topics,
                                     Collection<String> memberIds, Map<String, MemberAssignment> members) {
        Map<Uuid, Ranked> owners = new HashMap<>();
        for (String memberId : memberIds) {
            MemberSubscription subscription = groupSpec.memberSubscription(memberId);
            Ranked candidate = rank(memberId, subscription);
            for (Uuid topicId : subscription.subscribedTopicIds()) {
                Ranked owner = owners.get(topicId);
                if (owner == null || candidate.before(owner)) {
                    owners.put(topicId, candidate);
                }
            }
            members.put(memberId, NOTHING);
        }
        Map<String, Map<Uuid, Set<Integer>>> owned = new HashMap<>();
        for (Map.Entry<Uuid, Ranked> entry : owners.entrySet()) {
            int count = topics.numPartitions(entry.getKey());
            if (count > 0) {
                owned.computeIfAbsent(entry.getValue().memberId, id -> new HashMap<>())
                    .put(entry.getKey(), new PartitionRange(count));
            }
        }
        for (Map.Entry<String, Map<Uuid, Set<Integer>>> entry : owned.entrySet()) {
            members.put(entry.getKey(), new Assigned(entry.getValue()));
        }
    }

    private Ranked rank(String memberId, MemberSubscription subscription) {
        Optional<String> rackId = subscription.rackId();
        String value = rackId == null ? null : rackId.orElse(null);
        RackPriority parsed = RackPriority.parse(value);
        if (parsed.problem() != null && logged.first(memberId, value)) {
            LOG.warn("failover assignor: member {} ranks last, its client.rack carries no usable priority: {}",
                memberId, parsed.problem());
        }
        return new Ranked(memberId, parsed.hasPriority(), parsed.priority());
    }

    private static int capacity(int entries) {
        return (int) Math.min(1 << 30, entries * 4L / 3 + 1);
    }

    /** A member's place in the failover order. */
    private static final class Ranked {
        final String memberId;
        final boolean hasPriority;
        final int priority;

        Ranked(String memberId, boolean hasPriority, int priority) {
            this.memberId = memberId;
            this.hasPriority = hasPriority;
            this.priority = priority;
        }

        /** True when this member is preferred to {@code other}. */
        boolean before(Ranked other) {
            if (hasPriority != other.hasPriority) {
                return hasPriority;
            }
            if (hasPriority && priority != other.priority) {
                return priority > other.priority;
            }
            return memberId.compareTo(other.memberId) < 0;
        }
    }

    /** One member's target partitions (the API's MemberAssignment is an interface). */
    private static final class Assigned implements MemberAssignment {
        private final Map<Uuid, Set<Integer>> partitions;

        Assigned(Map<Uuid, Set<Integer>> partitions) {
            this.partitions = Collections.unmodifiableMap(partitions);
        }

        @Override
        public Map<Uuid, Set<Integer>> partitions() {
            return partitions;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Assigned && ((Assigned) o).partitions.equals(partitions);
        }

        @Override
        public int hashCode() {
            return partitions.hashCode();
        }

        @Override
        public String toString() {
            return "Assigned(" + partitions + ")";
        }
    }
}
