package io.kafkaplacement.broker;

/**
 * What one member's {@code client.rack} says: its real rack, its failover priority, and why a priority was
 * unusable. The value is {@code "<rack>#priority=<n>"} or {@code "#priority=<n>"}; the real rack is the text
 * before the last {@code "#priority="}. The same rule as kafka_placement.assignment.rack_priority (the
 * differential test holds the two together). Parsing never throws and allocates only the rack substring.
 */
public final class RackPriority {
    /** Separates the real rack from the priority. */
    public static final String SEPARATOR = "#priority=";
    /** The longest {@code client.rack} read, in Unicode code points; longer values carry no priority. */
    public static final int MAX_RACK_CHARS = 1024;
    /** Longest digit run a 32-bit int can need ("2147483648" has ten). */
    private static final int MAX_DIGITS = 10;

    static final RackPriority NONE = new RackPriority(null, false, 0, null);

    private final String rack;
    private final boolean hasPriority;
    private final int priority;
    private final String problem;

    private RackPriority(String rack, boolean hasPriority, int priority, String problem) {
        this.rack = rack;
        this.hasPriority = hasPriority;
        this.priority = priority;
        this.problem = problem;
    }

    /** The real rack, or null when there is none. */
    public String rack() {
        return rack;
    }

    public boolean hasPriority() {
        return hasPriority;
    }

    /** Meaningful only when {@link #hasPriority()}. */
    public int priority() {
        return priority;
    }

    /** Why the value carried no usable priority, or null when it was well formed (with or without one). */
    public String problem() {
        return problem;
    }

    public static RackPriority parse(String value) {
        if (value == null || value.isEmpty()) {
            return NONE;
        }
        if (value.length() > MAX_RACK_CHARS) {
            // length() counts UTF-16 units; the limit is in code points, as in the Python rule
            int codePoints = value.codePointCount(0, value.length());
            if (codePoints > MAX_RACK_CHARS) {
                return new RackPriority(null, false, 0,
                    "client.rack is " + codePoints + " characters (at most " + MAX_RACK_CHARS + ")");
            }
        }
        int cut = value.lastIndexOf(SEPARATOR);
        if (cut < 0) {
            return new RackPriority(value, false, 0, null);
        }
        String rack = cut == 0 ? null : value.substring(0, cut);
        int start = cut + SEPARATOR.length();
        int end = value.length();
        boolean negative = start < end && value.charAt(start) == '-';
        int digitsStart = negative ? start + 1 : start;
        int digitCount = end - digitsStart;
        if (digitCount == 0 || digitCount > MAX_DIGITS || !asciiDigits(value, digitsStart, end)) {
            return new RackPriority(rack, false, 0,
                "priority " + quoted(value.substring(start)) + " is not an integer");
        }
        long magnitude = 0;
        for (int i = digitsStart; i < end; i++) {
            magnitude = magnitude * 10 + (value.charAt(i) - '0');
        }
        long number = negative ? -magnitude : magnitude;
        if (number < Integer.MIN_VALUE || number > Integer.MAX_VALUE) {
            return new RackPriority(rack, false, 0, "priority " + value.substring(start) + " is out of range ["
                + Integer.MIN_VALUE + ", " + Integer.MAX_VALUE + "]");
        }
        return new RackPriority(rack, true, (int) number, null);
    }

    private static boolean asciiDigits(String value, int from, int to) {
        for (int i = from; i < to; i++) {
            char c = value.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    /** A short quoted form for a log line: at most 64 characters of the value, control characters escaped. */
    private static String quoted(String text) {
        StringBuilder out = new StringBuilder("'");
        int limit = Math.min(text.length(), 64);
        for (int i = 0; i < limit; i++) {
            char c = text.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                out.append(String.format("\\x%02x", (int) c));
            } else {
                out.append(c);
            }
        }
        if (text.length() > limit) {
            out.append("...");
        }
        return out.append('\'').toString();
    }
}
