package dev.tandem.failover;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaCluster;
import dev.tandem.test.EnableEmbeddedKafkaClusters;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A producer and a consumer with the {@link FailoverProfile} and a {@link LeaderCache} keep
 * working across leader changes on a real 3-broker cluster (replication factor 3,
 * {@code min.insync.replicas=2}, {@code replica.fetch.backoff.ms=50}).
 */
// Stops brokers: clusters of its own.
@EnableEmbeddedKafkaClusters(preset = ClusterPreset.EAST3, shared = false)
class LeaderFailoverTests {

	private static final String CLUSTER = "east";

	/** Far below delivery.timeout.ms (120 s): failover must not wait for records to expire. */
	private static final Duration FAILOVER_BOUND = Duration.ofSeconds(10);

	private final EmbeddedKafkaCluster cluster;

	private final LeaderCacheRegistry registry = new LeaderCacheRegistry();

	private final RecordingListener events = new RecordingListener();

	LeaderFailoverTests(EmbeddedKafkaCluster cluster) {
		this.cluster = cluster;
		this.registry.addListener(this.events);
	}

	@AfterEach
	void restartStoppedBrokers() {
		for (Integer brokerId : this.cluster.brokerIds()) {
			if (!this.cluster.runningBrokerIds().contains(brokerId)) {
				this.cluster.restartBroker(brokerId);
			}
		}
	}

	@Test
	void producerKeepsWorkingAfterItsPartitionLeaderIsStoppedGracefully() throws Exception {
		TopicPartition partition = createTopic("graceful-stop");
		try (SteadyProducer producer = steadyProducer(partition, Map.of())) {
			awaitAcknowledged(producer, 100);
			PartitionLeaderDescriptor before = producer.cache().partition(partition).orElseThrow();
			int oldLeader = this.cluster.leader(partition);
			assertThat(before.leaderId()).isEqualTo(oldLeader);
			this.cluster.stopBroker(oldLeader);
			awaitAcknowledged(producer, producer.acknowledged() + 200);
			producer.stop();
			assertFailedOver(producer, partition, before, this.cluster.leader(partition));
			assertThat(this.cluster.leader(partition)).isNotEqualTo(oldLeader);
			assertEveryAcknowledgedRecordOnceAndInOrder(producer, partition);
		}
	}

	@Test
	void producerKeepsWorkingAfterLeadershipMoves() throws Exception {
		TopicPartition partition = createTopic("leadership-move");
		try (SteadyProducer producer = steadyProducer(partition, Map.of())) {
			awaitAcknowledged(producer, 100);
			PartitionLeaderDescriptor before = producer.cache().partition(partition).orElseThrow();
			int target = otherReplica(partition);
			this.cluster.moveLeadership(partition, target);
			awaitAcknowledged(producer, producer.acknowledged() + 200);
			producer.stop();
			assertFailedOver(producer, partition, before, target);
			assertEveryAcknowledgedRecordOnceAndInOrder(producer, partition);
		}
	}

	@Test
	void retryTowardsALeaderWithANewerEpochIsNotHeldBackByRetryBackoff() throws Exception {
		TopicPartition partition = createTopic("hinted-retry");
		Duration backoff = Duration.ofSeconds(5);
		Map<String, Object> slowRetries = Map.of("retry.backoff.ms", backoff.toMillis(), "retry.backoff.max.ms",
				backoff.toMillis());
		try (SteadyProducer producer = steadyProducer(partition, slowRetries)) {
			// the first metadata look-ups of a new topic may wait for the slow backoff
			await().atMost(Duration.ofSeconds(30)).until(() -> producer.acknowledged() >= 100);
			producer.resetMaxLatency();
			PartitionLeaderDescriptor before = producer.cache().partition(partition).orElseThrow();
			int target = otherReplica(partition);
			this.cluster.moveLeadership(partition, target);
			awaitAcknowledged(producer, producer.acknowledged() + 200);
			producer.stop();
			assertFailedOver(producer, partition, before, target);
			// KIP-951: the NOT_LEADER_OR_FOLLOWER response names the new leader, the retry goes
			// there at once
			assertThat(producer.maxLatency()).isLessThan(backoff.dividedBy(2));
		}
	}

	@Test
	void consumerCacheShowsTheNewLeaderAndHowLongFetchingPaused() throws Exception {
		TopicPartition partition = createTopic("consumer-move");
		AtomicBoolean polling = new AtomicBoolean(true);
		List<LeaderCache> consumerCache = new CopyOnWriteArrayList<>();
		Map<String, Object> properties = FailoverProfile.standard().consumerProperties(this.cluster.consumerProperties());
		Thread poller = new Thread(() -> {
			try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(
					this.registry.instrument(CLUSTER, ClientType.CONSUMER, properties))) {
				consumerCache.add(this.registry.bind(CLUSTER, consumer));
				consumer.assign(List.of(partition));
				while (polling.get()) {
					consumer.poll(Duration.ofMillis(100));
				}
			}
		}, "consumer-move-poller");
		poller.start();
		try (SteadyProducer producer = steadyProducer(partition, Map.of())) {
			await().atMost(FAILOVER_BOUND).until(() -> !consumerCache.isEmpty()
					&& consumerCache.get(0).partition(partition).map(PartitionLeaderDescriptor::successes).orElse(0L) > 10);
			LeaderCache cache = consumerCache.get(0);
			PartitionLeaderDescriptor before = cache.partition(partition).orElseThrow();
			int target = otherReplica(partition);
			this.cluster.moveLeadership(partition, target);
			await().atMost(FAILOVER_BOUND)
				.untilAsserted(() -> assertThat(cache.partition(partition).orElseThrow().failovers()).isPositive());
			PartitionLeaderDescriptor after = cache.partition(partition).orElseThrow();
			assertThat(after.leaderId()).isEqualTo(target);
			assertThat(after.leaderEpoch()).isGreaterThan(before.leaderEpoch());
			assertThat(after.lastFailoverDuration()).isNotNull().isLessThan(FAILOVER_BOUND);
			assertThat(cache.describe().leaderEpochsKnown()).isTrue();
		}
		finally {
			polling.set(false);
			poller.join(10_000);
		}
		assertThat(this.registry.caches()).noneMatch((cache) -> cache.clientType() == ClientType.CONSUMER);
	}

	private TopicPartition createTopic(String topic) {
		this.cluster.createTopic(topic, 1, (short) 3);
		return new TopicPartition(topic, 0);
	}

	private SteadyProducer steadyProducer(TopicPartition partition, Map<String, Object> overrides) {
		Map<String, Object> properties = this.cluster.producerProperties();
		properties.putAll(overrides);
		return new SteadyProducer(this.registry, CLUSTER, FailoverProfile.standard().producerProperties(properties),
				partition);
	}

	private int otherReplica(TopicPartition partition) {
		int leader = this.cluster.leader(partition);
		return this.cluster.replicas(partition).stream().filter((id) -> id != leader).findFirst().orElseThrow();
	}

	private static void awaitAcknowledged(SteadyProducer producer, long count) {
		FailoverAssertions.awaitAcknowledged(producer, count, FAILOVER_BOUND);
	}

	private void assertFailedOver(SteadyProducer producer, TopicPartition partition, PartitionLeaderDescriptor before,
			int newLeader) {
		FailoverAssertions.assertFailedOver(producer, partition, before, newLeader, this.events, FAILOVER_BOUND);
	}

	private void assertEveryAcknowledgedRecordOnceAndInOrder(SteadyProducer producer, TopicPartition partition) {
		FailoverAssertions.assertEveryAcknowledgedRecordOnceAndInOrder(producer, this.cluster.bootstrapServers(),
				partition);
	}

}
