package dev.tandem.transaction;

import java.time.Duration;
import java.util.concurrent.Executor;

import org.jspecify.annotations.Nullable;

/**
 * What one {@link CrossClusterTransaction} uses of its manager's collaborators: the narrow context
 * it is given instead of the manager itself. Immutable; every member is thread-safe.
 *
 * @param owner the owner id written into decisions and markers, {@code <id-prefix>.<instance-id>}
 * @param markerTopic the control topic of the participants' marker records
 * @param commitTimeout bound of one participant call (flush, commit, abort, a send's acknowledgement)
 * @param decisionTimeout bound of one decision-log call
 * @param decisionLog where the commit decision is written
 * @param hook called at each protocol step (fault injection)
 * @param listener told of outcomes
 * @param commitExecutor runs the participants' commits in parallel
 * @param pool the slots, to open a participant's producer and to release the slot
 * @param recovery takes over a transaction whose outcome is not final
 * @param consumers the registered consumers and their clusters
 * @param reachability which clusters are known to be unreachable now
 * @param incarnation this run's incarnation, named in every decision, or null without a lease
 * @param databases the database participants, per slot
 */
record TransactionContext(String owner, String markerTopic, Duration commitTimeout, Duration decisionTimeout,
		DecisionLog decisionLog, ProtocolHook hook, TransactionListener listener, Executor commitExecutor,
		ParticipantPool pool, TransactionRecovery recovery, RegisteredConsumers consumers,
		ClusterReachability reachability, @Nullable String incarnation, Databases databases) {
}
