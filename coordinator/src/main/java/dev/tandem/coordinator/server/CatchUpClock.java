package dev.tandem.coordinator.server;

import java.util.HashMap;
import java.util.Map;

/**
 * Measures for how long a replica has trailed a target index, per replica: the time since the
 * oldest target (a leader's commit index) that the replica has been seen not to reach yet.
 * <p>
 * A replica that keeps up under load is behind only by the entries in flight, and reaches every
 * target it was measured against by the next observation: its time behind starts again from
 * zero each time. A replica that stopped catching up keeps the first target it missed, so its
 * time behind grows from the first observation of that target on. The resolution is the
 * interval between observations ({@link CoordinatorServer} observes every minimum election
 * timeout and on every status read).
 * <p>
 * Thread-safe.
 */
final class CatchUpClock {

	private final Map<String, Target> targets = new HashMap<>();

	/**
	 * Records an observation and returns for how long the replica has trailed.
	 * @param replica the replica's id
	 * @param reached the highest index the replica reached (applied or committed), {@code -1}
	 *     when none
	 * @param target the index it should reach (the leader's commit index now)
	 * @param nowNanos the time of the observation, {@link System#nanoTime()}
	 * @return milliseconds since the replica was first seen short of a target it has not
	 *     reached yet, zero or more; 0 when it reached {@code target}
	 */
	synchronized long behindMs(String replica, long reached, long target, long nowNanos) {
		if (reached >= target) {
			this.targets.remove(replica);
			return 0;
		}
		Target oldest = this.targets.get(replica);
		if (oldest == null || reached >= oldest.index()) {
			oldest = new Target(target, nowNanos);
			this.targets.put(replica, oldest);
		}
		return Math.max(0, (nowNanos - oldest.sinceNanos()) / 1_000_000);
	}

	/**
	 * Forgets a replica (no longer measured, for example because this peer stopped leading).
	 * @param replica the replica's id
	 */
	synchronized void forget(String replica) {
		this.targets.remove(replica);
	}

	private record Target(long index, long sinceNanos) {

	}

}
