package dev.tandem.coordinator.state;

import java.util.Objects;

/**
 * A read-only request to the {@link DecisionTable}.
 *
 * @since 0.1.0
 */
public sealed interface Query {

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

	}

	/**
	 * Asks for the number of records per state; answered by {@link QueryReply.CountsReply}.
	 *
	 * @since 0.1.0
	 */
	record CountsQuery() implements Query {

	}

	/**
	 * Asks for every lease; answered by {@link QueryReply.LeasesReply}.
	 *
	 * @since 0.1.0
	 */
	record LeasesQuery() implements Query {

	}

	/**
	 * Asks for the in-doubt decisions of every owner; answered by {@link QueryReply.InDoubtReply}.
	 *
	 * @since 0.1.0
	 */
	record AllInDoubtQuery() implements Query {

	}

}
