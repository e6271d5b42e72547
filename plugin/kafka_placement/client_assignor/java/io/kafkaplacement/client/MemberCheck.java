package io.kafkaplacement.client;

import java.nio.ByteBuffer;
import java.util.Objects;

import org.slf4j.Logger;

/**
 * A failover member's check of the assignments it receives, logging one line per change (never per rebalance),
 * the same rule and texts as kafka_placement.clients.group_assignor.MemberState:
 * <ul>
 * <li>7-byte failover userData naming this member's priority: fine (after a problem: one INFO "again" line);</li>
 * <li>anything else, for a member that is not migration-ready: one WARN line (no failover leader of ours computed
 * the assignment, so the group is not protected against conversion; or the leader read another priority);</li>
 * <li>a migration-ready member tells who assigned it without failover userData: EMPTY userData is our ready leader
 * (every member's priority visible, the group may convert), NULL is the broker (Kafka converted the group; its
 * assignor reads the priority from the subscription's rack id) or a foreign failover leader: one INFO line each
 * time that changes.</li>
 * </ul>
 * Python's member also logs an ERROR when the broker split a topic; it reads partition counts from its client's
 * metadata, which Kafka does not hand to a Java assignor, so this check cannot see a split (group describe can).
 */
final class MemberCheck {
    /** Our ready leader left the group convertible. */
    static final String CONVERTIBLE = "this migration-ready failover member's assignment carries no failover "
        + "userData: every member's priority is visible in its subscription's rack id, so the group may move to "
        + "the consumer protocol (a failover leader of ours left it convertible, or the broker assigns the converted "
        + "group; `kafka-placement group describe` shows which and whether the broker's assignor is failover)";
    /** The broker (or a foreign leader) assigned this ready member. */
    static final String BROKER_ASSIGNS = "this migration-ready failover member's assignment carries null userData: "
        + "the broker assigns the group (Kafka converted it to the consumer protocol; its failover assignor ranks "
        + "this member by the priority in its subscription's rack id), or a failover leader that is not "
        + "kafka-placement's leads";

    private final Logger log;
    private final String name;
    private String problem;
    /** Who assigned a migration-ready member last: "ready-leader", "broker", "leader"; null before. */
    private String assignedBy;

    MemberCheck(Logger log, String name) {
        this.log = log;
        this.name = name;
    }

    synchronized void onAssignment(ByteBuffer userData, FailoverSettings settings, String generation) {
        if (settings.migrationReady && FailoverWire.isEmpty(userData)) {
            String by = userData == null ? "broker" : "ready-leader";
            if (!by.equals(assignedBy)) {
                log.info("{} (generation {})", by.equals("broker") ? BROKER_ASSIGNS : CONVERTIBLE, generation);
            }
            assignedBy = by;
            problem = null;
            return;
        }
        assignedBy = settings.migrationReady ? "leader" : null;
        String now = FailoverWire.assignmentProblem(userData, settings.priority);
        if (!Objects.equals(now, problem)) {
            if (now != null) {
                log.warn("{} (generation {})", now, generation);
            } else {
                log.info("this {} member's assignment comes from a {} leader again (generation {})", name, name,
                    generation);
            }
        }
        problem = now;
    }
}
