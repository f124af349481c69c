package dev.tandem.mirror;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.apache.kafka.common.errors.UnknownMemberIdException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the instances of one mirror from keeping their positions in both places at once
 * ({@link MirrorSettings#positions()}): instances of the two modes would share the partitions
 * through two unrelated groups (the mirror's group on the source and on the target) and copy the
 * same records twice, as during a rolling upgrade from a version that kept them on the source.
 * <ul>
 * <li>An instance with {@link MirrorSettings.Positions#TARGET} copies nothing while the mirror's
 * group on the source has members ({@link #otherModeActive()}): it waits until they stopped, then
 * starts from their committed positions (the source group's offsets are the fallback where the
 * target group has none).</li>
 * <li>An instance with {@link MirrorSettings.Positions#SOURCE} and one target waits while the
 * mirror's group on the target has members, then moves the target group's positions that are
 * ahead of the source group's into the source group ({@link #takePositionsFromTarget}), so
 * switching back from the target to the source copies nothing twice.</li>
 * </ul>
 * A guard, not a lock: two instances of different modes that start within one check interval of
 * each other can both copy until the next check (the mirror's topic refresh interval).
 * Used by the mirror's thread only; not thread-safe.
 */
final class PositionsGuard implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(PositionsGuard.class);

	private final MirrorSettings settings;

	private final Admin source;

	private final @Nullable Admin target;

	private final Duration timeout;

	/** The last answer of {@link #otherModeActive()}, kept when the cluster does not answer. */
	private boolean otherActive;

	/**
	 * Creates the guard.
	 * @param settings the mirror's settings
	 * @param source an admin client of the source cluster (closed with the guard)
	 * @param target an admin client of the one target, or {@code null} with several targets
	 * (closed with the guard)
	 * @param timeout bound of each admin call
	 */
	PositionsGuard(MirrorSettings settings, Admin source, @Nullable Admin target, Duration timeout) {
		this.settings = settings;
		this.source = source;
		this.target = target;
		this.timeout = timeout;
	}

	/**
	 * Returns whether the mirror's group on the cluster where the other mode keeps its positions
	 * has members now (another instance runs in that mode). If the cluster does not answer within
	 * the timeout, the previous answer stands.
	 * @return whether instances of the other mode run
	 */
	boolean otherModeActive() {
		Admin admin = (this.settings.positions() == MirrorSettings.Positions.TARGET) ? this.source : this.target;
		if (admin == null) {
			return false;
		}
		String group = this.settings.consumerGroup();
		try {
			ConsumerGroupDescription description = admin.describeConsumerGroups(List.of(group))
				.describedGroups()
				.get(group)
				.get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
			this.otherActive = !description.members().isEmpty();
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof GroupIdNotFoundException) {
				this.otherActive = false;
			}
			else {
				logger.debug("Mirror {}: could not describe group '{}' ({}); keeping the last answer", describe(), group,
						ex.getCause().toString());
			}
		}
		catch (TimeoutException ex) {
			logger.debug("Mirror {}: describing group '{}' timed out; keeping the last answer", describe(), group);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		return this.otherActive;
	}

	/**
	 * With {@link MirrorSettings.Positions#SOURCE} and one target: sets the source group's offset
	 * of every selected partition whose position in the target group is further on (and of the
	 * same topic incarnation), so that a mirror switched back from the target to the source
	 * continues where it was. Does nothing if the source group has members (another instance
	 * already runs there and owns the positions).
	 * @param remoteTopics remote topic -> source topic, of the selected topics
	 * @param topicIds source topic -> its id, where known
	 * @return the partitions whose source offsets were set, with their offsets
	 * @throws MirrorException if a cluster does not answer
	 */
	Map<TopicPartition, OffsetAndMetadata> takePositionsFromTarget(Map<String, String> remoteTopics,
			Map<String, Uuid> topicIds) {
		Admin targetAdmin = this.target;
		if (targetAdmin == null || this.settings.positions() != MirrorSettings.Positions.SOURCE) {
			return Map.of();
		}
		String group = this.settings.consumerGroup();
		Map<TopicPartition, OffsetAndMetadata> onTarget = offsets(targetAdmin, group, "read the positions on the target");
		Map<TopicPartition, OffsetAndMetadata> onSource = offsets(this.source, group, "read the positions on the source");
		Map<TopicPartition, OffsetAndMetadata> ahead = new LinkedHashMap<>();
		onTarget.forEach((remote, position) -> {
			String topic = remoteTopics.get(remote.topic());
			if (topic == null || position == null) {
				return;
			}
			Uuid topicId = topicIds.get(topic);
			if (!position.metadata().isEmpty() && topicId != null && !position.metadata().equals(topicId.toString())) {
				return; // a position in an earlier incarnation of the topic
			}
			TopicPartition partition = new TopicPartition(topic, remote.partition());
			OffsetAndMetadata current = onSource.get(partition);
			if (current == null || current.offset() < position.offset()) {
				ahead.put(partition, new OffsetAndMetadata(position.offset()));
			}
		});
		if (ahead.isEmpty()) {
			return Map.of();
		}
		try {
			this.source.alterConsumerGroupOffsets(group, ahead).all().get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof GroupNotEmptyException || ex.getCause() instanceof UnknownMemberIdException) {
				logger.info("Mirror {}: the group '{}' on '{}' has members already; its positions stand", describe(), group,
						this.settings.source());
				return Map.of();
			}
			throw new MirrorException("Mirror " + describe() + " could not set the positions of group '" + group + "' on '"
					+ this.settings.source() + "'", ex.getCause());
		}
		catch (TimeoutException ex) {
			throw new MirrorException("Mirror " + describe() + " could not set the positions of group '" + group + "' on '"
					+ this.settings.source() + "' within " + this.timeout.toMillis() + " ms", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return Map.of();
		}
		logger.info("Mirror {}: {} partition(s) continue from the positions the mirror kept on '{}' (group '{}'): {}",
				describe(), ahead.size(), this.settings.targets().get(0), group, ahead);
		return ahead;
	}

	private Map<TopicPartition, OffsetAndMetadata> offsets(Admin admin, String group, String what) {
		try {
			Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
				.partitionsToOffsetAndMetadata()
				.get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
			return (offsets != null) ? offsets : Map.of();
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof GroupIdNotFoundException) {
				return Map.of();
			}
			throw new MirrorException("Mirror " + describe() + " could not " + what + " (group '" + group + "')",
					ex.getCause());
		}
		catch (TimeoutException ex) {
			throw new MirrorException("Mirror " + describe() + " could not " + what + " (group '" + group + "') within "
					+ this.timeout.toMillis() + " ms", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return Map.of();
		}
	}

	private String describe() {
		return this.settings.source() + "->" + this.settings.targets();
	}

	@Override
	public void close() {
		this.source.close(Duration.ofSeconds(5));
		if (this.target != null) {
			this.target.close(Duration.ofSeconds(5));
		}
	}

}
