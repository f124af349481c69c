package dev.tandem.coordinator.state;

import java.util.List;
import java.util.Objects;

import dev.tandem.transaction.Decision;
import dev.tandem.transaction.InstanceLease;
import dev.tandem.transaction.DecisionState;

/**
 * The answer to a {@link Query}.
 *
 * @since 0.1.0
 */
public sealed interface QueryReply {

	/**
	 * The state of one transaction id.
	 *
	 * @param state the state, {@link DecisionState#UNKNOWN} when there is no record
	 * @since 0.1.0
	 */
	record StateReply(DecisionState state) implements QueryReply {

		public StateReply {
			Objects.requireNonNull(state, "state");
		}

	}

	/**
	 * One owner's in-doubt decisions, oldest decision first.
	 *
	 * @param decisions the decided but not completed decisions, possibly empty
	 * @since 0.1.0
	 */
	record InDoubtReply(List<Decision> decisions) implements QueryReply {

		public InDoubtReply {
			decisions = List.copyOf(decisions);
		}

	}

	/**
	 * The number of records per state.
	 *
	 * @param counts the counts
	 * @since 0.1.0
	 */
	record CountsReply(DecisionTable.Counts counts) implements QueryReply {

		public CountsReply {
			Objects.requireNonNull(counts, "counts");
		}

	}

	/**
	 * Every lease, by owner id.
	 *
	 * @param leases the leases, possibly empty
	 * @param withRuns whether the reply carries each lease's run history (encoded as reply type 6);
	 *     without it, the leases are sent and read without past runs, never released
	 * @since 0.1.0
	 */
	record LeasesReply(List<InstanceLease> leases, boolean withRuns) implements QueryReply {

		/**
		 * A reply without run histories.
		 * @param leases the leases, possibly empty
		 */
		public LeasesReply(List<InstanceLease> leases) {
			this(leases, false);
		}

		public LeasesReply {
			leases = List.copyOf(leases);
		}

	}

}
