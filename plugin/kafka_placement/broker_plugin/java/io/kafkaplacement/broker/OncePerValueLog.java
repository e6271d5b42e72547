package io.kafkaplacement.broker;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Remembers which (member, value) pairs were already logged, so the broker says each malformed priority once
 * and not on every heartbeat. Bounded: past {@link #CAPACITY} entries the oldest are forgotten (a forgotten
 * pair may be logged again, which is harmless).
 */
final class OncePerValueLog {
    static final int CAPACITY = 4096;
    private static final int MAX_KEY_PART = RackPriority.MAX_RACK_CHARS;

    private final Map<String, Boolean> seen = new LinkedHashMap<String, Boolean>(64, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > CAPACITY;
        }
    };

    /** True the first time this member reports this value (since it was last forgotten). */
    synchronized boolean first(String memberId, String value) {
        // keys stay small whatever a member sends: long values (malformed anyway) are keyed by length
        String member = memberId.length() <= MAX_KEY_PART ? memberId : memberId.substring(0, MAX_KEY_PART);
        String shown = value.length() <= MAX_KEY_PART ? value : "#length=" + value.length();
        String key = member + '\u0000' + shown;
        return seen.put(key, Boolean.TRUE) == null;
    }
}
