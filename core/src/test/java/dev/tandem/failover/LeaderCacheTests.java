package dev.tandem.failover;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.tandem.failover.internals.LeaderSource;
import dev.tandem.failover.internals.LeaderSource.LeaderTerm;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Unit tests for {@link LeaderCache}: the bookkeeping of leaders, changes and failover
 * durations, driven by a fake metadata source and clock.
 */
class LeaderCacheTests {

	private static final TopicPartition PARTITION = new TopicPartition("orders", 0);

	private final AtomicLong clock = new AtomicLong(1_000_000);

	private final LeaderCacheRegistry registry = new LeaderCacheRegistry(this.clock::get);

	private final FakeSource source = new FakeSource();

	private final List<LeaderChangeEvent> changes = new ArrayList<>();

	private final List<FailoverEvent> failovers = new ArrayList<>();

	private final List<ReachabilityEvent> reachabilityChanges = new ArrayList<>();

	private LeaderCache cache;

	@BeforeEach
	void createCache() {
		this.registry.addListener(new LeaderCacheListener() {

			@Override
			public void leaderChanged(LeaderChangeEvent event) {
				LeaderCacheTests.this.changes.add(event);
			}

			@Override
			public void failoverCompleted(FailoverEvent event) {
				LeaderCacheTests.this.failovers.add(event);
			}

			@Override
			public void reachabilityChanged(ReachabilityEvent event) {
				LeaderCacheTests.this.reachabilityChanges.add(event);
			}

		});
		this.cache = this.registry.register("east", "producer-1", ClientType.PRODUCER,
				Map.of("request.timeout.ms", "10000", "bootstrap.servers", "east-1:9092"));
		this.source.lead(PARTITION, 1, 5);
		this.cache.bind(this.source);
	}

	@Test
	void firstLeaderSeenIsNotAChange() {
		acknowledge(this.clock.get() - 3);
		PartitionLeaderDescriptor descriptor = this.cache.partition(PARTITION).orElseThrow();
		assertThat(descriptor.leaderId()).isEqualTo(1);
		assertThat(descriptor.leaderEpoch()).isEqualTo(5);
		assertThat(descriptor.leaderEndpoint()).isEqualTo("broker1:9092");
		assertThat(descriptor.leaderChanges()).isZero();
		assertThat(descriptor.lastLeaderChange()).isNull();
		assertThat(descriptor.successes()).isEqualTo(1);
		assertThat(this.changes).isEmpty();
	}

	@Test
	void failoverLastsFromTheOldestRetriedRecordToItsAcknowledgementByTheNewLeader() {
		acknowledge(this.clock.get() - 2);
		long firstRetriedRecord = this.clock.addAndGet(10);
		this.clock.addAndGet(140);
		this.source.lead(PARTITION, 2, 6);
		acknowledge(firstRetriedRecord);
		acknowledge(firstRetriedRecord + 1);
		PartitionLeaderDescriptor descriptor = this.cache.partition(PARTITION).orElseThrow();
		assertThat(descriptor.leaderId()).isEqualTo(2);
		assertThat(descriptor.leaderEpoch()).isEqualTo(6);
		assertThat(descriptor.leaderChanges()).isEqualTo(1);
		assertThat(descriptor.failovers()).isEqualTo(1);
		assertThat(descriptor.lastFailoverDuration()).isEqualTo(Duration.ofMillis(140));
		assertThat(this.changes).singleElement().satisfies((event) -> {
			assertThat(event.previousLeaderId()).isEqualTo(1);
			assertThat(event.previousLeaderEpoch()).isEqualTo(5);
			assertThat(event.leaderId()).isEqualTo(2);
			assertThat(event.leaderEpoch()).isEqualTo(6);
		});
		assertThat(this.failovers).singleElement().satisfies((event) -> {
			assertThat(event.previousLeaderId()).isEqualTo(1);
			assertThat(event.duration()).isEqualTo(Duration.ofMillis(140));
		});
	}

	@Test
	void leaderChangeSeenByRefreshBeforeTheFirstSuccessStillEndsInAFailover() {
		acknowledge(this.clock.get());
		this.source.lead(PARTITION, 2, 6);
		assertThat(this.registry.describe().clusters().get("east").clients().get(0).partitions())
			.singleElement()
			.satisfies((descriptor) -> assertThat(descriptor.leaderId()).isEqualTo(2));
		this.clock.addAndGet(50);
		acknowledge(this.clock.get() - 30);
		assertThat(this.failovers).singleElement()
			.satisfies((event) -> assertThat(event.duration()).isEqualTo(Duration.ofMillis(30)));
	}

	@Test
	void newEpochOfTheSameLeaderIsAChange() {
		acknowledge(this.clock.get());
		this.source.lead(PARTITION, 1, 7);
		acknowledge(this.clock.get());
		assertThat(this.cache.partition(PARTITION).orElseThrow().leaderChanges()).isEqualTo(1);
		assertThat(this.failovers).hasSize(1);
	}

	@Test
	void staleMetadataWithAnOlderEpochIsIgnored() {
		acknowledge(this.clock.get());
		this.source.lead(PARTITION, 3, 4);
		acknowledge(this.clock.get());
		PartitionLeaderDescriptor descriptor = this.cache.partition(PARTITION).orElseThrow();
		assertThat(descriptor.leaderId()).isEqualTo(1);
		assertThat(descriptor.leaderEpoch()).isEqualTo(5);
		assertThat(this.changes).isEmpty();
	}

	@Test
	void implausibleRecordTimestampFallsBackToTheTimeSinceThePreviousSuccess() {
		acknowledge(this.clock.get());
		this.clock.addAndGet(300);
		this.source.lead(PARTITION, 2, 6);
		acknowledge(this.clock.get() - Duration.ofDays(3).toMillis());
		assertThat(this.failovers).singleElement()
			.satisfies((event) -> assertThat(event.duration()).isEqualTo(Duration.ofMillis(300)));
	}

	@Test
	void leaderlessPeriodCountsOneChangeWhenTheNewLeaderAppears() {
		acknowledge(this.clock.get());
		this.source.leaderless(PARTITION, 5);
		this.cache.refresh();
		assertThat(this.cache.partition(PARTITION).orElseThrow().leaderId()).isNull();
		this.source.lead(PARTITION, 2, 6);
		this.cache.refresh();
		assertThat(this.cache.partition(PARTITION).orElseThrow().leaderChanges()).isEqualTo(1);
	}

	@Test
	void failedSendsAreCountedWithTheLastError() {
		this.cache.onAcknowledgement(metadata(this.clock.get()),
				new org.apache.kafka.common.errors.TimeoutException("Expiring 1 record(s)"));
		PartitionLeaderDescriptor descriptor = this.cache.partition(PARTITION).orElseThrow();
		assertThat(descriptor.failures()).isEqualTo(1);
		assertThat(descriptor.lastError()).isEqualTo("TimeoutException: Expiring 1 record(s)");
	}

	@Test
	void refreshShowsEveryPartitionOfATopicTheClientUses() {
		this.source.lead(new TopicPartition("orders", 1), 2, 3);
		acknowledge(this.clock.get());
		assertThat(this.cache.topic("orders")).extracting(PartitionLeaderDescriptor::partition).containsExactly(0, 1);
		assertThat(this.registry.describeTopic("east", "orders").clients().get(0).partitions()).hasSize(2);
		assertThat(this.registry.describeTopic("east", "payments").clients().get(0).partitions()).isEmpty();
		assertThat(this.registry.describe("west")).isNull();
	}

	@Test
	void consumerResumesFetchingFromTheNewLeaderAfterTheGapSinceItsLastFetch() {
		LeaderCache consumer = this.registry.register("east", "consumer-1", ClientType.CONSUMER, Map.of());
		consumer.bind(this.source);
		consumer.onConsume(records(5));
		this.clock.addAndGet(220);
		this.source.lead(PARTITION, 2, 6);
		consumer.onConsume(records(6));
		PartitionLeaderDescriptor descriptor = consumer.partition(PARTITION).orElseThrow();
		assertThat(descriptor.leaderId()).isEqualTo(2);
		assertThat(descriptor.lastFailoverDuration()).isEqualTo(Duration.ofMillis(220));
	}

	@Test
	void unboundConsumerLearnsLeaderEpochsFromFetchedRecords() {
		LeaderCache consumer = this.registry.register("east", "consumer-2", ClientType.CONSUMER, Map.of());
		consumer.onConsume(records(5));
		consumer.onConsume(records(6));
		PartitionLeaderDescriptor descriptor = consumer.partition(PARTITION).orElseThrow();
		assertThat(descriptor.leaderId()).isNull();
		assertThat(descriptor.leaderEpoch()).isEqualTo(6);
		assertThat(consumer.describe().leaderEpochsKnown()).isFalse();
	}

	@Test
	void listenerFailureDoesNotReachTheClient() {
		this.registry.addListener(new LeaderCacheListener() {

			@Override
			public void leaderChanged(LeaderChangeEvent event) {
				throw new IllegalStateException("broken meter registry");
			}

		});
		acknowledge(this.clock.get());
		this.source.lead(PARTITION, 2, 6);
		acknowledge(this.clock.get());
		assertThat(this.changes).hasSize(1);
	}

	@Test
	void closedClientsAreDroppedFromTheRegistry() {
		this.registry.remove(this.cache);
		assertThat(this.registry.caches()).isEmpty();
		assertThat(this.cache.isClosed()).isTrue();
	}

	@Test
	void brokersAreUnreachableOnlyWhenAMetadataRequestWaitedLongerThanTheRequestTimeout() {
		// bound before any broker answered: still bootstrapping
		assertThat(this.cache.reachability()).isEqualTo(BrokerReachability.UNKNOWN);
		this.source.metadataAnswered(this.clock.get());
		assertThat(this.cache.reachability()).isEqualTo(BrokerReachability.REACHABLE);
		// answered long ago and nothing pending: an idle, healthy client
		this.clock.addAndGet(60_000);
		assertThat(this.cache.reachability()).isEqualTo(BrokerReachability.REACHABLE);
		// a request is pending: counted from the first check that sees it, not from the old answer
		this.source.metadataRequested();
		assertThat(this.cache.reachability()).isEqualTo(BrokerReachability.REACHABLE);
		this.clock.addAndGet(10_000);
		assertThat(this.cache.reachability()).isEqualTo(BrokerReachability.REACHABLE);
		this.clock.addAndGet(1);
		assertThat(this.cache.reachability()).isEqualTo(BrokerReachability.UNREACHABLE);
		ClientLeadersDescriptor described = this.cache.describe();
		assertThat(described.brokers()).isEqualTo(BrokerReachability.UNREACHABLE);
		assertThat(described.lastMetadataUpdate()).isNotNull();
		assertThat(described.unreachableSince()).isNotNull();
		// answered, then asked again: a new wait starts
		this.source.metadataAnswered(this.clock.get());
		this.source.metadataRequested();
		assertThat(this.cache.reachability()).isEqualTo(BrokerReachability.REACHABLE);
		this.clock.addAndGet(5_000);
		assertThat(this.cache.reachability()).isEqualTo(BrokerReachability.REACHABLE);
		assertThat(this.cache.describe().unreachableSince()).isNull();
	}

	@Test
	void listenersHearOnceWhenAClientLosesAndRegainsItsBrokers() {
		this.source.metadataAnswered(this.clock.get());
		this.source.metadataRequested();
		assertThat(this.registry.checkReachability()).isEmpty();
		this.clock.addAndGet(10_001);
		assertThat(this.registry.checkReachability()).containsExactly(this.cache);
		this.clock.addAndGet(2_000);
		assertThat(this.registry.checkReachability()).containsExactly(this.cache);
		assertThat(this.reachabilityChanges).singleElement().satisfies((lost) -> {
			assertThat(lost.lost()).isTrue();
			assertThat(lost.previous()).isEqualTo(BrokerReachability.REACHABLE);
			assertThat(lost.cluster()).isEqualTo("east");
			assertThat(lost.clientId()).isEqualTo("producer-1");
			assertThat(lost.at().toEpochMilli()).isEqualTo(this.clock.get() - 2_000);
			assertThat(lost.unreachableFor()).isNull();
		});
		this.source.metadataAnswered(this.clock.get());
		assertThat(this.registry.checkReachability()).isEmpty();
		assertThat(this.reachabilityChanges).hasSize(2);
		ReachabilityEvent regained = this.reachabilityChanges.get(1);
		assertThat(regained.lost()).isFalse();
		assertThat(regained.current()).isEqualTo(BrokerReachability.REACHABLE);
		assertThat(regained.unreachableFor()).isEqualTo(Duration.ofMillis(2_000));
	}

	@Test
	void aClientThatNeverReachedABrokerIsUnreachableAfterTheRequestTimeout() {
		this.clock.addAndGet(10_000);
		assertThat(this.cache.reachability()).isEqualTo(BrokerReachability.UNKNOWN);
		this.clock.addAndGet(1);
		assertThat(this.cache.reachability()).isEqualTo(BrokerReachability.UNREACHABLE);
		assertThat(this.cache.describe().lastMetadataUpdate()).isNull();
	}

	@Test
	void reachabilityIsUnknownWithoutClientMetadata() {
		LeaderCache unbound = this.registry.register("east", "producer-2", ClientType.PRODUCER, Map.of());
		this.clock.addAndGet(120_000);
		assertThat(unbound.reachability()).isEqualTo(BrokerReachability.UNKNOWN);
		assertThat(unbound.describe().brokers()).isEqualTo(BrokerReachability.UNKNOWN);
	}

	private void acknowledge(long recordTimestamp) {
		this.cache.onAcknowledgement(metadata(recordTimestamp), null);
	}

	private static RecordMetadata metadata(long timestamp) {
		return new RecordMetadata(PARTITION, 0, 0, timestamp, 3, 10);
	}

	private static ConsumerRecords<String, String> records(int leaderEpoch) {
		ConsumerRecord<String, String> record = new ConsumerRecord<>(PARTITION.topic(), PARTITION.partition(), 0, 0,
				TimestampType.CREATE_TIME, 0, 0, null, "v", new RecordHeaders(), java.util.Optional.of(leaderEpoch));
		return new ConsumerRecords<>(Map.of(PARTITION, List.of(record)), Map.of());
	}

	/**
	 * Metadata whose version changes on every change of a leader.
	 */
	private static final class FakeSource implements LeaderSource {

		private final Map<TopicPartition, LeaderTerm> leaders = new HashMap<>();

		private Object version = new Object();

		private long lastMetadataUpdateMs = LeaderTerm.UNKNOWN;

		private boolean metadataUpdatePending = true;

		void metadataAnswered(long nowMs) {
			this.lastMetadataUpdateMs = nowMs;
			this.metadataUpdatePending = false;
		}

		void metadataRequested() {
			this.metadataUpdatePending = true;
		}

		void lead(TopicPartition partition, int brokerId, int epoch) {
			this.leaders.put(partition, new LeaderTerm(brokerId, epoch, new Node(brokerId, "broker" + brokerId, 9092)));
			this.version = new Object();
		}

		void leaderless(TopicPartition partition, int epoch) {
			this.leaders.put(partition, new LeaderTerm(LeaderTerm.UNKNOWN, epoch, null));
			this.version = new Object();
		}

		@Override
		public Object version() {
			return this.version;
		}

		@Override
		public @Nullable LeaderTerm leader(Object version, TopicPartition partition) {
			return this.leaders.get(partition);
		}

		@Override
		public List<Integer> partitions(Object version, String topic) {
			return this.leaders.keySet()
				.stream()
				.filter((partition) -> partition.topic().equals(topic))
				.map(TopicPartition::partition)
				.sorted()
				.toList();
		}

		@Override
		public boolean hotPathSafe() {
			return true;
		}

		@Override
		public boolean epochs() {
			return true;
		}

		@Override
		public boolean metadataTimesKnown() {
			return true;
		}

		@Override
		public long lastMetadataUpdateMs() {
			return this.lastMetadataUpdateMs;
		}

		@Override
		public boolean metadataUpdatePending() {
			return this.metadataUpdatePending;
		}

	}

}
