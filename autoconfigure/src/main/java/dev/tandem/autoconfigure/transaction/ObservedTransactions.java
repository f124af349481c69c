package dev.tandem.autoconfigure.transaction;

import org.jspecify.annotations.Nullable;

import dev.tandem.autoconfigure.transaction.TandemTransactionObserver.Observed;
import dev.tandem.autoconfigure.transaction.TandemTransactionObserver.Outcome;
import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionTemplate;
import dev.tandem.transaction.CrossClusterTransactionTemplate.TransactionCallback;
import dev.tandem.transaction.HeuristicOutcomeException;
import dev.tandem.transaction.InDoubtTransactionException;
import dev.tandem.transaction.TransactionState;

/**
 * Runs work in a new cross-cluster transaction under a {@link TandemTransactionObserver}.
 */
final class ObservedTransactions {

	private ObservedTransactions() {
	}

	static <T, E extends Throwable> T execute(TandemTransactionObserver observer, CrossClusterTransactionTemplate template,
			TransactionCallback<T, E> work) throws E {
		try (Observed observed = observer.start()) {
			CrossClusterTransaction[] begun = new CrossClusterTransaction[1];
			try {
				T result = template.executeChecked((@Nullable CrossClusterTransaction transaction) -> {
					if (transaction != null && begun[0] == null) {
						begun[0] = transaction;
						observed.begun(transaction);
					}
					return work.doInTransaction(transaction);
				});
				observed.ended(Outcome.COMMITTED, null);
				return result;
			}
			catch (InDoubtTransactionException ex) {
				observed.ended(Outcome.IN_DOUBT, ex);
				throw ex;
			}
			catch (HeuristicOutcomeException ex) {
				observed.ended(Outcome.HEURISTIC, ex);
				throw ex;
			}
			catch (Throwable ex) {
				// a rollback rule may let the transaction commit and still rethrow
				boolean committed = begun[0] != null && begun[0].state() == TransactionState.COMMITTED;
				observed.ended(committed ? Outcome.COMMITTED : Outcome.ABORTED, ex);
				throw ex;
			}
		}
	}

}
