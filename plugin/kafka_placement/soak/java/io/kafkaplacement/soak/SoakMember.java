/*
 * kafka-placement soak: one Java KafkaConsumer group member, run as a child process of the soak
 * (kafka_placement.soak.java_member builds and starts it). The group's protocol and assignor come from
 * the properties file: the consumer protocol with the broker's failover assignor
 * (kafka_placement.clients.consumer_protocol.java_failover_properties), or the classic protocol with our
 * Java client assignor (kafka_placement.client_assignor.build.consumer_settings).
 *
 * Usage: SoakMember <properties file> <group> <name> <topic> <log file> <session timeout ms>
 * Appends the soak's JSON-lines events (kafka_placement.soak.events) to the log: "own" (an ownership
 * interval, written when acquired and again when released, from inside the rebalance callbacks, so a
 * release is stamped before the next owner can acquire), "consumed" (every record), "committed" (every
 * offset the broker accepted: synchronous, after each batch and on revocation) and "session-lost" (the
 * partitions lost: the group went on without this member). "close" on stdin leaves the group cleanly.
 * A consumer whose poll() throws is closed and replaced by a new one (its loss logged as "session-lost"),
 * each replacement said on stderr.
 */
package io.kafkaplacement.soak;

import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class SoakMember {
    /** The producers' value: {"p": producer, "s": sequence, "pp": predicted} (kafka_placement.soak.load). */
    private static final Pattern VALUE = Pattern.compile("\"p\": \"([^\"]*)\", \"s\": (\\d+)");

    private final PrintWriter log;
    private final String group;
    private final String name;
    private final TreeSet<Integer> owned = new TreeSet<>();
    private String current;  // the open "own" line's fields before "released", or null
    private int generation;

    private SoakMember(PrintWriter log, String group, String name) {
        this.log = log;
        this.group = group;
        this.name = name;
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\');
            }
            b.append(c);
        }
        return b.append('"').toString();
    }

    private static double now() {
        return System.currentTimeMillis() / 1000.0;
    }

    private synchronized void write(String body) {
        log.println("{" + body + "}");
        log.flush();
    }

    private String who() {
        return "\"group\":" + quote(group) + ",\"member\":" + quote(name);
    }

    /** The member's ownership becomes {@code partitions}: the open interval released, a new one acquired. */
    private void own(Collection<Integer> partitions) {
        TreeSet<Integer> next = new TreeSet<>(partitions);
        if (next.equals(owned)) {
            return;
        }
        double t = now();
        if (current != null) {
            write(current + ",\"released\":" + t);
            current = null;
        }
        owned.clear();
        owned.addAll(next);
        if (!next.isEmpty()) {
            generation++;
            current = "\"ev\":\"own\"," + who() + ",\"generation\":" + generation + ",\"partitions\":"
                + next.toString().replace(" ", "") + ",\"acquired\":" + t;
            write(current + ",\"released\":null");
        }
    }

    private static List<Integer> numbers(Collection<TopicPartition> tps) {
        List<Integer> out = new ArrayList<>();
        for (TopicPartition tp : tps) {
            out.add(tp.partition());
        }
        return out;
    }

    /**
     * The consumer's "heartbeat-total" (consumer-coordinator-metrics): the group coordinator's heartbeat
     * answers so far, recorded as each arrives; null when the consumer has none. Looked up once: the
     * metric object lives as long as the consumer, and walking every metric each loop turn costs.
     */
    private static Metric heartbeatTotal(KafkaConsumer<byte[], byte[]> consumer) {
        for (Map.Entry<MetricName, ? extends Metric> e : consumer.metrics().entrySet()) {
            MetricName n = e.getKey();
            if (n.name().equals("heartbeat-total") && n.group().equals("consumer-coordinator-metrics")) {
                return e.getValue();
            }
        }
        return null;
    }

    /**
     * What our Python members' fencing guard does (kafka_placement.groups.coordinator_silence), for Java's
     * consumer, which keeps consuming after its session expired until it rejoins: no heartbeat answer for
     * the session less 2 s pauses the assignment (a session lost, the partitions released); answers again
     * for a second resume what is still assigned (a fencing answer has made the consumer rejoin by then,
     * and a new assignment is never paused).
     */
    private static final class FencingGuard {
        private final SoakMember member;
        private final long limitNanos;
        private Metric heartbeats;  // "heartbeat-total", found at the first check
        private double answers = Double.NaN;
        private long answeredAt = System.nanoTime();
        private double answeredAtWall = now();
        private long answeredAgainAt = -1;
        private final Set<TopicPartition> paused = new HashSet<>();

        FencingGuard(SoakMember member, double sessionS) {
            this.member = member;
            this.limitNanos = (long) (Math.max(1.0, sessionS - 2.0) * 1e9);
        }

        /**
         * The coordinator answered: a heartbeat, or an assignment delivered (on the classic protocol that
         * comes in a SyncGroup answer, which "heartbeat-total" does not count: without this a member
         * whose heartbeats had gone unanswered before it rejoined paused its brand-new assignment).
         */
        void answered() {
            long now = System.nanoTime();
            answeredAt = now;
            answeredAtWall = now();
            if (!paused.isEmpty() && answeredAgainAt < 0) {
                answeredAgainAt = now;
            }
        }

        void check(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, OffsetAndMetadata> pending) {
            if (heartbeats == null) {
                heartbeats = heartbeatTotal(consumer);
                if (heartbeats == null) {
                    return;
                }
            }
            Object value = heartbeats.metricValue();
            if (!(value instanceof Double)) {
                return;
            }
            double seen = (Double) value;
            if (Double.isNaN(answers) || seen > answers) {
                answers = seen;
                answered();
            }
            long now = System.nanoTime();
            if (paused.isEmpty()) {
                Set<TopicPartition> assigned = consumer.assignment();
                if (now - answeredAt >= limitNanos && !assigned.isEmpty()) {
                    paused.addAll(assigned);
                    consumer.pause(paused);
                    answeredAgainAt = -1;
                    double t = now();
                    member.write("\"ev\":\"session-lost\"," + member.who() + ",\"since\":" + answeredAtWall
                        + ",\"t\":" + t);
                    pending.clear();  // maybe someone else's already: not committed
                    member.own(List.of());
                }
            } else if (answeredAgainAt >= 0 && now - answeredAgainAt >= 1_000_000_000L) {
                Set<TopicPartition> back = new HashSet<>(paused);
                back.retainAll(consumer.assignment());
                consumer.resume(back);
                paused.clear();
                member.own(numbers(consumer.assignment()));
            }
        }
    }

    private void commit(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, OffsetAndMetadata> offsets) {
        if (offsets.isEmpty()) {
            return;
        }
        try {
            // bounded: Java's default (default.api.timeout.ms, 60 s) held the loop 15 s against a stalled
            // coordinator in seed 41, and the fencing guard, which runs in the same loop, fired 11 s late
            consumer.commitSync(offsets, COMMIT_TIMEOUT);
        } catch (KafkaException e) {  // fenced or rebalancing: the next owner re-reads (duplicates, not losses)
            return;
        }
        double t = now();
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
            write("\"ev\":\"committed\"," + who() + ",\"partition\":" + e.getKey().partition() + ",\"offset\":"
                + e.getValue().offset() + ",\"t\":" + t);
        }
        offsets.clear();
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        try (InputStream in = new FileInputStream(args[0])) {
            props.load(in);
        }
        String group = args[1];
        String name = args[2];
        String topic = args[3];
        double sessionS = Integer.parseInt(args[5]) / 1000.0;
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, name);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        PrintWriter log = new PrintWriter(new OutputStreamWriter(new FileOutputStream(args[4], true),
            StandardCharsets.UTF_8));
        SoakMember member = new SoakMember(log, group, name);
        AtomicBoolean closing = closeOnStdin();
        // A consumer whose poll() throws has failed for good (on the consumer protocol a fatal heartbeat
        // error, GROUP_ID_NOT_FOUND among them, leaves the member fenced and every later poll() throwing):
        // what an application that must not hang does is close it and subscribe a new one. A pause between
        // replacements keeps a refusal that repeats from becoming a busy loop.
        while (!closing.get()) {
            try {
                member.consume(props, topic, sessionS, closing);
            } catch (KafkaException e) {
                if (closing.get()) {
                    break;
                }
                double t = now();
                member.write("\"ev\":\"session-lost\"," + member.who() + ",\"since\":" + (t - sessionS)
                    + ",\"t\":" + t);
                member.own(List.of());
                System.err.println("SoakMember " + name + ": the consumer failed for good (" + e
                    + "): a new consumer joins");
                System.err.flush();
                Thread.sleep(REPLACE_PAUSE_MS);
            }
        }
        member.own(List.of());
        log.close();
    }

    /** Bound on a synchronous commit (a commit that times out is retried with the next batch's). */
    private static final Duration COMMIT_TIMEOUT = Duration.ofSeconds(2);

    /** Pause between a failed consumer's close and its replacement's subscribe. */
    private static final long REPLACE_PAUSE_MS = 1_000;

    /** One consumer's life: subscribe, consume and commit until closing (then commit and close). */
    private void consume(Properties props, String topic, double sessionS, AtomicBoolean closing) {
        SoakMember member = this;
        Map<TopicPartition, OffsetAndMetadata> pending = new java.util.HashMap<>();
        FencingGuard guard = new FencingGuard(member, sessionS);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> revoked) {
                    member.commit(consumer, pending);
                    TreeSet<Integer> left = new TreeSet<>(member.owned);
                    left.removeAll(numbers(revoked));
                    member.own(left);
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> lost) {
                    // already someone else's: no commit. The session ended at least a session timeout
                    // after the last heartbeat that reached the coordinator, so "since" is at most now - session.
                    double t = now();
                    member.write("\"ev\":\"session-lost\"," + member.who() + ",\"since\":" + (t - sessionS)
                        + ",\"t\":" + t);
                    pending.clear();
                    TreeSet<Integer> left = new TreeSet<>(member.owned);
                    left.removeAll(numbers(lost));
                    member.own(left);
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> added) {
                    // incremental on the consumer protocol, everything after a full revoke on EAGER classic
                    guard.answered();
                    TreeSet<Integer> next = new TreeSet<>(member.owned);
                    next.addAll(numbers(added));
                    member.own(next);
                }
            });
            while (!closing.get()) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                double t = now();
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    String value = r.value() == null ? "" : new String(r.value(), StandardCharsets.UTF_8);
                    Matcher m = VALUE.matcher(value);
                    if (m.find()) {
                        member.write("\"ev\":\"consumed\"," + member.who() + ",\"partition\":" + r.partition()
                            + ",\"offset\":" + r.offset() + ",\"producer\":" + quote(m.group(1)) + ",\"sequence\":"
                            + m.group(2) + ",\"t\":" + t);
                    }
                    pending.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                }
                guard.check(consumer, pending);  // first: a commit may wait for a silent coordinator
                member.commit(consumer, pending);
            }
            member.commit(consumer, pending);
        }
    }

    /** A daemon thread reading stdin; the flag turns true on a "close" line or when stdin ends. */
    private static AtomicBoolean closeOnStdin() {
        AtomicBoolean closing = new AtomicBoolean(false);
        Thread stdin = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.trim().equals("close")) {
                        break;
                    }
                }
            } catch (java.io.IOException ignored) {
                // stdin closed: leave as well
            }
            closing.set(true);
        });
        stdin.setDaemon(true);
        stdin.start();
        return closing;
    }
}
