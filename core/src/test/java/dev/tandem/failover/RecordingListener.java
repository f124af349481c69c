package dev.tandem.failover;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Keeps every leader change and failover a {@link LeaderCacheRegistry} reports, for tests.
 */
final class RecordingListener implements LeaderCacheListener {

	final List<LeaderChangeEvent> changes = new CopyOnWriteArrayList<>();

	final List<FailoverEvent> failovers = new CopyOnWriteArrayList<>();

	@Override
	public void leaderChanged(LeaderChangeEvent event) {
		this.changes.add(event);
	}

	@Override
	public void failoverCompleted(FailoverEvent event) {
		this.failovers.add(event);
	}

}
