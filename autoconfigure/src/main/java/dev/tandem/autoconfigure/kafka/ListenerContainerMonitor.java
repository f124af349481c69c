package dev.tandem.autoconfigure.kafka;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.ApplicationListener;
import org.springframework.context.SmartLifecycle;
import org.springframework.kafka.event.ConsumerStartedEvent;
import org.springframework.kafka.listener.AbstractMessageListenerContainer;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.listener.MessageListenerContainer;

import dev.tandem.autoconfigure.kafka.ListenerContainerStatus.FailedRecord;
import dev.tandem.autoconfigure.kafka.ListenerContainerStatus.State;
import dev.tandem.text.DurationText;
import dev.tandem.autoconfigure.transaction.FailedRecordException;
import dev.tandem.clients.BoundedAdmin;

/**
 * Watches Tandem's listener containers (those whose record interceptor is a
 * {@link TandemListenerInterceptor}) so that none stops or stalls silently: a container stopped
 * by a failed record is {@link State#FAILED} with that record until it is started again; a
 * running one whose delivered records have waited longer than the stall threshold without a
 * commit of its group is {@link State#STALLED}. Stalls are found by a background check every
 * quarter of the threshold (at most every 10 seconds) that compares the offsets delivered to each
 * container (reported by the interceptor) with its group's committed offsets (one Admin call per
 * group with something waiting); turning stalled and back is logged once each. Thread-safe.
 *
 * @since 0.1.0
 */
public class ListenerContainerMonitor implements ListenerContainerStatuses, ApplicationListener<ConsumerStartedEvent>,
		SmartLifecycle, DisposableBean {

	private static final Logger logger = LoggerFactory.getLogger(ListenerContainerMonitor.class);

	/** The property that decides what happens to a record that failed every attempt. */
	static final String FAILED_RECORD_PROPERTY = "tandem.listener.failed-record";

	private static final Duration MAX_CHECK_INTERVAL = Duration.ofSeconds(10);

	private static final Duration MIN_CHECK_INTERVAL = Duration.ofMillis(100);

	private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(5);

	private final Supplier<? extends Collection<? extends MessageListenerContainer>> containers;

	private final Function<String, Map<String, Object>> adminConfig;

	private final Duration stallThreshold;

	/** By (group, partition): the first and next offsets delivered to a listener. */
	private final Map<GroupPartition, Delivered> delivered = new ConcurrentHashMap<>();

	/** By container id: the record that stopped it. */
	private final Map<String, FailedRecord> failures = new ConcurrentHashMap<>();

	/** By container id: what the last background check found. */
	private final Map<String, Progress> progress = new ConcurrentHashMap<>();

	/** By cluster: the Admin client of the background check (its thread only). */
	private final Map<String, Admin> admins = new HashMap<>();

	private @Nullable ScheduledExecutorService checker;

	/**
	 * Creates a monitor.
	 * @param containers the application's listener containers (Spring Kafka's endpoint registry);
	 *     those that are not Tandem's are ignored
	 * @param adminConfig Admin client properties of a cluster, by cluster name
	 * @param stallThreshold how long delivered records may wait without a commit before a
	 *     container is reported stalled; zero turns the background check off
	 * @throws IllegalArgumentException if the threshold is negative
	 */
	public ListenerContainerMonitor(Supplier<? extends Collection<? extends MessageListenerContainer>> containers,
			Function<String, Map<String, Object>> adminConfig, Duration stallThreshold) {
		if (stallThreshold.isNegative()) {
			throw new IllegalArgumentException("stallThreshold must not be negative but was " + stallThreshold);
		}
		this.containers = containers;
		this.adminConfig = adminConfig;
		this.stallThreshold = stallThreshold;
	}

	/**
	 * Returns the interval of the background check: a quarter of the threshold, between 100 ms
	 * and 10 s.
	 * @return the interval, or zero when the check is off
	 */
	public Duration checkInterval() {
		if (this.stallThreshold.isZero()) {
			return Duration.ZERO;
		}
		Duration quarter = this.stallThreshold.dividedBy(4);
		if (quarter.compareTo(MIN_CHECK_INTERVAL) < 0) {
			return MIN_CHECK_INTERVAL;
		}
		return (quarter.compareTo(MAX_CHECK_INTERVAL) > 0) ? MAX_CHECK_INTERVAL : quarter;
	}

	/**
	 * Records the offsets of a delivery; called by the interceptor on the consumer thread.
	 * @param groupId the consumer's group
	 * @param records the records delivered to the listener
	 */
	void delivered(String groupId, List<? extends ConsumerRecord<?, ?>> records) {
		// one map update per run of records of the same partition (a delivery lists each
		// partition's records together), not one per record
		String topic = null;
		int partition = -1;
		long first = 0;
		long next = 0;
		for (ConsumerRecord<?, ?> record : records) {
			long offset = record.offset();
			if (record.partition() != partition || !record.topic().equals(topic)) {
				if (topic != null) {
					delivered(groupId, topic, partition, first, next);
				}
				topic = record.topic();
				partition = record.partition();
				first = offset;
				next = offset + 1;
			}
			else {
				first = Math.min(first, offset);
				next = Math.max(next, offset + 1);
			}
		}
		if (topic != null) {
			delivered(groupId, topic, partition, first, next);
		}
	}

	private void delivered(String groupId, String topic, int partition, long first, long next) {
		this.delivered.merge(new GroupPartition(groupId, new TopicPartition(topic, partition)), new Delivered(first, next),
				(old, now) -> new Delivered(Math.min(old.first(), now.first()), Math.max(old.next(), now.next())));
	}

	/**
	 * Records that a container is stopping because a record failed every attempt, and logs it at
	 * ERROR in one line with how to go on; the container is {@link State#FAILED} until it starts
	 * again.
	 * @param container the container the error handler was called for (a child container is
	 *     resolved to the listener's container)
	 * @param cluster the cluster it consumes from
	 * @param failure the failed record
	 */
	void failed(MessageListenerContainer container, String cluster, FailedRecordException failure) {
		MessageListenerContainer listener = resolve(container);
		String id = idOf(listener);
		Throwable cause = (failure.getCause() != null) ? failure.getCause() : failure;
		String exception = cause.getClass().getName() + ": " + cause.getMessage();
		String remedy = "fix the cause and start listener container '" + id + "' again (it resumes at this record), "
				+ "or set " + FAILED_RECORD_PROPERTY + "=dead-letter to publish such records to a dead-letter topic "
				+ "and go on";
		this.failures.put(id, new FailedRecord(failure.getTopic(), failure.getPartition(), failure.getOffset(),
				failure.getAttempts(), exception, FAILED_RECORD_PROPERTY, remedy, Instant.now()));
		logger.error("Listener container '{}' of cluster '{}' (group '{}') stopped: record {}-{}@{} failed {} attempt(s) "
				+ "({}); its offset is not committed. To go on, {}.", id, cluster, listener.getGroupId(), failure.getTopic(),
				failure.getPartition(), failure.getOffset(), failure.getAttempts(), exception, remedy);
	}

	/**
	 * Clears the failure of a container that starts again.
	 * @param event a consumer of a container started
	 */
	@Override
	public void onApplicationEvent(ConsumerStartedEvent event) {
		MessageListenerContainer container = event.getContainer(MessageListenerContainer.class);
		if (container != null) {
			String id = idOf(resolve(container));
			if (this.failures.remove(id) != null) {
				logger.info("Listener container '{}' started again after a failed record", id);
			}
		}
	}

	@Override
	public List<ListenerContainerStatus> statuses() {
		List<ListenerContainerStatus> statuses = new ArrayList<>();
		for (MessageListenerContainer container : this.containers.get()) {
			String cluster = clusterOf(container);
			if (cluster == null) {
				continue;
			}
			String id = idOf(container);
			FailedRecord failure = this.failures.get(id);
			Progress progress = this.progress.getOrDefault(id, Progress.NONE);
			State state;
			if (failure != null) {
				state = State.FAILED;
			}
			else if (!container.isRunning()) {
				state = State.STOPPED;
			}
			else if (container.isPauseRequested()) {
				state = State.PAUSED;
			}
			else if (progress.stalled()) {
				state = State.STALLED;
			}
			else {
				state = State.RUNNING;
			}
			boolean waiting = state != State.FAILED && state != State.STOPPED && progress.waiting() > 0;
			statuses.add(new ListenerContainerStatus(id, cluster, container.getGroupId(), state,
					waiting ? progress.waiting() : 0,
					waiting ? Math.max(0, System.currentTimeMillis() - progress.waitingSinceMs()) : 0, failure));
		}
		return statuses;
	}

	/**
	 * One background check: for every running, unpaused Tandem container with records delivered
	 * beyond what its group last committed, reads the group's committed offsets and updates its
	 * stall state. Runs on the monitor's thread (package-private for tests).
	 */
	void check() {
		long now = System.currentTimeMillis();
		Map<String, Map<TopicPartition, OffsetAndMetadata>> committedByGroup = new HashMap<>();
		for (MessageListenerContainer container : this.containers.get()) {
			String cluster = clusterOf(container);
			String group = container.getGroupId();
			if (cluster == null || group == null) {
				continue;
			}
			String id = idOf(container);
			Progress last = this.progress.getOrDefault(id, Progress.NONE);
			if (!container.isRunning() || container.isPauseRequested() || this.failures.containsKey(id)) {
				this.progress.remove(id);
				continue;
			}
			Map<TopicPartition, Delivered> assigned = new HashMap<>();
			for (TopicPartition partition : container.getAssignedPartitions()) {
				Delivered offsets = this.delivered.get(new GroupPartition(group, partition));
				if (offsets != null) {
					assigned.put(partition, offsets);
				}
			}
			if (!last.mayWait(assigned)) {
				this.progress.put(id, Progress.NONE);
				continue;
			}
			Map<TopicPartition, OffsetAndMetadata> committed;
			try {
				committed = committedByGroup.computeIfAbsent(cluster + "/" + group, (key) -> committedOffsets(cluster, group));
			}
			catch (RuntimeException ex) {
				logger.debug("Could not read the committed offsets of group '{}' on cluster '{}': {}", group, cluster,
						String.valueOf(ex));
				continue;
			}
			Map<TopicPartition, Long> mine = new HashMap<>();
			long waiting = 0;
			for (Map.Entry<TopicPartition, Delivered> entry : assigned.entrySet()) {
				OffsetAndMetadata offset = committed.get(entry.getKey());
				long from = (offset != null) ? offset.offset() : entry.getValue().first();
				mine.put(entry.getKey(), from);
				waiting += Math.max(0, entry.getValue().next() - from);
			}
			Progress next;
			if (waiting == 0) {
				next = new Progress(mine, 0, 0, false);
			}
			else if (last.waiting() == 0 || !mine.equals(last.committed())) {
				next = new Progress(mine, waiting, now, false);
			}
			else {
				next = new Progress(mine, waiting, last.waitingSinceMs(),
						now - last.waitingSinceMs() >= this.stallThreshold.toMillis());
			}
			this.progress.put(id, next);
			if (next.stalled() && !last.stalled()) {
				logger.error("Listener container '{}' of cluster '{}' (group '{}') stalled: {} record(s) delivered to it "
						+ "have waited {} ms without a commit (partitions {}). Look for a listener call that does not "
						+ "return or a transaction that keeps failing in the log above; "
						+ "tandem.listener.stall-threshold ({}) sets when this is reported.", id, cluster, group, waiting,
						now - next.waitingSinceMs(), assigned.keySet(), DurationText.of(this.stallThreshold));
			}
			else if (!next.stalled() && last.stalled()) {
				logger.info("Listener container '{}' of cluster '{}' (group '{}') commits again", id, cluster, group);
			}
		}
	}

	private Map<TopicPartition, OffsetAndMetadata> committedOffsets(String cluster, String group) {
		Admin admin = this.admins.computeIfAbsent(cluster,
				(name) -> BoundedAdmin.create(this.adminConfig.apply(name), ADMIN_TIMEOUT));
		try {
			Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
				.partitionsToOffsetAndMetadata()
				.get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
			Map<TopicPartition, OffsetAndMetadata> present = new HashMap<>();
			offsets.forEach((partition, offset) -> {
				if (offset != null) {
					present.put(partition, offset);
				}
			});
			return present;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	/** The listener's container of a container the error handler or an event names (maybe a child). */
	private MessageListenerContainer resolve(MessageListenerContainer container) {
		for (MessageListenerContainer candidate : this.containers.get()) {
			if (candidate == container) {
				return candidate;
			}
			if (candidate instanceof ConcurrentMessageListenerContainer<?, ?> concurrent
					&& concurrent.getContainers().stream().anyMatch((child) -> child == container)) {
				return candidate;
			}
		}
		return container;
	}

	private static String idOf(MessageListenerContainer container) {
		String id = container.getListenerId();
		return (id != null) ? id : String.valueOf(container);
	}

	/** The cluster of a Tandem container, or null for a container that is not Tandem's. */
	static @Nullable String clusterOf(MessageListenerContainer container) {
		if (container instanceof AbstractMessageListenerContainer<?, ?> abstractContainer
				&& abstractContainer.getRecordInterceptor() instanceof TandemListenerInterceptor interceptor) {
			return interceptor.cluster();
		}
		return null;
	}

	@Override
	public synchronized void start() {
		Duration interval = checkInterval();
		if (this.checker != null || interval.isZero()) {
			return;
		}
		ScheduledExecutorService checker = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "tandem-listener-monitor");
			thread.setDaemon(true);
			return thread;
		});
		checker.scheduleWithFixedDelay(() -> {
			try {
				check();
			}
			catch (RuntimeException ex) {
				logger.warn("Listener container check failed: {}", String.valueOf(ex));
			}
		}, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
		this.checker = checker;
	}

	@Override
	public synchronized void stop() {
		ScheduledExecutorService checker = this.checker;
		this.checker = null;
		if (checker != null) {
			checker.shutdownNow();
			try {
				checker.awaitTermination(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		this.admins.values().forEach((admin) -> admin.close(Duration.ZERO));
		this.admins.clear();
	}

	@Override
	public synchronized boolean isRunning() {
		return this.checker != null;
	}

	@Override
	public void destroy() {
		stop();
	}

	private record GroupPartition(String group, TopicPartition partition) {
	}

	/** The first offset delivered, and the offset after the last delivered. */
	private record Delivered(long first, long next) {
	}

	/**
	 * What the last check found for a container: its group's committed offsets (the first
	 * delivered offset where none), the records waiting, since when they wait without a commit.
	 */
	private record Progress(Map<TopicPartition, Long> committed, long waiting, long waitingSinceMs, boolean stalled) {

		static final Progress NONE = new Progress(Map.of(), 0, 0, false);

		/** Whether some partition was delivered beyond what its group committed at the last check. */
		boolean mayWait(Map<TopicPartition, Delivered> assigned) {
			for (Map.Entry<TopicPartition, Delivered> entry : assigned.entrySet()) {
				Long from = this.committed.get(entry.getKey());
				if (from == null || entry.getValue().next() > from) {
					return true;
				}
			}
			return false;
		}

	}

}
