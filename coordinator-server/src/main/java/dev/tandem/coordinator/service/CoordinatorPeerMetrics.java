package dev.tandem.coordinator.service;

import java.util.List;
import java.util.Objects;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;

import dev.tandem.coordinator.server.CoordinatorServer;
import dev.tandem.coordinator.server.DecisionStateMachine;
import dev.tandem.coordinator.server.FollowerProgress;
import dev.tandem.coordinator.server.PeerRole;
import dev.tandem.coordinator.server.PeerStatus;
import dev.tandem.transaction.DecisionState;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Micrometer meters of the hosted coordinator peer and its state machine, all tagged with
 * {@code peer} (Prometheus names in brackets):
 * <ul>
 * <li>{@code tandem.coordinator.peer.term} [{@code tandem_coordinator_peer_term}]: current
 * Raft term; a term that keeps rising means needless elections;</li>
 * <li>{@code tandem.coordinator.peer.leader}: 1 while this peer leads, else 0;</li>
 * <li>{@code tandem.coordinator.peer.joined}: 1 while a ready leader is known, else 0;</li>
 * <li>{@code tandem.coordinator.peer.commit.index}, {@code ...applied.index},
 * {@code ...last.log.index}: Raft log positions; {@code ...apply.lag}: committed entries not
 * yet applied;</li>
 * <li>{@code tandem.coordinator.peer.follower.lag}: on a follower, the entries it has yet to
 * apply to reach the leader's commit index (0 on the leader, or while no leader is known), and
 * {@code tandem.coordinator.peer.behind.leader} (seconds): for how long it has trailed that
 * commit index (0 while it keeps up); a follower that stays behind is invisible to clients but
 * leaves a group of three without tolerance for another failure;</li>
 * <li>{@code tandem.coordinator.follower.lag} and {@code tandem.coordinator.follower.behind}
 * (seconds), tagged {@code follower} with every other peer of the group: the same as the
 * leader sees each follower (from the commit index the follower reports); 0 on a peer that
 * does not lead;</li>
 * <li>{@code tandem.coordinator.records} tagged {@code state=decided|completed|aborted}: the
 * records the decision table holds on this replica;</li>
 * <li>counters {@code tandem.coordinator.applied.entries} (Raft entries),
 * {@code ...applied.operations}, {@code ...applied.decisions} (decisions per entry is the
 * group-commit factor), {@code tandem.coordinator.leader.changes};</li>
 * <li>counter {@code tandem.coordinator.leader.reads} tagged
 * {@code confirmation=lease|heartbeat|refused}: how this peer, as leader, confirmed its
 * leadership before answering linearizable reads (Raft thesis §6.4).</li>
 * </ul>
 * Thread-safe.
 *
 * @since 0.1.0
 */
public class CoordinatorPeerMetrics implements MeterBinder {

	private final CoordinatorServer server;

	/**
	 * Creates the meters' binder for a peer.
	 * @param server the hosted peer
	 */
	public CoordinatorPeerMetrics(CoordinatorServer server) {
		this.server = Objects.requireNonNull(server, "server");
	}

	private static double oldestInDoubtAgeSeconds(DecisionStateMachine stateMachine) {
		long oldest = stateMachine.read((table) -> table.records()
			.stream()
			.filter((record) -> record.state() == DecisionState.DECIDED && record.decision() != null)
			.mapToLong((record) -> record.decision().decidedAtMs())
			.min()
			.orElse(Long.MAX_VALUE));
		return (oldest == Long.MAX_VALUE) ? 0 : Math.max(0, System.currentTimeMillis() - oldest) / 1000.0;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		List<Tag> tags = List.of(Tag.of("peer", this.server.peerId()));
		gauge(registry, "tandem.coordinator.peer.term", "Current Raft term of this peer", tags, PeerStatus::term);
		gauge(registry, "tandem.coordinator.peer.leader", "1 while this peer leads, else 0", tags,
				(status) -> (status.role() == PeerRole.LEADER) ? 1 : 0);
		gauge(registry, "tandem.coordinator.peer.joined", "1 while this peer knows a ready leader, else 0", tags,
				(status) -> status.hasLeader() ? 1 : 0);
		gauge(registry, "tandem.coordinator.peer.commit.index", "Highest Raft log index known committed", tags,
				PeerStatus::commitIndex);
		gauge(registry, "tandem.coordinator.peer.applied.index", "Highest Raft log index applied", tags,
				PeerStatus::appliedIndex);
		gauge(registry, "tandem.coordinator.peer.last.log.index", "Index of the last entry in the Raft log", tags,
				PeerStatus::lastLogIndex);
		gauge(registry, "tandem.coordinator.peer.apply.lag", "Committed Raft entries not yet applied", tags,
				PeerStatus::applyLag);
		gauge(registry, "tandem.coordinator.peer.follower.lag",
				"Raft entries this follower has yet to apply to reach the leader's commit index", tags,
				PeerStatus::followerLag);
		Gauge.builder("tandem.coordinator.peer.behind.leader", this.server,
				(server) -> server.status().behindLeaderMs() / 1000.0)
			.description("Seconds this follower has trailed the leader's commit index; 0 while it keeps up")
			.baseUnit("seconds")
			.tags(tags)
			.register(registry);
		for (String follower : this.server.group().peers().keySet()) {
			if (follower.equals(this.server.peerId())) {
				continue;
			}
			List<Tag> followerTags = List.of(Tag.of("peer", this.server.peerId()), Tag.of("follower", follower));
			Gauge.builder("tandem.coordinator.follower.lag", this.server,
					(server) -> progress(server, follower, FollowerProgress::lag))
				.description("Raft entries a follower's commit index trails this leader's; 0 when this peer does not lead")
				.tags(followerTags)
				.register(registry);
			Gauge.builder("tandem.coordinator.follower.behind", this.server,
					(server) -> progress(server, follower, FollowerProgress::behindMs) / 1000.0)
				.description("Seconds a follower has trailed this leader's commit index; 0 when this peer does not lead")
				.baseUnit("seconds")
				.tags(followerTags)
				.register(registry);
		}

		DecisionStateMachine stateMachine = this.server.stateMachine();
		Gauge.builder("tandem.coordinator.records", stateMachine, (machine) -> machine.counts().decided())
			.description("Records in this replica's decision table")
			.tags(tags)
			.tag("state", "decided")
			.register(registry);
		Gauge.builder("tandem.coordinator.records", stateMachine, (machine) -> machine.counts().completed())
			.description("Records in this replica's decision table")
			.tags(tags)
			.tag("state", "completed")
			.register(registry);
		Gauge.builder("tandem.coordinator.records", stateMachine, (machine) -> machine.counts().aborted())
			.description("Records in this replica's decision table")
			.tags(tags)
			.tag("state", "aborted")
			.register(registry);
		counter(registry, "tandem.coordinator.applied.entries", "Raft log entries applied by this replica", tags,
				stateMachine, DecisionStateMachine::appliedEntries);
		counter(registry, "tandem.coordinator.applied.operations", "Operations applied by this replica", tags,
				stateMachine, DecisionStateMachine::appliedOperations);
		counter(registry, "tandem.coordinator.applied.decisions", "Decide operations applied by this replica", tags,
				stateMachine, DecisionStateMachine::appliedDecisions);
		counter(registry, "tandem.coordinator.refused.requests",
				"Commands and queries this peer refused because the caller's certificate identity may not act for them",
				tags, stateMachine, DecisionStateMachine::refusedRequests);
		counter(registry, "tandem.coordinator.invalid.requests",
				"Commands this peer refused before the log as malformed or past a field's limit", tags, stateMachine,
				DecisionStateMachine::invalidRequests);
		counter(registry, "tandem.coordinator.quota.refusals",
				"Commands this peer refused before the log because an app identity reached a quota", tags, stateMachine,
				DecisionStateMachine::quotaRefusals);
		counter(registry, "tandem.coordinator.refused.operations",
				"Logged operations this replica refused when applying them (an ERROR names each failure of its own)", tags,
				stateMachine, DecisionStateMachine::refusedOperations);
		counter(registry, "tandem.coordinator.failed.snapshots",
				"Snapshots of this replica that failed; while they fail the Raft log is never purged", tags, stateMachine,
				DecisionStateMachine::failedSnapshots);
		Gauge.builder("tandem.coordinator.oldest.in.doubt.age", stateMachine, CoordinatorPeerMetrics::oldestInDoubtAgeSeconds)
			.description("Seconds since the oldest in-doubt (decided, not completed) transaction of this replica was "
					+ "decided; 0 when none. A steady rise means an owner that does not recover")
			.baseUnit("seconds")
			.tags(tags)
			.register(registry);
		counter(registry, "tandem.coordinator.leader.changes", "Leader changes seen by this replica", tags,
				stateMachine, DecisionStateMachine::leaderChanges);
		String readsDescription = "Linearizable reads served as leader, by how leadership was confirmed";
		FunctionCounter.builder("tandem.coordinator.leader.reads", stateMachine,
				(machine) -> machine.leaderReads().withinLease())
			.description(readsDescription)
			.tags(tags)
			.tag("confirmation", "lease")
			.register(registry);
		FunctionCounter.builder("tandem.coordinator.leader.reads", stateMachine,
				(machine) -> machine.leaderReads().confirmed())
			.description(readsDescription)
			.tags(tags)
			.tag("confirmation", "heartbeat")
			.register(registry);
		FunctionCounter.builder("tandem.coordinator.leader.reads", stateMachine,
				(machine) -> machine.leaderReads().refused())
			.description(readsDescription)
			.tags(tags)
			.tag("confirmation", "refused")
			.register(registry);
	}

	private static double progress(CoordinatorServer server, String follower, ToLongFunction<FollowerProgress> value) {
		return server.status()
			.followers()
			.stream()
			.filter((progress) -> progress.peerId().equals(follower))
			.mapToLong(value)
			.findFirst()
			.orElse(0);
	}

	private void gauge(MeterRegistry registry, String name, String description, List<Tag> tags,
			ToDoubleFunction<PeerStatus> value) {
		Gauge.builder(name, this.server, (server) -> value.applyAsDouble(server.status()))
			.description(description)
			.tags(tags)
			.register(registry);
	}

	private static void counter(MeterRegistry registry, String name, String description, List<Tag> tags,
			DecisionStateMachine stateMachine, ToDoubleFunction<DecisionStateMachine> value) {
		FunctionCounter.builder(name, stateMachine, value).description(description).tags(tags).register(registry);
	}

}
