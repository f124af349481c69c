package dev.tandem.transaction;

import java.util.List;

import dev.tandem.transaction.Decision.DatabaseRecord;
import dev.tandem.transaction.Decision.ParticipantRecord;

/**
 * What the first stage of a commit ({@link CrossClusterTransaction#prepareToCommit()}) leaves for
 * the second ({@link CrossClusterTransaction#finishCommit(PreparedCommit)}): the participants with
 * work and their marker records.
 * @param working participants with work, in enlistment order
 * @param records their marker records, in the same order (empty when {@code working} is)
 * @param databases the prepared branches of the enlisted databases, in enlistment order
 * @param startNanos when the commit began ({@link System#nanoTime()})
 */
record PreparedCommit(List<Participant> working, List<ParticipantRecord> records, List<DatabaseRecord> databases,
		long startNanos) {

	boolean onePhase() {
		return this.databases.isEmpty() && this.working.size() <= 1;
	}

}
