// franz-go side of benchmarks/bench_vs_java.py: times franz-go's sticky balancers through their public API
// (kgo.StickyBalancer / kgo.CooperativeStickyBalancer) on a group the Python side wrote to a JSON file, and
// prints one JSON line. Each member's JoinGroup metadata is what a franz-go client sends: the balancer's
// own JoinGroupMetadata(topics, owned partitions, generation).
//
// Usage: franzbench INPUT.json sticky|cooperative-sticky REPS [OUTPUT.json]
//
// INPUT: {"topics": {"t": partitions, ...},
//         "members": [{"id": "m", "topics": ["t", ...], "owned": {"t": [p, ...]}, "generation": g}, ...]}
// OUTPUT (optional): the last call's plan, {"member": {"topic": [partitions]}}, for the caller to check.
//
// Times: "balance" is GroupMemberBalancer.BalanceOrError alone (the member metadata decoded beforehand, as the
// Python and Java sides get their members already decoded); "decode_and_balance" adds
// GroupBalancer.MemberBalancer (decoding every member's metadata). The first call is cold, warm is the
// median of the others.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type inputMember struct {
	ID         string             `json:"id"`
	Topics     []string           `json:"topics"`
	Owned      map[string][]int32 `json:"owned"`
	Generation int32              `json:"generation"`
}

type input struct {
	Topics  map[string]int32 `json:"topics"`
	Members []inputMember    `json:"members"`
}

func median(values []time.Duration) time.Duration {
	sorted := append([]time.Duration(nil), values...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	return sorted[len(sorted)/2]
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) < 4 {
		fail("usage: franzbench INPUT.json sticky|cooperative-sticky REPS [OUTPUT.json]")
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail("read input: %v", err)
	}
	var in input
	if err := json.Unmarshal(raw, &in); err != nil {
		fail("parse input: %v", err)
	}
	raw = nil
	var balancer kgo.GroupBalancer
	switch os.Args[2] {
	case "sticky":
		balancer = kgo.StickyBalancer()
	case "cooperative-sticky":
		balancer = kgo.CooperativeStickyBalancer()
	default:
		fail("unknown balancer %q", os.Args[2])
	}
	reps, err := strconv.Atoi(os.Args[3])
	if err != nil || reps < 1 {
		fail("bad REPS %q", os.Args[3])
	}

	// what the group coordinator hands the leader: every member's id and its JoinGroup metadata, sorted by
	// member id (franz-go's leader sorts them so before balancing)
	members := make([]kmsg.JoinGroupResponseMember, 0, len(in.Members))
	for _, m := range in.Members {
		topics := append([]string(nil), m.Topics...)
		sort.Strings(topics)
		owned := make(map[string][]int32, len(m.Owned))
		for t, ps := range m.Owned {
			owned[t] = append([]int32(nil), ps...)
			sort.Slice(owned[t], func(i, j int) bool { return owned[t][i] < owned[t][j] })
		}
		member := kmsg.NewJoinGroupResponseMember()
		member.MemberID = m.ID
		member.ProtocolMetadata = balancer.JoinGroupMetadata(topics, owned, m.Generation)
		members = append(members, member)
	}
	sort.Slice(members, func(i, j int) bool { return members[i].MemberID < members[j].MemberID })
	in.Members = nil
	runtime.GC()

	balanceTimes := make([]time.Duration, 0, reps)
	wholeTimes := make([]time.Duration, 0, reps)
	var plan kgo.IntoSyncAssignment
	for i := 0; i < reps; i++ {
		plan = nil
		runtime.GC() // the previous call's garbage is not this call's cost
		t0 := time.Now()
		memberBalancer, _, err := balancer.MemberBalancer(members)
		if err != nil {
			fail("MemberBalancer: %v", err)
		}
		t1 := time.Now()
		// as franz-go's group leader calls it: BalanceOrError when the balancer has it (ConsumerBalancer does)
		if withError, ok := memberBalancer.(kgo.GroupMemberBalancerOrError); ok {
			plan, err = withError.BalanceOrError(in.Topics)
			if err != nil {
				fail("BalanceOrError: %v", err)
			}
		} else {
			plan = memberBalancer.Balance(in.Topics)
		}
		t2 := time.Now()
		balanceTimes = append(balanceTimes, t2.Sub(t1))
		wholeTimes = append(wholeTimes, t2.Sub(t0))
	}
	assigned, maxPerMember := 0, 0
	byMember := plan.(*kgo.BalancePlan).AsMemberIDMap()
	for _, topics := range byMember {
		count := 0
		for _, partitions := range topics {
			count += len(partitions)
		}
		assigned += count
		if count > maxPerMember {
			maxPerMember = count
		}
	}
	if len(os.Args) > 4 {
		out, err := json.Marshal(byMember)
		if err != nil {
			fail("encode plan: %v", err)
		}
		if err := os.WriteFile(os.Args[4], out, 0o644); err != nil {
			fail("write plan: %v", err)
		}
	}
	warm := func(times []time.Duration) time.Duration {
		if len(times) == 1 {
			return times[0]
		}
		return median(times[1:])
	}
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	fmt.Printf("{\"cold_s\": %.6f, \"warm_s\": %.6f, \"decode_and_balance_cold_s\": %.6f, "+
		"\"decode_and_balance_warm_s\": %.6f, \"check\": %d, \"assigned\": %d, \"reps\": %d, "+
		"\"heap_sys_mb\": %.1f, \"go\": %q}\n",
		balanceTimes[0].Seconds(), warm(balanceTimes).Seconds(), wholeTimes[0].Seconds(),
		warm(wholeTimes).Seconds(), maxPerMember, assigned, reps, float64(stats.HeapSys)/1048576,
		runtime.Version())
}
