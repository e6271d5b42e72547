package io.kafkaplacement.client;

import java.util.Map;
import java.util.Objects;

import io.kafkaplacement.broker.RackPriority;
import org.apache.kafka.common.config.ConfigException;

/**
 * The failover assignor's settings, read from the consumer's configuration ({@code Configurable#configure} gets the
 * consumer's original settings, so custom keys and {@code client.rack} arrive there). Checked when the consumer is
 * built: a bad value is a {@link ConfigException} naming the key, the value and what is allowed, before the member
 * ever joins a group.
 * <ul>
 * <li>{@code failover.priority}: a 32-bit int; unset: no priority (the member ranks below every number).</li>
 * <li>{@code failover.migration.ready}: {@code true}/{@code false} (default false). True: the member is ready to move
 * its group to the consumer protocol (KIP-848), as kafka_placement's {@code FailoverAssignor(migration_ready=True)}.
 * Its classic subscription's rack id must then carry its priority the way the broker's failover assignor reads it,
 * {@code client.rack=<rack>#priority=<n>} (or {@code #priority=<n>}): the Java consumer puts {@code client.rack} into
 * the subscription itself (ConsumerCoordinator#metadata), an assignor cannot change it, so the user sets it and this
 * class checks it equals {@code failover.priority}.</li>
 * <li>{@code client.rack}: Kafka's own setting, read to check the above. A {@code #priority=} suffix without
 * {@code failover.migration.ready=true} is refused: it would advertise a priority the member does not act on.</li>
 * </ul>
 */
final class FailoverSettings {
    static final String PRIORITY = "failover.priority";
    static final String MIGRATION_READY = "failover.migration.ready";
    static final String CLIENT_RACK = "client.rack";
    private static final String PREFIX = "failover.";

    final Integer priority;
    final boolean migrationReady;
    /** The real rack (text before the last {@code #priority=}), or null. */
    final String rack;

    private FailoverSettings(Integer priority, boolean migrationReady, String rack) {
        this.priority = priority;
        this.migrationReady = migrationReady;
        this.rack = rack;
    }

    static final FailoverSettings NONE = new FailoverSettings(null, false, null);

    static FailoverSettings from(Map<String, ?> configs) {
        if (configs == null) {
            return NONE;
        }
        for (String key : configs.keySet()) {
            // a misspelt key would silently leave the member without a priority: ranked last, never active
            if (key != null && key.startsWith(PREFIX) && !key.equals(PRIORITY) && !key.equals(MIGRATION_READY)) {
                throw new ConfigException(key, configs.get(key),
                    "unknown failover assignor setting; the settings are " + PRIORITY + " and " + MIGRATION_READY);
            }
        }
        Integer priority = priority(configs.get(PRIORITY));
        boolean ready = bool(configs.get(MIGRATION_READY));
        Object rawRack = configs.get(CLIENT_RACK);
        if (rawRack != null && !(rawRack instanceof String)) {
            throw new ConfigException(CLIENT_RACK, rawRack, "must be a string");
        }
        String clientRack = (String) rawRack;
        RackPriority seen = RackPriority.parse(clientRack);
        if (seen.problem() != null) {
            throw new ConfigException(CLIENT_RACK, clientRack, "its failover priority is unusable: " + seen.problem()
                + "; use <rack>#priority=<n> with n an integer in [" + Integer.MIN_VALUE + ", " + Integer.MAX_VALUE
                + "]");
        }
        Integer advertised = seen.hasPriority() ? seen.priority() : null;
        if (ready && !Objects.equals(advertised, priority)) {
            throw new ConfigException(CLIENT_RACK, clientRack, MIGRATION_READY + "=true needs client.rack to carry "
                + "this member's " + PRIORITY + " (" + priority + ") for the broker to read after a move to the "
                + "consumer protocol: set client.rack=" + expectedRack(seen.rack(), priority));
        }
        if (!ready && advertised != null) {
            throw new ConfigException(CLIENT_RACK, clientRack, "carries a failover priority but " + MIGRATION_READY
                + " is not true: set " + MIGRATION_READY + "=true (the member is then ready to move to the consumer "
                + "protocol) or client.rack=" + (seen.rack() == null ? "" : seen.rack()));
        }
        return new FailoverSettings(priority, ready, seen.rack());
    }

    /** The {@code client.rack} a migration-ready member with this rack and priority sets. */
    static String expectedRack(String rack, Integer priority) {
        String base = rack == null ? "" : rack;
        return priority == null ? base : base + RackPriority.SEPARATOR + priority;
    }

    private static Integer priority(Object value) {
        String allowed = "must be an integer in [" + Integer.MIN_VALUE + ", " + Integer.MAX_VALUE + "] (or unset: "
            + "no priority, the member ranks last)";
        if (value == null) {
            return null;
        }
        if (value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return ((Number) value).intValue();
        }
        if (value instanceof Long) {
            long number = (Long) value;
            if (number < Integer.MIN_VALUE || number > Integer.MAX_VALUE) {
                throw new ConfigException(PRIORITY, value, allowed);
            }
            return (int) number;
        }
        if (value instanceof String) {
            String text = ((String) value).trim();  // as Kafka's ConfigDef reads an INT from a properties file
            try {
                return Integer.valueOf(text);
            } catch (NumberFormatException e) {
                throw new ConfigException(PRIORITY, value, allowed);
            }
        }
        throw new ConfigException(PRIORITY, value, allowed);
    }

    private static boolean bool(Object value) {
        if (value == null) {
            return false;
        }
        if (value instanceof Boolean) {
            return (Boolean) value;
        }
        if (value instanceof String) {
            String text = ((String) value).trim();  // ConfigDef's BOOLEAN: true/false, any case
            if (text.equalsIgnoreCase("true")) {
                return true;
            }
            if (text.equalsIgnoreCase("false")) {
                return false;
            }
        }
        throw new ConfigException(MIGRATION_READY, value, "must be true or false");
    }
}
