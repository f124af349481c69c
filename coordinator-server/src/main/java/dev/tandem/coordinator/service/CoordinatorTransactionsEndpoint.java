package dev.tandem.coordinator.service;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

import dev.tandem.coordinator.server.CoordinatorServer;
import dev.tandem.coordinator.state.TransactionRecord;
import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionState;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.convert.DurationStyle;

/**
 * {@code /actuator/coordinatortransactions}: the transactions of this peer's replica of the
 * decision table, filtered by owner, state and age
 * ({@code ?owner=orders.router-0&state=DECIDED&olderThan=5m&limit=100}), oldest first; and
 * one transaction's whole record ({@code /actuator/coordinatortransactions/{id}}), with its
 * participants. Read-only; a follower's view may lag the leader by a few entries.
 *
 * @since 0.1.0
 */
@Endpoint(id = "coordinatortransactions")
public class CoordinatorTransactionsEndpoint {

	/** Largest number of transactions one call lists. */
	public static final int MAX_LIMIT = 1000;

	private final CoordinatorServer server;

	/**
	 * Creates the endpoint.
	 * @param server the peer whose replica is read
	 */
	public CoordinatorTransactionsEndpoint(CoordinatorServer server) {
		this.server = Objects.requireNonNull(server, "server");
	}

	/**
	 * Lists transactions, oldest first.
	 * @param owner only this owner's, or every owner's when {@code null}
	 * @param state only records in this state (DECIDED, COMPLETED, ABORTED), or all
	 * @param olderThan only transactions decided (or aborted) longer ago than this, as
	 *     {@code 30s}, {@code 5m} or {@code PT5M}; or all
	 * @param limit at most this many, 1 to {@value #MAX_LIMIT} (default 100)
	 * @return the matching transactions and how many matched in all
	 * @throws InvalidEndpointRequestException if a parameter is malformed (answered with 400, naming it)
	 */
	@ReadOperation
	public TransactionsDescriptor transactions(@Nullable String owner, @Nullable String state,
			@Nullable String olderThan, @Nullable Integer limit) {
		DecisionState wanted;
		Duration age;
		try {
			wanted = (state != null) ? DecisionState.valueOf(state.trim().toUpperCase(Locale.ROOT)) : null;
		}
		catch (IllegalArgumentException ex) {
			throw invalid("state must be DECIDED, COMPLETED or ABORTED, not '" + state + "'");
		}
		try {
			age = (olderThan != null) ? DurationStyle.detectAndParse(olderThan.trim()) : null;
		}
		catch (IllegalArgumentException ex) {
			throw invalid("olderThan must be a duration such as 30s, 5m or PT5M, not '" + olderThan + "'");
		}
		int max = (limit != null) ? limit : 100;
		if (max < 1 || max > MAX_LIMIT) {
			throw invalid("limit must be between 1 and " + MAX_LIMIT + ": " + max);
		}
		long cutoffMs = (age != null) ? System.currentTimeMillis() - age.toMillis() : Long.MAX_VALUE;
		List<TransactionRecord> matching = this.server.stateMachine()
			.read((table) -> table.records()
				.stream()
				.filter((record) -> owner == null || record.owner().equals(owner))
				.filter((record) -> wanted == null || record.state() == wanted)
				.filter((record) -> startedAtMs(record) <= cutoffMs)
				.toList());
		List<TransactionDescriptor> listed = matching.stream()
			.sorted(Comparator.comparingLong(CoordinatorTransactionsEndpoint::startedAtMs)
				.thenComparing(TransactionRecord::transactionId))
			.limit(max)
			.map((record) -> TransactionDescriptor.of(record, false))
			.toList();
		return new TransactionsDescriptor(this.server.peerId(), matching.size(), listed);
	}

	/**
	 * Returns one transaction's record.
	 * @param transactionId the transaction id
	 * @return the record with its participants, or {@code null} (404) when this replica has
	 *     none (unknown, or purged)
	 */
	@ReadOperation
	public @Nullable TransactionDescriptor transaction(@Selector String transactionId) {
		TransactionRecord record = this.server.stateMachine().read((table) -> table.record(transactionId));
		return (record != null) ? TransactionDescriptor.of(record, true) : null;
	}

	private static InvalidEndpointRequestException invalid(String message) {
		return new InvalidEndpointRequestException(message, message);
	}

	private static long startedAtMs(TransactionRecord record) {
		Decision decision = record.decision();
		return (decision != null) ? decision.decidedAtMs() : record.finishedAtMs();
	}

	/**
	 * A page of transactions.
	 *
	 * @param peerId the peer that answered
	 * @param matched how many transactions matched the filters (more than listed when the
	 *     limit cut the list)
	 * @param transactions the listed transactions, oldest first
	 * @since 0.1.0
	 */
	public record TransactionsDescriptor(String peerId, int matched, List<TransactionDescriptor> transactions) {

	}

	/**
	 * One transaction.
	 *
	 * @param transactionId the transaction id
	 * @param owner the owning app instance
	 * @param state DECIDED (in doubt), COMPLETED or ABORTED
	 * @param decidedAt when it was decided, or {@code null} for an abort
	 * @param finishedAt when it was completed or aborted, or {@code null} while in doubt
	 * @param participants every participant's cluster, transactional id, producer id and
	 *     epoch and marker position (only for one transaction's record), else {@code null}
	 * @since 0.1.0
	 */
	public record TransactionDescriptor(String transactionId, String owner, DecisionState state,
			@Nullable Instant decidedAt, @Nullable Instant finishedAt,
			@Nullable List<Decision.ParticipantRecord> participants) {

		static TransactionDescriptor of(TransactionRecord record, boolean withParticipants) {
			Decision decision = record.decision();
			return new TransactionDescriptor(record.transactionId(), record.owner(), record.state(),
					(decision != null) ? Instant.ofEpochMilli(decision.decidedAtMs()) : null,
					(record.finishedAtMs() >= 0) ? Instant.ofEpochMilli(record.finishedAtMs()) : null,
					(withParticipants && decision != null) ? decision.participants() : null);
		}

	}

}
