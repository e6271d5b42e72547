package io.kafkaplacement.client;

import java.nio.ByteBuffer;

/**
 * The failover assignor's userData, byte for byte the formats of kafka_placement.assignment.userdata, so Java and
 * Python members share one group:
 * <ul>
 * <li>subscription (member to leader): the member's priority, one big-endian INT32; null or empty: no priority
 * (ranks last); any other length is unusable (ranks last, the leader logs it);</li>
 * <li>assignment (leader to member): INT16 version 0, INT8 ranked (1: the leader read a priority from this member),
 * INT32 that priority (0 when not ranked). Seven bytes, never empty: Kafka refuses to convert a classic group to the
 * consumer protocol while a member's assignment userData is non-empty (KAFKA-18134), and a converted group would be
 * assigned by the broker, which cannot see these priorities. Bytes after the fields are ignored (a later
 * version's).</li>
 * </ul>
 * Readers never throw: every length is checked before a read.
 */
final class FailoverWire {
    static final short ASSIGNMENT_VERSION = 0;
    static final int ASSIGNMENT_BYTES = 7;

    private FailoverWire() {
    }

    static ByteBuffer encodePriority(int priority) {
        ByteBuffer buffer = ByteBuffer.allocate(4);
        buffer.putInt(priority);
        buffer.flip();
        return buffer;
    }

    /** Null or no bytes: what a member without a priority sends, and Java's own assignors' assignment userData. */
    static boolean isEmpty(ByteBuffer data) {
        return data == null || !data.hasRemaining();
    }

    /** Why a subscription's userData carries no usable priority, or null when it carries one or none at all. */
    static String priorityProblem(ByteBuffer data) {
        if (isEmpty(data) || data.remaining() == 4) {
            return null;
        }
        return "priority userData must be exactly 4 bytes (a big-endian INT32), got " + data.remaining() + " bytes";
    }

    /** The priority in a subscription's userData, or null (none sent, or unusable: see {@link #priorityProblem}). */
    static Integer readPriority(ByteBuffer data) {
        if (isEmpty(data) || data.remaining() != 4) {
            return null;
        }
        return data.getInt(data.position());  // absolute read: the buffer is Kafka's, its position stays
    }

    static ByteBuffer encodeAssignment(Integer priority) {
        ByteBuffer buffer = ByteBuffer.allocate(ASSIGNMENT_BYTES);
        buffer.putShort(ASSIGNMENT_VERSION);
        buffer.put((byte) (priority == null ? 0 : 1));
        buffer.putInt(priority == null ? 0 : priority);
        buffer.flip();
        return buffer;
    }

    /**
     * What is wrong with a failover assignment's userData for a member of priority {@code priority} (null: nothing).
     * The same rule and texts as kafka_placement.assignment.strategies (the member's check).
     */
    static String assignmentProblem(ByteBuffer data, Integer priority) {
        if (isEmpty(data)) {
            return NOT_FROM_FAILOVER_LEADER;
        }
        int at = data.position();
        if (data.remaining() < ASSIGNMENT_BYTES) {
            return "the failover leader's assignment userData is unreadable (failover assignment userData must be at "
                + "least " + ASSIGNMENT_BYTES + " bytes, got " + data.remaining() + ")";
        }
        short version = data.getShort(at);
        byte ranked = data.get(at + 2);
        if (version < ASSIGNMENT_VERSION) {
            return "the failover leader's assignment userData is unreadable (failover assignment userData version "
                + version + " is negative)";
        }
        if (ranked != 0 && ranked != 1) {
            return "the failover leader's assignment userData is unreadable (failover assignment userData flag "
                + ranked + " is not 0 or 1)";
        }
        Integer got = ranked == 1 ? Integer.valueOf(data.getInt(at + 3)) : null;
        if (!java.util.Objects.equals(got, priority)) {
            String how = got == null ? "last (no usable priority)" : "with priority " + got;
            return "the failover leader ranked this member " + how + ", but its priority is "
                + (priority == null ? "None" : priority.toString());
        }
        return null;
    }

    /** What a failover member says when its assignment was not made by a failover leader of ours. */
    static final String NOT_FROM_FAILOVER_LEADER =
        "this failover member's assignment carries no failover userData, so no kafka-placement failover "
        + "leader computed it: the broker converted the group to the consumer protocol and assigns it "
        + "(a group.protocol=consumer member joined while no member held a failover assignment), or a member "
        + "with another failover implementation leads; priorities are not guaranteed and the group is not "
        + "protected against conversion";
}
