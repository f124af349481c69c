package dev.tandem.coordinator.server;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

import dev.tandem.coordinator.security.AccessPolicy;
import dev.tandem.coordinator.state.AccessScope;
import dev.tandem.coordinator.state.Command;
import dev.tandem.coordinator.state.CoordinatorQuotas;
import dev.tandem.coordinator.state.DecisionCodecException;
import dev.tandem.coordinator.state.DecisionTable;
import dev.tandem.coordinator.state.Grant;
import dev.tandem.coordinator.state.MessageCodec;
import dev.tandem.coordinator.state.Operation;
import dev.tandem.coordinator.state.TransactionRecord;
import dev.tandem.transaction.TransactionIds;
import org.jspecify.annotations.Nullable;

/**
 * Decides, on the leader and before the log, whether a caller may send a command or a query: its
 * {@link Grant} must cover every {@link AccessScope} (owners, transaction ids bound to their owner,
 * administrative operations), and the command must keep the caller within its
 * {@link CoordinatorQuotas}. Reads the decision table through the state machine's read lock.
 * <p>
 * Thread-safe: holds no state of its own.
 *
 * @since 0.1.0
 */
final class CommandAuthorizer {

	private final AccessPolicy policy;

	private final CoordinatorQuotas quotas;

	private final TableReader table;

	/**
	 * Creates an authorizer.
	 * @param policy who may act for which owners
	 * @param quotas what one identity's owners may hold
	 * @param table reads the decision table under the state machine's read lock
	 */
	CommandAuthorizer(AccessPolicy policy, CoordinatorQuotas quotas, TableReader table) {
		this.policy = Objects.requireNonNull(policy, "policy");
		this.quotas = Objects.requireNonNull(quotas, "quotas");
		this.table = Objects.requireNonNull(table, "table");
	}

	/**
	 * Returns what a caller may act for.
	 * @param identity the caller's certificate identity, or {@code null} when unauthenticated
	 * @return the grant
	 */
	Grant grantFor(@Nullable String identity) {
		return this.policy.grantFor(identity);
	}

	/**
	 * Returns whether every caller may do everything (no TLS).
	 * @return whether the policy is open
	 */
	private boolean isOpen() {
		return this.policy.isOpen();
	}

	/**
	 * Returns a request that came without the identity envelope of the peer's
	 * {@link CallerIdentityInterceptor} as a plain-text caller's: every request to a
	 * {@link CoordinatorServer} passes that interceptor, so only a state machine hosted outside one
	 * sees a bare payload, and only the open policy accepts it.
	 * @param payload the request's bytes
	 * @return the payload with no identity
	 * @throws DecisionCodecException if the policy is not open
	 */
	MessageCodec.Envelope barePayload(byte[] payload) {
		if (!isOpen()) {
			throw new DecisionCodecException("Request without the identity envelope of the peer's interceptor");
		}
		return new MessageCodec.Envelope(null, payload);
	}

	/**
	 * Returns why a caller may not send a command, or {@code null} when it may: an operation
	 * outside its grant, or a command past its quotas. Reads the table once, under one read lock.
	 * @param grant the caller's grant
	 * @param command the command
	 * @return the refusal, or {@code null}
	 */
	@Nullable Refusal commandRefusal(Grant grant, Command command) {
		if (grant.isAll() || grant.admin()) {
			return null;
		}
		return this.table.read((table) -> {
			for (Operation operation : command.operations()) {
				String denied = refusal(grant, operation.scopes(), operation.getClass().getSimpleName(), table);
				if (denied != null) {
					return new Refusal(false, denied);
				}
			}
			String overQuota = quotaRefusal(grant, command, table);
			return (overQuota != null) ? new Refusal(true, overQuota) : null;
		});
	}

	/**
	 * Returns why a caller may not ask a query, or {@code null} when it may.
	 * @param grant the caller's grant
	 * @param scopes what the query reads
	 * @param what the query's name, for the message
	 * @return the refusal, or {@code null}
	 */
	@Nullable String queryRefusal(Grant grant, List<AccessScope> scopes, String what) {
		if (grant.isAll() || grant.admin()) {
			return null;
		}
		return this.table.read((table) -> refusal(grant, scopes, what, table));
	}

	/**
	 * Returns why a command would take a limited grant past its quotas, or {@code null}. Counts what
	 * the command would add (ids and owners the table does not hold yet, each once); reads the
	 * leader's table, which may trail the log by the commands on their way: a bound, not a count.
	 */
	private @Nullable String quotaRefusal(Grant grant, Command command, DecisionTable table) {
		Set<String> decides = new HashSet<>();
		Set<String> aborts = new HashSet<>();
		Set<String> leases = new HashSet<>();
		for (Operation operation : command.operations()) {
			if (operation instanceof Operation.Decide decide && table.record(decide.decision().transactionId()) == null) {
				decides.add(decide.decision().transactionId());
			}
			else if (operation instanceof Operation.Abort abort && table.record(abort.transactionId()) == null) {
				aborts.add(abort.transactionId());
			}
			else if (operation instanceof Operation.RenewLease renew && !table.hasLease(renew.owner())) {
				leases.add(renew.owner());
			}
		}
		if (!aborts.isEmpty()) {
			int aborted = table.abortedRecords(grant);
			if (aborted + aborts.size() > this.quotas.maxAborted()) {
				return "identity '" + grant.identity() + "' holds " + aborted + " aborted records and may hold at most "
						+ this.quotas.maxAborted() + " (tandem.coordinator.server.quotas.max-aborted)";
			}
		}
		if (!decides.isEmpty()) {
			int open = table.openDecisions(grant);
			if (open + decides.size() > this.quotas.maxOpenDecisions()) {
				return "identity '" + grant.identity() + "' holds " + open + " decided, not completed transactions "
						+ "and may hold at most " + this.quotas.maxOpenDecisions()
						+ " (tandem.coordinator.server.quotas.max-open-decisions)";
			}
		}
		if (!leases.isEmpty()) {
			int held = table.leaseCount(grant);
			if (held + leases.size() > this.quotas.maxLeases()) {
				return "identity '" + grant.identity() + "' holds " + held + " instance leases and may hold at most "
						+ this.quotas.maxLeases() + " (tandem.coordinator.server.quotas.max-leases)";
			}
		}
		return null;
	}

	/**
	 * Returns why a grant does not cover the scopes, or {@code null} when it does. Reads the
	 * owner of an existing record for a transaction scope.
	 */
	private static @Nullable String refusal(Grant grant, List<AccessScope> scopes, String what, DecisionTable table) {
		if (grant.ownerPrefixes().isEmpty()) {
			return "identity '" + grant.identity() + "' may not act for any owner (" + what
					+ " refused); grant it id prefixes in tandem.coordinator.server.authorization.apps";
		}
		for (AccessScope scope : scopes) {
			if (scope instanceof AccessScope.Admin) {
				return what + " is an administrative operation and identity '" + grant.identity()
						+ "' is not an admin (tandem.coordinator.server.authorization.admins)";
			}
			String owner = null;
			if (scope instanceof AccessScope.Owner ownerScope) {
				owner = ownerScope.owner();
			}
			else if (scope instanceof AccessScope.TransactionFor transaction) {
				owner = transaction.owner();
				String unbound = grant.coversOwner(owner) ? bindingRefusal(transaction, what, table) : null;
				if (unbound != null) {
					return unbound;
				}
			}
			else if (scope instanceof AccessScope.TransactionOf transaction) {
				TransactionRecord record = table.record(transaction.transactionId());
				owner = (record != null) ? record.owner() : null;
			}
			if (owner != null && !grant.coversOwner(owner)) {
				return "identity '" + grant.identity() + "' may act for owners with id prefixes " + grant.ownerPrefixes()
						+ " only, not for owner '" + owner + "' (" + what + " refused)";
			}
		}
		return null;
	}

	/**
	 * Returns why a transaction id is not the named owner's to decide or abort, or {@code null}:
	 * the id must be {@code <owner>-<uuid>} and any record of it the owner's.
	 */
	private static @Nullable String bindingRefusal(AccessScope.TransactionFor transaction, String what,
			DecisionTable table) {
		if (!TransactionIds.isOf(transaction.transactionId(), transaction.owner())) {
			return "transaction id '" + transaction.transactionId() + "' is not an id of owner '" + transaction.owner()
					+ "' (<owner>-<uuid>): an app decides and aborts only its own transactions (" + what + " refused)";
		}
		TransactionRecord existing = table.record(transaction.transactionId());
		return (existing != null && !existing.owner().equals(transaction.owner()))
				? "transaction id '" + transaction.transactionId() + "' is recorded for another owner (" + what + " refused)"
				: null;
	}

	/**
	 * Why a command is refused.
	 *
	 * @param quota whether a quota refuses it (retriable later), else the grant does not cover it
	 * @param reason the message for the caller
	 */
	record Refusal(boolean quota, String reason) {

	}

	/** Reads the decision table under the owner's read lock. */
	@FunctionalInterface
	interface TableReader {

		<T> T read(Function<DecisionTable, T> reader);

	}

}
