package dev.tandem.coordinator.state;

import java.util.List;
import java.util.Objects;

/**
 * A read-only request to the {@link DecisionTable}.
 *
 * @since 0.1.0
 */
public sealed interface Query {

	/**
	 * Returns what this query reads, for authorization; empty when any authenticated caller
	 * may ask.
	 * @return the scopes
	 */
	List<AccessScope> scopes();

	/**
	 * Asks for the state of one transaction id; answered by {@link QueryReply.StateReply}.
	 *
	 * @param transactionId the transaction id
	 * @since 0.1.0
	 */
	record StateQuery(String transactionId) implements Query {

		public StateQuery {
			Objects.requireNonNull(transactionId, "transactionId");
		}

		@Override
		public List<AccessScope> scopes() {
			return List.of(new AccessScope.TransactionOf(this.transactionId));
		}

	}

	/**
	 * Asks for one owner's in-doubt decisions; answered by {@link QueryReply.InDoubtReply}.
	 *
	 * @param owner the owning app instance
	 * @since 0.1.0
	 */
	record InDoubtQuery(String owner) implements Query {

		public InDoubtQuery {
			Objects.requireNonNull(owner, "owner");
		}

		@Override
		public List<AccessScope> scopes() {
			return List.of(new AccessScope.Owner(this.owner));
		}

	}

	/**
	 * Asks for the number of records per state; answered by {@link QueryReply.CountsReply}.
	 *
	 * @since 0.1.0
	 */
	record CountsQuery() implements Query {

		@Override
		public List<AccessScope> scopes() {
			return List.of();
		}

	}

	/**
	 * Asks for the leases of one app's instances; answered by {@link QueryReply.LeasesReply}.
	 *
	 * @param idPrefix the app's id prefix
	 * @param withRuns whether the reply carries each lease's run history (past runs, released);
	 *     query type 6, which older peers do not know
	 * @since 0.1.0
	 */
	record LeasesQuery(String idPrefix, boolean withRuns) implements Query {

		/**
		 * A query of the leases without their run history (clients before run histories).
		 * @param idPrefix the app's id prefix
		 */
		public LeasesQuery(String idPrefix) {
			this(idPrefix, false);
		}

		public LeasesQuery {
			Objects.requireNonNull(idPrefix, "idPrefix");
		}

		@Override
		public List<AccessScope> scopes() {
			return List.of(new AccessScope.Owner(this.idPrefix));
		}

	}

	/**
	 * Asks for the in-doubt decisions of every instance of one app; answered by
	 * {@link QueryReply.InDoubtReply}.
	 *
	 * @param idPrefix the app's id prefix
	 * @since 0.1.0
	 */
	record AppInDoubtQuery(String idPrefix) implements Query {

		public AppInDoubtQuery {
			Objects.requireNonNull(idPrefix, "idPrefix");
		}

		@Override
		public List<AccessScope> scopes() {
			return List.of(new AccessScope.Owner(this.idPrefix));
		}

	}

}
