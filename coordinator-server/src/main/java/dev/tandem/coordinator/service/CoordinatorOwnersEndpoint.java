package dev.tandem.coordinator.service;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

import dev.tandem.coordinator.server.CoordinatorServer;
import dev.tandem.coordinator.state.TransactionRecord;
import dev.tandem.transaction.DecisionState;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * {@code /actuator/coordinatorowners}: every owner ({@code <id-prefix>.<instance-id>}) with a
 * record in this peer's replica of the decision table, with its records per state and the
 * decision time of its oldest in-doubt transaction, and every instance lease: who is alive, until
 * when, who took over whom, and the runs before the holder (the run history). A read of this peer's replica: a follower may lag the leader by a
 * few entries.
 *
 * @since 0.1.0
 */
@Endpoint(id = "coordinatorowners")
public class CoordinatorOwnersEndpoint {

	private final CoordinatorServer server;

	/**
	 * Creates the endpoint.
	 * @param server the peer whose replica is read
	 */
	public CoordinatorOwnersEndpoint(CoordinatorServer server) {
		this.server = Objects.requireNonNull(server, "server");
	}

	/**
	 * Lists the owners.
	 * @return the owners, by owner id
	 */
	@ReadOperation
	public OwnersDescriptor owners() {
		Map<String, long[]> counts = new TreeMap<>();
		List<LeaseDescriptor> leases = this.server.stateMachine()
			.read((table) -> table.leases()
				.stream()
				.map((lease) -> new LeaseDescriptor(lease.owner(), lease.incarnation(),
						Instant.ofEpochMilli(lease.expiresAtMs()), lease.claimedBy(), lease.takenOver(), lease.released(),
						lease.pastRuns()
							.stream()
							.map((run) -> new PastRunDescriptor(run.incarnation(), Instant.ofEpochMilli(run.leftAtMs())))
							.toList()))
				.toList());
		this.server.stateMachine().read((table) -> {
			for (TransactionRecord record : table.records()) {
				long[] owner = counts.computeIfAbsent(record.owner(), (id) -> new long[] { 0, 0, 0, Long.MAX_VALUE });
				owner[index(record.state())]++;
				if (record.state() == DecisionState.DECIDED && record.decision() != null) {
					owner[3] = Math.min(owner[3], record.decision().decidedAtMs());
				}
			}
			return null;
		});
		List<OwnerDescriptor> owners = counts.entrySet()
			.stream()
			.map((entry) -> new OwnerDescriptor(entry.getKey(), entry.getValue()[0], entry.getValue()[1],
					entry.getValue()[2],
					(entry.getValue()[3] != Long.MAX_VALUE) ? Instant.ofEpochMilli(entry.getValue()[3]) : null))
			.toList();
		return new OwnersDescriptor(this.server.peerId(), this.server.status().role().name(), owners, leases);
	}

	private static int index(DecisionState state) {
		return switch (state) {
			case DECIDED -> 0;
			case COMPLETED -> 1;
			default -> 2;
		};
	}

	/**
	 * The owners of this peer's replica.
	 *
	 * @param peerId the peer that answered
	 * @param role its Raft role (a follower's view may lag)
	 * @param owners every owner with a record
	 * @param leases every instance lease, by owner id
	 * @since 0.1.0
	 */
	public record OwnersDescriptor(String peerId, String role, List<OwnerDescriptor> owners,
			List<LeaseDescriptor> leases) {

	}

	/**
	 * One instance's lease.
	 *
	 * @param owner the owner id ({@code <id-prefix>.<instance-id>})
	 * @param incarnation the run of the instance that holds it
	 * @param expiresAt when it expires unless renewed (the leader's clock)
	 * @param claimedBy the instance that took it for dead and claimed it, or {@code null}
	 * @param takenOver whether that claimant finished taking over its transactions
	 * @param released whether its run released it (a clean close, or a start-up that failed with
	 *     nothing left to fence): the next run takes it at once, and nobody claims it
	 * @param pastRuns the runs that held it before {@code incarnation}, oldest first (the lease's run
	 *     history, issue 26: a restart or a claimant fences every one of them)
	 * @since 0.1.0
	 */
	public record LeaseDescriptor(String owner, String incarnation, Instant expiresAt, @Nullable String claimedBy,
			boolean takenOver, boolean released, List<PastRunDescriptor> pastRuns) {

	}

	/**
	 * One run in a lease's history.
	 *
	 * @param incarnation the run
	 * @param leftAt when it stopped holding the lease (its last expiry, or its release; the
	 *     leader's clock)
	 * @since 0.1.0
	 */
	public record PastRunDescriptor(String incarnation, Instant leftAt) {

	}

	/**
	 * One owner's records.
	 *
	 * @param owner the owner id
	 * @param inDoubt DECIDED records not yet completed
	 * @param completed COMPLETED records not yet purged
	 * @param aborted ABORTED records not yet purged
	 * @param oldestInDoubtDecidedAt decision time of the oldest in-doubt transaction, or
	 *     {@code null} when none
	 * @since 0.1.0
	 */
	public record OwnerDescriptor(String owner, long inDoubt, long completed, long aborted,
			@Nullable Instant oldestInDoubtDecidedAt) {

	}

}
