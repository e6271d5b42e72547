package io.kafkaplacement.clientharness;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.kafkaplacement.client.FailoverAssignor;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * Test harness (kafka-placement's own code): our compiled client-side FailoverAssignor, fed line by line through
 * Kafka's own ConsumerProtocol, the way a consumer's coordinator calls it. Hex fields; "-" is null, "=" empty.
 *
 * A <R|P|O> <ntopics> <count>... <nmembers> (<member id> <subscription bytes>)...  the leader (R: migration-ready,
 *     P: protected, O: the test suite's independent Java FailoverAssignor) assigns topics t0..; answers
 *     "OK" then per member "<whole topics, comma-separated>/<assignment userData>/<assignment bytes>", or "THROW ..."
 * S <setting>...  a member configured with key=value settings (value prefixed i: Integer, b: Boolean, s: String);
 *     answers "OK <the subscription bytes its coordinator would send for topic t0>" or "ERR <message>"
 * M <setting>... ; <assignment bytes>...  that member receives these assignments (generations 1, 2, ...)
 * Every answer ends with " |" and the log lines written meanwhile (hex, one token each).
 */
public final class ClientHarness {
    private static final ByteArrayOutputStream LOG = new ByteArrayOutputStream();

    private ClientHarness() {
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        System.setErr(new PrintStream(LOG, true, StandardCharsets.UTF_8));  // slf4j-simple writes here
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String answer;
            try {
                answer = answer(line.split(" "));
            } catch (Throwable e) {
                answer = "THROW " + hex(e.getClass().getName() + ": " + e.getMessage());
            }
            out.println(answer + " |" + logLines());
        }
    }

    private static String answer(String[] f) throws Exception {
        switch (f[0]) {
            case "A":
                return assign(f);
            case "S":
                return subscribe(f);
            case "M":
                return member(f);
            default:
                return "UNKNOWN";
        }
    }

    private static String assign(String[] f) {
        int i = 1;
        String mode = f[i++];
        int topics = Integer.parseInt(f[i++]);
        List<PartitionInfo> partitions = new ArrayList<>();
        int[] counts = new int[topics];
        for (int t = 0; t < topics; t++) {
            counts[t] = Integer.parseInt(f[i++]);
            for (int p = 0; p < counts[t]; p++) {
                partitions.add(new PartitionInfo("t" + t, p, Node.noNode(), new Node[0], new Node[0]));
            }
        }
        Cluster cluster = new Cluster("c", Collections.emptyList(), partitions, Collections.emptySet(),
            Collections.emptySet());
        int members = Integer.parseInt(f[i++]);
        Map<String, Subscription> subscriptions = new LinkedHashMap<>();
        List<String> order = new ArrayList<>();
        for (int m = 0; m < members; m++) {
            String id = text(f[i++]);
            order.add(id);
            subscriptions.put(id, ConsumerProtocol.deserializeSubscription(bytes(f[i++])));
        }
        ConsumerPartitionAssignor assignor;
        if (mode.equals("O")) {
            assignor = new io.kafkaplacement.conformance.live.FailoverAssignor();
        } else {
            FailoverAssignor ours = new FailoverAssignor();
            ours.configure(Map.of("failover.migration.ready", mode.equals("R")));
            assignor = ours;
        }
        Map<String, Assignment> result = assignor.assign(cluster, new GroupSubscription(subscriptions)).groupAssignment();
        StringBuilder answer = new StringBuilder("OK");
        for (String id : order) {
            Assignment assignment = result.get(id);
            if (assignment == null) {
                return "MISSING " + hex(id);
            }
            Map<Integer, Integer> owned = new HashMap<>();
            for (TopicPartition tp : assignment.partitions()) {
                owned.merge(Integer.parseInt(tp.topic().substring(1)), 1, Integer::sum);
            }
            List<Integer> whole = new ArrayList<>();
            for (Map.Entry<Integer, Integer> entry : owned.entrySet()) {
                if (entry.getValue() != counts[entry.getKey()]) {
                    return "PARTIAL " + hex(id);
                }
                whole.add(entry.getKey());
            }
            Collections.sort(whole);
            StringBuilder topicsOwned = new StringBuilder();
            for (int t : whole) {
                topicsOwned.append(topicsOwned.length() == 0 ? "" : ",").append(t);
            }
            answer.append(' ').append(topicsOwned.length() == 0 ? "_" : topicsOwned).append('/')
                .append(hex(assignment.userData())).append('/')
                .append(hex(ConsumerProtocol.serializeAssignment(assignment)));
        }
        return answer.toString();
    }

    private static FailoverAssignor configured(String[] f, int from, int to) {
        Map<String, Object> configs = new HashMap<>();
        for (int i = from; i < to; i++) {
            String pair = text(f[i]);
            int eq = pair.indexOf('=');
            String value = pair.substring(eq + 3);
            Object typed;
            switch (pair.substring(eq + 1, eq + 3)) {
                case "i:":
                    typed = Integer.valueOf(value);
                    break;
                case "b:":
                    typed = Boolean.valueOf(value);
                    break;
                default:
                    typed = value;
            }
            configs.put(pair.substring(0, eq), typed);
        }
        FailoverAssignor assignor = new FailoverAssignor();
        assignor.configure(configs);
        return assignor;
    }

    private static String subscribe(String[] f) {
        FailoverAssignor assignor;
        try {
            assignor = configured(f, 1, f.length);
        } catch (org.apache.kafka.common.config.ConfigException e) {
            return "ERR " + hex(e.getMessage());
        }
        String rack = null;
        for (int i = 1; i < f.length; i++) {
            String pair = text(f[i]);
            if (pair.startsWith("client.rack=")) {
                rack = pair.substring("client.rack=".length() + 2);
            }
        }
        // what ConsumerCoordinator#metadata sends: the assignor's userData, the consumer's client.rack
        List<String> topics = List.of("t0");
        Subscription subscription = new Subscription(topics, assignor.subscriptionUserData(Collections.emptySet()),
            Collections.emptyList(), -1, Optional.ofNullable(rack));
        return "OK " + hex(ConsumerProtocol.serializeSubscription(subscription));
    }

    private static String member(String[] f) {
        int split = List.of(f).indexOf(";");
        FailoverAssignor assignor = configured(f, 1, split);
        for (int i = split + 1; i < f.length; i++) {
            Assignment assignment = ConsumerProtocol.deserializeAssignment(bytes(f[i]));
            assignor.onAssignment(assignment, new ConsumerGroupMetadata("g", i - split, "m", Optional.empty()));
        }
        return "OK";
    }

    private static String logLines() {
        String text = LOG.toString(StandardCharsets.UTF_8);
        LOG.reset();
        StringBuilder out = new StringBuilder();
        for (String line : text.split("\n")) {
            if (!line.isEmpty()) {
                out.append(' ').append(hex(line));
            }
        }
        return out.toString();
    }

    private static String text(String field) {
        return field.equals("=") ? "" : new String(bytes(field).array(), StandardCharsets.UTF_8);
    }

    private static ByteBuffer bytes(String field) {
        if (field.equals("=")) {
            return ByteBuffer.allocate(0);
        }
        byte[] out = new byte[field.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(field.substring(2 * i, 2 * i + 2), 16);
        }
        return ByteBuffer.wrap(out);
    }

    private static String hex(String text) {
        return hex(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
    }

    private static String hex(ByteBuffer data) {
        if (data == null) {
            return "-";
        }
        ByteBuffer copy = data.duplicate();
        if (!copy.hasRemaining()) {
            return "=";
        }
        StringBuilder out = new StringBuilder();
        while (copy.hasRemaining()) {
            out.append(String.format("%02x", copy.get() & 0xff));
        }
        return out.toString();
    }
}
