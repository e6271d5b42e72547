// Reads a client .properties file the way Kafka's command-line tools read --command-config
// (org.apache.kafka.common.utils.Utils.loadProps) and prints what Kafka's Java Admin client sees:
// one "node <id> <rack>" line per broker, then "topics <n>" (topics this principal may describe).
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.utils.Utils;

public class CommandConfigCheck {
    public static void main(String[] args) throws Exception {
        Properties props = Utils.loadProps(args[0]);
        props.put("request.timeout.ms", "20000");
        props.put("default.api.timeout.ms", "30000");
        try (Admin admin = Admin.create(props)) {
            for (Node node : admin.describeCluster().nodes().get()) {
                System.out.println("node " + node.id() + " " + node.rack());
            }
            System.out.println("topics " + admin.listTopics().names().get().size());
        }
    }
}
