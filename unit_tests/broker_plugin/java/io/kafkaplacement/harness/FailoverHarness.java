package io.kafkaplacement.harness;

import io.kafkaplacement.broker.FailoverServerAssignor;
import io.kafkaplacement.broker.RackPriority;
import io.kafkaplacement.broker.RackPriorityReplicaSelector;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.replica.ClientMetadata;
import org.apache.kafka.common.replica.PartitionView;
import org.apache.kafka.common.replica.ReplicaView;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Test driver: reads one request per line on stdin, answers one line on stdout. Strings travel as hex of
 * their UTF-8 bytes ("-" for null, "=" for the empty string). The group is built with the broker's own GroupSpecImpl and
 * MemberSubscriptionAndAssignmentImpl, so the assignor sees what the coordinator hands it.
 *
 * <pre>
 * A H|X nTopics count... nMembers (idHex rackHex nSubs topicIndex...)...   -> per member "t,t,...;" (sorted
 *                                                                            topic indexes it owns whole),
 *                                                                            or "PARTIAL"/"STRAY"/"ERR ..."
 * P rackHex   -> "priority rackHex problem(0|1)" or "none rackHex problem(0|1)"
 * L textHex   -> java.util.Properties.load of the text's ISO-8859-1 bytes (as Kafka's tools read a
 *                --command-config file): "keyHex:valueHex" pairs, sorted, space separated
 * S rackHex   -> the node id the replica selector picks (0 leader in rack "leader-rack", 1 in the decoded
 *                rack, 2 in "elsewhere")
 * </pre>
 */
public final class FailoverHarness {
    public static void main(String[] args) throws Exception {
        FailoverServerAssignor assignor = new FailoverServerAssignor();
        RackPriorityReplicaSelector selector = new RackPriorityReplicaSelector();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split(" ");
            String answer;
            try {
                switch (f[0]) {
                    case "A": answer = assign(assignor, f); break;
                    case "P": answer = parse(unhex(f[1])); break;
                    case "S": answer = select(selector, unhex(f[1])); break;
                    case "L": answer = load(unhex(f[1])); break;
                    default: answer = "ERR unknown request " + f[0];
                }
            } catch (Throwable t) {
                answer = "ERR " + t.getClass().getSimpleName() + ": " + String.valueOf(t.getMessage()).replace('\n', ' ');
            }
            out.write(answer);
            out.write('\n');
            out.flush();
        }
    }

    static Uuid topicId(int index) {
        // spread bits like the broker's random ids (near-identical ids collide in Uuid.hashCode)
        return new Uuid((index + 1) * 0x9E3779B97F4A7C15L, (index + 7) * 0xC2B2AE3D27D4EB4FL);
    }

    static String assign(FailoverServerAssignor assignor, String[] f) {
        int at = 1;
        SubscriptionType type = f[at++].equals("H") ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
        int nTopics = Integer.parseInt(f[at++]);
        Map<Uuid, Integer> counts = new HashMap<>();
        Map<Uuid, Integer> indexes = new HashMap<>();
        for (int t = 0; t < nTopics; t++) {
            counts.put(topicId(t), Integer.parseInt(f[at++]));
            indexes.put(topicId(t), t);
        }
        int nMembers = Integer.parseInt(f[at++]);
        Map<String, MemberSubscriptionAndAssignmentImpl> members = new LinkedHashMap<>();
        List<String> order = new ArrayList<>();
        for (int m = 0; m < nMembers; m++) {
            String id = unhex(f[at++]);
            String rack = unhex(f[at++]);
            int nSubs = Integer.parseInt(f[at++]);
            Set<Uuid> subs = new HashSet<>();
            for (int s = 0; s < nSubs; s++) {
                subs.add(topicId(Integer.parseInt(f[at++])));
            }
            members.put(id, new MemberSubscriptionAndAssignmentImpl(
                Optional.ofNullable(rack), Optional.empty(), subs, Assignment.EMPTY));
            order.add(id);
        }
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
        GroupAssignment result = assignor.assign(new GroupSpecImpl(members, type, Collections.emptyMap()), describer);
        for (String id : result.members().keySet()) {
            if (!members.containsKey(id)) {
                return "STRAY";
            }
        }
        StringBuilder answer = new StringBuilder();
        for (String id : order) {
            MemberAssignment assignment = result.members().get(id);
            TreeSet<Integer> owned = new TreeSet<>();
            if (assignment != null) {
                for (Map.Entry<Uuid, Set<Integer>> entry : assignment.partitions().entrySet()) {
                    int count = counts.getOrDefault(entry.getKey(), -1);
                    Set<Integer> partitions = entry.getValue();
                    Set<Integer> whole = new HashSet<>();
                    for (int p = 0; p < count; p++) {
                        whole.add(p);
                    }
                    // the set must be exactly 0..count-1, seen both ways, with a consistent hash code
                    if (partitions.size() != count || !whole.equals(partitions) || !partitions.equals(whole)
                            || partitions.hashCode() != whole.hashCode() || new HashSet<>(partitions).size() != count) {
                        return "PARTIAL";
                    }
                    owned.add(indexes.get(entry.getKey()));
                }
            }
            StringBuilder topics = new StringBuilder();
            for (int t : owned) {
                if (topics.length() > 0) {
                    topics.append(',');
                }
                topics.append(t);
            }
            answer.append(topics).append(';');
        }
        return answer.toString();
    }

    static String parse(String value) {
        RackPriority parsed = RackPriority.parse(value);
        String head = parsed.hasPriority() ? Integer.toString(parsed.priority()) : "none";
        return head + " " + hex(parsed.rack()) + " " + (parsed.problem() == null ? 0 : 1);
    }

    static String select(RackPriorityReplicaSelector selector, String rackId) {
        String decoded = RackPriority.parse(rackId).rack();
        ReplicaView leader = replica(0, "leader-rack");
        Set<ReplicaView> replicas = new HashSet<>();
        replicas.add(leader);
        replicas.add(replica(1, decoded == null ? "unused-rack" : decoded));
        replicas.add(replica(2, "elsewhere"));
        PartitionView partition = new PartitionView.DefaultPartitionView(replicas, leader);
        ClientMetadata client = new ClientMetadata.DefaultClientMetadata(rackId, "client", null, null, "PLAINTEXT");
        Optional<ReplicaView> chosen = selector.select(new TopicPartition("t", 0), client, partition);
        return chosen.map(r -> Integer.toString(r.endpoint().id())).orElse("none");
    }

    static String load(String text) throws java.io.IOException {
        java.util.Properties properties = new java.util.Properties();
        properties.load(new java.io.ByteArrayInputStream(text.getBytes(StandardCharsets.ISO_8859_1)));
        TreeSet<String> pairs = new TreeSet<>();
        for (String key : properties.stringPropertyNames()) {
            pairs.add(hex(key) + ":" + hex(properties.getProperty(key)));
        }
        return pairs.isEmpty() ? "EMPTY" : String.join(" ", pairs);
    }

    static ReplicaView replica(int id, String rack) {
        return new ReplicaView.DefaultReplicaView(new Node(id, "host" + id, 9092, rack), 100L, 0L);
    }

    static String unhex(String text) {
        if (text.equals("-")) {
            return null;
        }
        if (text.equals("=")) {
            return "";
        }
        byte[] bytes = new byte[text.length() / 2];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) Integer.parseInt(text.substring(2 * i, 2 * i + 2), 16);
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    static String hex(String text) {
        if (text == null) {
            return "-";
        }
        StringBuilder out = new StringBuilder();
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            out.append(String.format("%02x", b & 0xff));
        }
        return out.length() == 0 ? "=" : out.toString();
    }
}
