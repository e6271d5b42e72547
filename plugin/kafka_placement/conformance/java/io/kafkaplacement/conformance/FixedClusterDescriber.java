/*
 * kafka-placement conformance helper (our own code, compiled at run time with javac).
 *
 * A ClusterDescriber over a fixed list of brokers, handed to StripedReplicaPlacer.place();
 * directories are not part of placement, so every broker reports the unassigned directory.
 */
package io.kafkaplacement.conformance;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;

import org.apache.kafka.common.DirectoryId;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.metadata.placement.ClusterDescriber;
import org.apache.kafka.metadata.placement.UsableBroker;

public final class FixedClusterDescriber implements ClusterDescriber {
    private final List<UsableBroker> brokers = new ArrayList<>();

    /** ids[i], racks[i] (null = no rack), fenced[i] describe broker i, in iteration order. */
    public FixedClusterDescriber(int[] ids, String[] racks, boolean[] fenced) {
        for (int i = 0; i < ids.length; i++) {
            brokers.add(new UsableBroker(ids[i], Optional.ofNullable(racks[i]), fenced[i]));
        }
    }

    @Override
    public Iterator<UsableBroker> usableBrokers() {
        return brokers.iterator();
    }

    @Override
    public Uuid defaultDir(int brokerId) {
        return DirectoryId.UNASSIGNED;
    }
}
