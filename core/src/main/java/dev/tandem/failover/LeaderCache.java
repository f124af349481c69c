package dev.tandem.failover;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.failover.internals.LeaderSource;
import dev.tandem.failover.internals.LeaderSource.LeaderTerm;

/**
 * The partition leaders one Kafka client knows, with how often and how fast they changed:
 * per partition the leader id, leader epoch, endpoint, when it last changed, the number of
 * changes and the last failover duration (KIP-951's leader discovery made visible).
 * <p>
 * <b>Fed from the client itself, never from extra requests.</b> A cache is created by the
 * client's interceptor ({@link LeaderTrackingProducerInterceptor},
 * {@link LeaderTrackingConsumerInterceptor}; see
 * {@link LeaderCacheRegistry#instrument}) and attached to the client's metadata by
 * {@link LeaderCacheRegistry#bind}. Leaders and epochs are read from the client's cached
 * metadata (see {@link LeaderSource} for why and how), which kafka-clients updates from
 * metadata responses and from the leader hints in {@code NOT_LEADER_OR_FOLLOWER} responses.
 * Producers feed it on every acknowledgement (on the producer's I/O thread: a volatile read
 * and an identity comparison unless the metadata changed, plus one uncontended lock per
 * partition); consumers on every non-empty poll. {@link #refresh()} (called by every
 * {@code describe} method) also picks up changes of partitions without traffic.
 * <p>
 * <b>Failover duration.</b> A failover completes at the first success on a partition whose
 * leader (or leader epoch) differs from the one of the previous success. For producers it
 * starts at the first attempt of the oldest record in that first successful batch, taken as
 * the record's create timestamp ({@code RecordMetadata.timestamp()} for producer-assigned
 * {@code CreateTime}): that record was the first one sent to the old leader and retried. It
 * is an upper bound that includes {@code linger.ms} and any queueing; if the timestamp is not
 * plausible (set by the application, or {@code LogAppendTime}), the time since the previous
 * success is used instead. For consumers the duration is the time since the previous
 * non-empty fetch from the old leader: the time to resume fetching, exact under steady
 * traffic, an upper bound otherwise. A partition that moved while idle reports the latency
 * of its first record on the new leader.
 * <p>
 * <b>Brokers gone.</b> {@link #reachability()} tells from the same metadata whether any
 * broker still answers the client: {@link BrokerReachability#UNREACHABLE} once a metadata
 * request has waited longer than the client's {@code request.timeout.ms} (every known broker
 * and, with KIP-899 rebootstrap, every bootstrap address silent), long before queued records
 * expire after {@code delivery.timeout.ms}. Entering and leaving that state is logged (WARN,
 * INFO) with the cluster, client id and {@code bootstrap.servers}; producers check it at most
 * once a second as they send, and every {@code describe} method checks it.
 * <p>
 * Instances are thread-safe; descriptors are immutable snapshots.
 *
 * @author Tandem
 * @since 0.1.0
 * @see <a href="https://cwiki.apache.org/confluence/display/KAFKA/KIP-951%3A+Leader+discovery+optimisations+for+the+client">KIP-951</a>
 */
public final class LeaderCache {

	private static final Logger logger = LoggerFactory.getLogger(LeaderCache.class);

	private static final Comparator<PartitionLeaderDescriptor> ORDER = Comparator
		.comparing(PartitionLeaderDescriptor::topic)
		.thenComparingInt(PartitionLeaderDescriptor::partition);

	private final String cluster;

	private final String clientId;

	private final ClientType clientType;

	private final long deliveryTimeoutMs;

	private final long requestTimeoutMs;

	private final String bootstrapServers;

	private final long createdMs;

	private final AtomicReference<BrokerReachability> reachability = new AtomicReference<>(BrokerReachability.UNKNOWN);

	private long unreachableSinceMs = -1;

	/** When a check first saw the pending metadata request, or -1; guarded by reachability. */
	private long pendingSinceMs = -1;

	/** The last update time when {@link #pendingSinceMs} was set. */
	private long pendingLastUpdateMs = LeaderTerm.UNKNOWN;

	private volatile long nextReachabilityCheckMs;

	/** The registry's dispatcher, which isolates the failures of each registered listener. */
	private final LeaderCacheListener listener;

	private final LongSupplier clock;

	private final Map<TopicPartition, PartitionLeaderState> partitions = new ConcurrentHashMap<>();

	private final Set<String> topics = ConcurrentHashMap.newKeySet();

	private volatile @Nullable LeaderSource source;

	private volatile boolean closed;

	LeaderCache(String cluster, String clientId, ClientType clientType, long deliveryTimeoutMs,
			long requestTimeoutMs, String bootstrapServers, LeaderCacheListener listener, LongSupplier clock) {
		this.cluster = Objects.requireNonNull(cluster, "cluster must not be null");
		this.clientId = Objects.requireNonNull(clientId, "clientId must not be null");
		this.clientType = Objects.requireNonNull(clientType, "clientType must not be null");
		this.deliveryTimeoutMs = deliveryTimeoutMs;
		this.requestTimeoutMs = requestTimeoutMs;
		this.bootstrapServers = Objects.requireNonNull(bootstrapServers, "bootstrapServers must not be null");
		this.listener = Objects.requireNonNull(listener, "listener must not be null");
		this.clock = Objects.requireNonNull(clock, "clock must not be null");
		this.createdMs = clock.getAsLong();
	}

	/**
	 * Return the name of the cluster the client talks to.
	 * @return the cluster name given to {@link LeaderCacheRegistry#instrument}
	 * @since 0.1.0
	 */
	public String cluster() {
		return this.cluster;
	}

	/**
	 * Return the client's {@code client.id}, as kafka-clients resolved it (generated ids such
	 * as {@code producer-1} included).
	 * @return the client id
	 * @since 0.1.0
	 */
	public String clientId() {
		return this.clientId;
	}

	/**
	 * Return the kind of client.
	 * @return {@link ClientType#PRODUCER} or {@link ClientType#CONSUMER}
	 * @since 0.1.0
	 */
	public ClientType clientType() {
		return this.clientType;
	}

	/**
	 * Return whether the cache is attached to its client's metadata
	 * ({@link LeaderCacheRegistry#bind}); before that it records only successes and failures.
	 * @return whether bound
	 * @since 0.1.0
	 */
	public boolean isBound() {
		return this.source != null;
	}

	/**
	 * Return whether the client was closed; a closed client's cache is dropped from its
	 * registry.
	 * @return whether closed
	 * @since 0.1.0
	 */
	public boolean isClosed() {
		return this.closed;
	}

	/**
	 * Read the client's cached metadata for every partition of every topic the client has
	 * used, recording leader changes. Cheap (no request to any broker); a no-op when the
	 * metadata has not changed since the last call.
	 * @since 0.1.0
	 */
	public void refresh() {
		LeaderSource source = this.source;
		if (source == null) {
			return;
		}
		Object version;
		try {
			version = source.version();
		}
		catch (RuntimeException ex) {
			logger.debug("Cannot read the metadata of client '{}' on cluster '{}'", this.clientId, this.cluster, ex);
			return;
		}
		long nowMs = this.clock.getAsLong();
		for (String topic : this.topics) {
			List<Integer> numbers;
			try {
				numbers = source.partitions(version, topic);
			}
			catch (RuntimeException ex) {
				logger.debug("Cannot read partitions of '{}' from client '{}' on cluster '{}'", topic, this.clientId,
						this.cluster, ex);
				continue;
			}
			for (Integer number : numbers) {
				TopicPartition partition = new TopicPartition(topic, number);
				PartitionLeaderState state = state(partition);
				LeaderChangeEvent change;
				synchronized (state) {
					if (state.version == version) {
						continue;
					}
					change = state.apply(source.leader(version, partition), version, nowMs);
				}
				publish(change);
			}
		}
	}

	/**
	 * Return what the client knows about one partition's leader.
	 * @param partition the partition
	 * @return the descriptor, or empty if the client has not used the partition's topic
	 * @since 0.1.0
	 */
	public Optional<PartitionLeaderDescriptor> partition(TopicPartition partition) {
		refresh();
		PartitionLeaderState state = this.partitions.get(partition);
		return (state != null) ? Optional.of(state.describe()) : Optional.empty();
	}

	/**
	 * Return what the client knows about the leaders of one topic's partitions.
	 * @param topic the topic
	 * @return the descriptors ordered by partition, empty if the client has not used the
	 * topic
	 * @since 0.1.0
	 */
	public List<PartitionLeaderDescriptor> topic(String topic) {
		refresh();
		List<PartitionLeaderDescriptor> descriptors = new ArrayList<>();
		this.partitions.forEach((partition, state) -> {
			if (partition.topic().equals(topic)) {
				descriptors.add(state.describe());
			}
		});
		descriptors.sort(ORDER);
		return descriptors;
	}

	/**
	 * Return everything the client knows about partition leaders.
	 * @return an immutable snapshot
	 * @since 0.1.0
	 */
	public ClientLeadersDescriptor describe() {
		refresh();
		List<PartitionLeaderDescriptor> descriptors = new ArrayList<>(this.partitions.size());
		this.partitions.values().forEach((state) -> descriptors.add(state.describe()));
		descriptors.sort(ORDER);
		return describe(descriptors);
	}

	/**
	 * Return what the client knows about one topic, as a client descriptor.
	 */
	ClientLeadersDescriptor describe(String topic) {
		return describe(topic(topic));
	}

	private ClientLeadersDescriptor describe(List<PartitionLeaderDescriptor> descriptors) {
		LeaderSource source = this.source;
		BrokerReachability brokers = reachability();
		long lastUpdate = (source != null && source.metadataTimesKnown()) ? source.lastMetadataUpdateMs()
				: LeaderTerm.UNKNOWN;
		long unreachableSince;
		synchronized (this.reachability) {
			unreachableSince = (brokers == BrokerReachability.UNREACHABLE) ? this.unreachableSinceMs : -1;
		}
		return new ClientLeadersDescriptor(this.cluster, this.clientId, this.clientType,
				source != null && source.epochs(), brokers,
				(lastUpdate != LeaderTerm.UNKNOWN) ? Instant.ofEpochMilli(lastUpdate) : null,
				(unreachableSince >= 0) ? Instant.ofEpochMilli(unreachableSince) : null, descriptors);
	}

	/**
	 * Return whether the client's brokers answer it, judged from its own metadata: no request
	 * to any broker. Logs a WARN when the client becomes {@link BrokerReachability#UNREACHABLE}
	 * and an INFO when it reaches a broker again.
	 * @return the current state; {@link BrokerReachability#UNKNOWN} if the cache is not bound
	 * or cannot read the client's metadata
	 * @since 0.1.0
	 */
	public BrokerReachability reachability() {
		BrokerReachability current;
		ReachabilityEvent event;
		synchronized (this.reachability) {
			event = checkReachability(this.clock.getAsLong());
			current = this.reachability.get();
		}
		publish(event);
		return current;
	}

	/**
	 * Update {@link #reachability}, log a change to or from UNREACHABLE and return it as an
	 * event to publish once the lock is released; called with the lock held.
	 */
	private @Nullable ReachabilityEvent checkReachability(long nowMs) {
		LeaderSource source = this.source;
		BrokerReachability current = BrokerReachability.UNKNOWN;
		long lastUpdate = LeaderTerm.UNKNOWN;
		if (source != null && source.metadataTimesKnown()) {
			try {
				lastUpdate = source.lastMetadataUpdateMs();
				current = (lastUpdate != LeaderTerm.UNKNOWN) ? BrokerReachability.REACHABLE : BrokerReachability.UNKNOWN;
				if (!source.metadataUpdatePending()) {
					this.pendingSinceMs = -1;
				}
				else {
					// The client does not say when it asked; the first check that sees the request
					// pending (with no answer since) stands in for it.
					if (this.pendingSinceMs < 0 || this.pendingLastUpdateMs != lastUpdate) {
						this.pendingSinceMs = (lastUpdate != LeaderTerm.UNKNOWN) ? nowMs : this.createdMs;
						this.pendingLastUpdateMs = lastUpdate;
					}
					if (nowMs - this.pendingSinceMs > this.requestTimeoutMs) {
						current = BrokerReachability.UNREACHABLE;
					}
				}
			}
			catch (RuntimeException ex) {
				logger.debug("Cannot read the metadata of client '{}' on cluster '{}'", this.clientId, this.cluster, ex);
			}
		}
		BrokerReachability previous = this.reachability.getAndSet(current);
		ReachabilityEvent event = null;
		if (current == BrokerReachability.UNREACHABLE && previous != BrokerReachability.UNREACHABLE) {
			this.unreachableSinceMs = nowMs;
			event = new ReachabilityEvent(this.cluster, this.clientId, this.clientType, previous, current,
					Instant.ofEpochMilli(nowMs), null);
			logger.warn("No broker of cluster '{}' has answered {} '{}' for at least {} ms (more than its "
					+ "request.timeout.ms, {} ms; last metadata {}): every broker it knew is down or gone, and its bootstrap.servers [{}] "
					+ "lead to none. {}; make bootstrap.servers reach "
					+ "the cluster's current brokers", this.cluster, this.clientType.name().toLowerCase(Locale.ROOT),
					this.clientId, nowMs - this.pendingSinceMs,
					this.requestTimeoutMs,
					(lastUpdate != LeaderTerm.UNKNOWN) ? Instant.ofEpochMilli(lastUpdate) : "never",
					this.bootstrapServers, (this.clientType == ClientType.PRODUCER)
							? "Records wait and fail after delivery.timeout.ms" : "Polls return nothing meanwhile");
		}
		else if (previous == BrokerReachability.UNREACHABLE && current != BrokerReachability.UNREACHABLE) {
			event = new ReachabilityEvent(this.cluster, this.clientId, this.clientType, previous, current,
					Instant.ofEpochMilli(nowMs), Duration.ofMillis(nowMs - this.unreachableSinceMs));
		}
		if (previous == BrokerReachability.UNREACHABLE && current == BrokerReachability.REACHABLE) {
			logger.info("{} '{}' reaches the brokers of cluster '{}' again, {} ms after it was found unreachable",
					this.clientType.name().charAt(0) + this.clientType.name().substring(1).toLowerCase(Locale.ROOT),
					this.clientId, this.cluster, nowMs - this.unreachableSinceMs);
		}
		return event;
	}

	/**
	 * Check {@link #reachability()} at most once a second; called by the producer interceptor
	 * for every record sent, so that a producer whose brokers are gone is reported even if
	 * nobody reads the cache.
	 */
	void onSend() {
		long nowMs = this.clock.getAsLong();
		if (nowMs >= this.nextReachabilityCheckMs) {
			this.nextReachabilityCheckMs = nowMs + 1000;
			reachability();
		}
	}

	void bind(LeaderSource source) {
		this.source = source;
		refresh();
	}

	void close() {
		this.closed = true;
		this.source = null;
	}

	/**
	 * Record a producer acknowledgement; called by the interceptor on the producer's I/O
	 * thread for every record.
	 */
	void onAcknowledgement(@Nullable RecordMetadata metadata, @Nullable Exception exception) {
		if (metadata == null || metadata.partition() < 0) {
			return;
		}
		TopicPartition partition = new TopicPartition(metadata.topic(), metadata.partition());
		PartitionLeaderState state = state(partition);
		long nowMs = this.clock.getAsLong();
		LeaderChangeEvent change = null;
		FailoverEvent failover = null;
		LeaderSource source = this.source;
		Object version = (source != null && source.hotPathSafe()) ? source.version() : null;
		synchronized (state) {
			if (version != null && state.version != version) {
				change = state.apply(source.leader(version, partition), version, nowMs);
			}
			if (exception == null) {
				long timestamp = metadata.timestamp();
				long startMs = (metadata.hasTimestamp() && timestamp <= nowMs
						&& nowMs - timestamp <= this.deliveryTimeoutMs) ? timestamp : state.lastSuccessMs;
				failover = state.success(nowMs, startMs);
			}
			else {
				state.failure(exception);
			}
		}
		publish(change);
		publish(failover);
	}

	/**
	 * Record the records a consumer's poll returned; called by the interceptor on the polling
	 * thread.
	 */
	void onConsume(ConsumerRecords<?, ?> records) {
		if (records.isEmpty()) {
			return;
		}
		LeaderSource source = this.source;
		Object version = (source != null) ? source.version() : null;
		long nowMs = this.clock.getAsLong();
		for (TopicPartition partition : records.partitions()) {
			List<? extends ConsumerRecord<?, ?>> fetched = records.records(partition);
			int recordEpoch = fetched.isEmpty() ? LeaderTerm.UNKNOWN
					: fetched.get(fetched.size() - 1).leaderEpoch().orElse(LeaderTerm.UNKNOWN);
			PartitionLeaderState state = state(partition);
			LeaderChangeEvent change = null;
			FailoverEvent failover;
			synchronized (state) {
				if (version != null && state.version != version) {
					change = state.apply(source.leader(version, partition), version, nowMs);
				}
				if (recordEpoch > state.leaderEpoch && (version == null || state.leaderId == LeaderTerm.UNKNOWN)) {
					// only the records tell: a newer epoch than any seen
					LeaderChangeEvent recordChange = state.apply(
							new LeaderTerm(state.leaderId, recordEpoch, state.leaderNode), state.version, nowMs);
					change = (change != null) ? change : recordChange;
				}
				failover = state.success(nowMs, state.lastSuccessMs);
			}
			publish(change);
			publish(failover);
		}
	}

	private PartitionLeaderState state(TopicPartition partition) {
		PartitionLeaderState state = this.partitions.get(partition);
		if (state != null) {
			return state;
		}
		this.topics.add(partition.topic());
		return this.partitions.computeIfAbsent(partition, (tp) -> new PartitionLeaderState(this.cluster, this.clientId, this.clientType, tp));
	}

	private void publish(@Nullable LeaderChangeEvent event) {
		if (event == null) {
			return;
		}
		logger.debug("Client '{}' on cluster '{}' sees leader {} (epoch {}) for {}-{}, was {}", this.clientId,
				this.cluster, event.leaderId(), event.leaderEpoch(), event.topic(), event.partition(),
				event.previousLeaderId());
		this.listener.leaderChanged(event);
	}

	private void publish(@Nullable ReachabilityEvent event) {
		if (event == null) {
			return;
		}
		this.listener.reachabilityChanged(event);
	}

	private void publish(@Nullable FailoverEvent event) {
		if (event == null) {
			return;
		}
		logger.debug("Client '{}' on cluster '{}' failed over {}-{} from leader {} to {} in {} ms", this.clientId,
				this.cluster, event.topic(), event.partition(), event.previousLeaderId(), event.leaderId(),
				event.duration().toMillis());
		this.listener.failoverCompleted(event);
	}

	@Override
	public String toString() {
		return "LeaderCache{cluster=" + this.cluster + ", clientId=" + this.clientId + ", type=" + this.clientType
				+ ", partitions=" + this.partitions.size() + "}";
	}

}
