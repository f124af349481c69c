package dev.tandem.mirror;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.tandem.mirror.MirrorTestFixture.HeldPrepare;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaCluster;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.ProtocolStep;

import static dev.tandem.mirror.MirrorTestFixture.produce;
import static dev.tandem.mirror.MirrorTestFixture.spread;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Tries to break the mirror's positions on the target ({@link MirrorSettings.Positions#TARGET},
 * issue 25) on two real KRaft clusters, {@code east} and {@code west}, with a real Ratis
 * coordinator peer: rolling instances under live production, migrations between
 * {@link MirrorSettings.Positions#SOURCE} and {@link MirrorSettings.Positions#TARGET}, a
 * successor that must wait for a stalled instance's pending offset commit, bad settings. Every
 * check reads the records {@code read_committed}, per partition, against the source.
 */
class MirrorPositionsBreakerTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	@RegisterExtension
	static final MirrorTestFixture fixture = MirrorTestFixture.eastToWest(kafka, "mirror-breaker");

	/**
	 * Idea 1: instances started and stopped in turn (a rebalance of the target group every step)
	 * while records keep coming: the target holds every source record once, in the source's order
	 * per partition.
	 */
	@Test
	void instancesStartedAndStoppedInTurnUnderLiveProductionCopyEveryRecordOnceInOrder() throws Exception {
		String topic = "rolling-" + fixture.name();
		String remote = "east." + topic;
		fixture.east().createTopic(topic, 4, (short) 1);
		// about 500 records/s, spread over the 4 partitions
		LiveProduction production = new LiveProduction(topic, 4);
		List<Mirror> running = new ArrayList<>();
		try (production) {
			UnaryOperator<MirrorSettings.Builder> settings = (builder) -> builder.topics(List.of(topic)).maxRecords(20);
			running.add(fixture.mirror(settings));
			grows(remote, 300);
			for (int step = 0; step < 5; step++) {
				Mirror started = fixture.mirror(settings);
				running.add(started);
				grows(remote, 300);
				await().atMost(WAIT).until(() -> !started.status().partitions().isEmpty());
				running.remove(0).close();
				grows(remote, 300);
			}
		}
		int produced = production.produced();
		await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), remote).size() >= produced);
		Map<Integer, List<String>> source = byPartition(fixture.east(), topic);
		Map<Integer, List<String>> target = byPartition(fixture.west(), remote);
		assertThat(source.values().stream().mapToInt(List::size).sum()).isEqualTo(produced);
		assertThat(target).as("every partition's copies, in the source's order").isEqualTo(source);
	}

	/**
	 * Idea 1, with losses instead of handovers: two instances under live production are removed
	 * from the target group again and again (as when sessions expire), so every step runs the
	 * lost path (abandon, rejoin, positions read back): every record once, in order.
	 */
	@Test
	void instancesRemovedFromTheTargetGroupAgainAndAgainUnderLiveProductionCopyEveryRecordOnceInOrder()
			throws Exception {
		String topic = "removed-" + fixture.name();
		String remote = "east." + topic;
		fixture.east().createTopic(topic, 4, (short) 1);
		LiveProduction production = new LiveProduction(topic, 4);
		try (production) {
			UnaryOperator<MirrorSettings.Builder> settings = (builder) -> builder.topics(List.of(topic)).maxRecords(20);
			Mirror first = fixture.mirror(settings);
			Mirror second = fixture.mirror(settings);
			await().atMost(WAIT).until(() -> !first.status().partitions().isEmpty() && !second.status().partitions().isEmpty());
			String group = first.settings().consumerGroup();
			for (int step = 0; step < 4; step++) {
				grows(remote, 300);
				fixture.west().admin().removeMembersFromConsumerGroup(group, new RemoveMembersFromConsumerGroupOptions()).all().get();
			}
			grows(remote, 300);
		}
		int produced = production.produced();
		await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), remote).size() >= produced);
		Map<Integer, List<String>> source = byPartition(fixture.east(), topic);
		assertThat(source.values().stream().mapToInt(List::size).sum()).isEqualTo(produced);
		assertThat(byPartition(fixture.west(), remote)).as("every partition's copies, in the source's order").isEqualTo(source);
	}

	/**
	 * Idea 2: a mirror that kept its positions on the source is stopped in the middle of a backlog
	 * and started again with the default (target): it starts from the source group's offsets,
	 * copies nothing twice and skips nothing.
	 */
	@Test
	void switchingFromPositionsOnTheSourceToTheTargetMidBacklogCopiesNothingTwiceAndSkipsNothing() throws Exception {
		String topic = "s2t-" + fixture.name();
		String remote = "east." + topic;
		fixture.east().createTopic(topic, 2, (short) 1);
		produce(fixture.east(), spread(topic, 2, 0, 3000));
		Mirror before = fixture.mirror((settings) -> settings.topics(List.of(topic)).maxRecords(5)
			.positions(MirrorSettings.Positions.SOURCE));
		await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), remote).size() >= 100);
		before.close();
		int copiedBefore = ReadCommitted.values(fixture.west().bootstrapServers(), remote).size();
		assertThat(copiedBefore).as("stopped in the middle of the backlog").isLessThan(3000);

		Mirror after = fixture.mirror((settings) -> settings.topics(List.of(topic)).maxRecords(50));
		assertThat(after.settings().positions()).isEqualTo(MirrorSettings.Positions.TARGET);
		await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), remote).size() >= 3000);
		await().atMost(WAIT).untilAsserted(() -> assertThat(after.status().lagRecords()).isZero());
		assertThat(byPartition(fixture.west(), remote)).isEqualTo(byPartition(fixture.east(), topic));
		assertThat(after.status().recordsMirrored()).isEqualTo(3000 - copiedBefore);
	}

	/**
	 * Idea 2, the other way: a mirror that kept its positions on the target, started again with
	 * {@link MirrorSettings.Positions#SOURCE}. The source group holds nothing of the first run:
	 * the restarted instance moves the target group's positions there first, so nothing the
	 * first run copied is copied again.
	 */
	@Test
	void switchingFromPositionsOnTheTargetBackToTheSourceCopiesNothingTwice() throws Exception {
		String topic = "t2s-" + fixture.name();
		String remote = "east." + topic;
		fixture.east().createTopic(topic, 2, (short) 1);
		produce(fixture.east(), spread(topic, 2, 0, 3000));
		Mirror before = fixture.mirror((settings) -> settings.topics(List.of(topic)).maxRecords(5));
		await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), remote).size() >= 100);
		before.close();
		int copiedBefore = ReadCommitted.values(fixture.west().bootstrapServers(), remote).size();

		Mirror after = fixture.mirror((settings) -> settings.topics(List.of(topic)).maxRecords(50)
			.positions(MirrorSettings.Positions.SOURCE));
		await().atMost(WAIT).untilAsserted(() -> assertThat(after.status().lagRecords()).isZero());
		await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), remote).size() >= 3000);
		List<String> copies = ReadCommitted.values(fixture.west().bootstrapServers(), remote);
		int duplicates = copies.size() - new HashSet<>(copies).size();
		assertThat(duplicates).as("records copied twice (%d copied by the first run, %d copies in all)", copiedBefore,
				copies.size()).isZero();
	}

	/**
	 * Idea 2, during a rolling upgrade: an instance still keeping its positions on the source (the
	 * only mode before issue 25) and an instance of the new default (target) run at once, as while
	 * a deployment is rolled; then the old one stops. The two modes share partitions through two
	 * different groups (one on the source, one on the target): the upgraded one stands by while
	 * the old one is in the source group, then continues from its positions; nothing is copied
	 * twice, with records coming all along.
	 */
	@Test
	void aRollingUpgradeFromPositionsOnTheSourceToTheTargetCopiesNothingTwice() throws Exception {
		String topic = "upgrade-" + fixture.name();
		String remote = "east." + topic;
		fixture.east().createTopic(topic, 2, (short) 1);
		LiveProduction production = new LiveProduction(topic, 2);
		Mirror old;
		Mirror upgraded;
		try (production) {
			old = fixture.mirror((settings) -> settings.topics(List.of(topic)).maxRecords(10)
				.positions(MirrorSettings.Positions.SOURCE));
			grows(remote, 300);
			upgraded = fixture.mirror((settings) -> settings.topics(List.of(topic)).maxRecords(10));
			// both run while records keep coming, as during a rolling deployment: the upgraded one
			// stands by while the old one is in the source group
			grows(remote, 500);
			assertThat(upgraded.isStandingBy()).as("upgraded instance stands by while the old one runs").isTrue();
			assertThat(upgraded.status().partitions()).isEmpty();
			old.close();
			await().atMost(WAIT).until(() -> !upgraded.isStandingBy() && !upgraded.status().partitions().isEmpty());
			grows(remote, 300);
		}
		int produced = production.produced();
		await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), remote).size() >= produced);
		await().atMost(WAIT).untilAsserted(() -> assertThat(upgraded.status().lagRecords()).isZero());
		List<String> copies = ReadCommitted.values(fixture.west().bootstrapServers(), remote);
		int duplicates = copies.size() - new HashSet<>(copies).size();
		assertThat(duplicates).as("records copied twice while both modes ran (%d copies of %d records; mirrored by the "
				+ "old instance %d, by the upgraded one %d)", copies.size(), produced, old.status().recordsMirrored(),
				upgraded.status().recordsMirrored())
			.isZero();
	}

	/**
	 * Idea 4: an instance stalls with a transaction whose offset commit the target group accepted
	 * (held at {@link ProtocolStep#BEFORE_PREPARE}) and is removed from the group; a successor
	 * takes its partitions and must wait for that transaction's outcome (stable offsets). The
	 * stall lasts longer than the successor's bound on that read (30 s); then the stalled instance
	 * finishes and stops without ever rejoining (as a process that finishes its transaction and
	 * exits would). The successor must still mirror everything once.
	 */
	@Test
	void aSuccessorWaitingLongerThanItsReadBoundForAStalledInstancesPendingPositionsStillMirrorsEverything()
			throws Exception {
		String topic = "stall-" + fixture.name();
		String remote = "east." + topic;
		fixture.east().createTopic(topic, 2, (short) 1);
		produce(fixture.east(), spread(topic, 2, 0, 40));
		HeldPrepare hold = new HeldPrepare();
		Mirror stalled = fixture.mirror((manager) -> manager.protocolHook(hold),
				(settings) -> settings.topics(List.of(topic)).maxRecords(10));
		assertThat(hold.awaitHeld(WAIT)).as("a transaction held after its offset commit").isTrue();
		String group = stalled.settings().consumerGroup();
		try (hold) {
			fixture.west().admin().removeMembersFromConsumerGroup(group, new RemoveMembersFromConsumerGroupOptions()).all().get();
			Mirror successor = fixture.mirror((settings) -> settings.topics(List.of(topic)).maxRecords(10));
			await().atMost(WAIT).until(() -> fixture.onlyMemberOwns(group, 2));
			// the successor waits for the held transaction (its positions are not stable), past 30 s
			await().atMost(Duration.ofSeconds(50)).during(Duration.ofSeconds(35))
				.until(() -> successor.status().partitions().isEmpty());
			hold.release();
			stalled.close();
			produce(fixture.east(), spread(topic, 2, 40, 80));
			await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), remote).size() >= 80);
			assertThat(byPartition(fixture.west(), remote)).isEqualTo(byPartition(fixture.east(), topic));
		}
	}

	/**
	 * Idea 4 as it happens: an instance's thread stalls with a transaction whose positions the
	 * target group accepted (held at {@link ProtocolStep#BEFORE_PREPARE}) longer than the member's
	 * {@code max.poll.interval.ms} (8 s here, the target's consumer setting), so its member leaves
	 * the group by itself and another instance takes the partitions; then the stall ends and the
	 * stalled instance rejoins. Every record once, in order.
	 */
	@Test
	void anInstanceStalledPastItsMaxPollIntervalWithPositionsPendingIsReplacedWithoutAnyCopyMadeTwice()
			throws Exception {
		String topic = "maxpoll-" + fixture.name();
		String remote = "east." + topic;
		fixture.east().createTopic(topic, 2, (short) 1);
		produce(fixture.east(), spread(topic, 2, 0, 40));
		Map<String, Object> shortPollInterval = Map.of(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, 8000);
		HeldPrepare hold = new HeldPrepare();
		Mirror stalled = fixture.mirror((manager) -> manager.protocolHook(hold), shortPollInterval,
				(settings) -> settings.topics(List.of(topic)).maxRecords(10));
		assertThat(hold.awaitHeld(WAIT)).as("a transaction held after its offset commit").isTrue();
		String group = stalled.settings().consumerGroup();
		try (hold) {
			Mirror successor = fixture.mirror(UnaryOperator.identity(), shortPollInterval,
					(settings) -> settings.topics(List.of(topic)).maxRecords(10));
			// the stalled member leaves by itself after 8 s without a poll; the successor owns both partitions
			await().atMost(WAIT).until(() -> fixture.onlyMemberOwns(group, 2));
			hold.release();
			produce(fixture.east(), spread(topic, 2, 40, 80));
			await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), remote).size() >= 80);
			// the stalled instance comes back into the group: a rebalance more, and still nothing twice
			await().atMost(WAIT).until(() -> !stalled.status().partitions().isEmpty()
					&& !successor.status().partitions().isEmpty());
			produce(fixture.east(), spread(topic, 2, 80, 120));
			await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), remote).size() >= 120);
			assertThat(byPartition(fixture.west(), remote)).isEqualTo(byPartition(fixture.east(), topic));
		}
	}

	/** Idea 6: positions on the target with two targets is refused when the settings are built. */
	@Test
	void positionsOnTheTargetWithTwoTargetsIsRefusedWithAClearMessage() {
		assertThatThrownBy(() -> MirrorSettings.builder("east", List.of("west", "north"))
			.topics(List.of("orders"))
			.positions(MirrorSettings.Positions.TARGET)
			.build()).isInstanceOf(InvalidMirrorSettingException.class)
			.hasMessageContaining("positions")
			.hasMessageContaining("west")
			.hasMessageContaining("north");
		assertThat(MirrorSettings.builder("east", List.of("west", "north")).topics(List.of("orders")).build().positions())
			.isEqualTo(MirrorSettings.Positions.SOURCE);
	}

	/**
	 * Idea 6: a translated group named like the mirror's own group (selected by a pattern that
	 * matches every group) is not translated onto the mirror's positions: a group consumes the
	 * source meanwhile, and the mirror's positions on the target stay the source offsets.
	 */
	@Test
	void aGroupPatternMatchingTheMirrorsOwnGroupNeverOverwritesItsPositionsOnTheTarget() throws Exception {
		String topic = "own-" + fixture.name();
		String remote = "east." + topic;
		fixture.east().createTopic(topic, 1, (short) 1);
		// a gap of 20 between source and target offsets: the target already holds 20 other records
		fixture.west().createTopic(remote, 1, (short) 1);
		produce(fixture.west(), spread(remote, 1, 1000, 1020));
		produce(fixture.east(), spread(topic, 1, 0, 50));
		String own = "mirror-" + fixture.name();
		// the source group of the mirror's name has offsets (as after a run with positions on the source)
		fixture.east().admin().alterConsumerGroupOffsets(own,
				Map.of(new TopicPartition(topic, 0),
						new OffsetAndMetadata(10))).all().get();
		Mirror mirror = fixture.mirror((settings) -> settings.topics(List.of(topic)).groupPattern(".*"));
		await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), remote).size() == 20 + 40);
		await().atMost(WAIT).untilAsserted(() -> assertThat(mirror.status().lagRecords()).isZero());
		var positions = ReadCommitted.groupOffsets(fixture.west().bootstrapServers(), own, remote);
		assertThat(positions.get(new TopicPartition(remote, 0)).offset())
			.as("the mirror's position: the next source offset, not a translated target offset").isEqualTo(50);
		mirror.close();
		produce(fixture.east(), spread(topic, 1, 50, 60));
		fixture.mirror((settings) -> settings.topics(List.of(topic)).groupPattern(".*"));
		await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), remote).size() >= 20 + 50);
		List<String> copies = ReadCommitted.values(fixture.west().bootstrapServers(), remote);
		assertThat(copies).hasSize(70).doesNotHaveDuplicates();
	}

	/** Waits until the target topic holds {@code more} records more than now. */
	private static void grows(String remote, int more) {
		int now = ReadCommitted.values(fixture.west().bootstrapServers(), remote).size();
		await().atMost(WAIT).pollInterval(Duration.ofMillis(300))
			.until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), remote).size() >= now + more);
	}

	/** The values of a topic, read {@code read_committed}, per partition in offset order. */
	private static Map<Integer, List<String>> byPartition(EmbeddedKafkaCluster cluster, String topic) {
		Map<Integer, List<String>> values = new TreeMap<>();
		List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>(
				ReadCommitted.records(cluster.bootstrapServers(), topic, WAIT));
		records.sort((a, b) -> (a.partition() != b.partition()) ? Integer.compare(a.partition(), b.partition())
				: Long.compare(a.offset(), b.offset()));
		for (ConsumerRecord<byte[], byte[]> record : records) {
			values.computeIfAbsent(record.partition(), (p) -> new ArrayList<>())
				.add(new String(record.value(), StandardCharsets.UTF_8));
		}
		return values;
	}

	/**
	 * About 500 records a second to a topic of {@code east}, from a producer of its own, record i
	 * on partition i % partitions, until closed.
	 */
	private static final class LiveProduction implements AutoCloseable {

		private final AtomicInteger next = new AtomicInteger();

		private final ScheduledExecutorService producing = Executors.newSingleThreadScheduledExecutor();

		private final KafkaProducer<String, String> producer = new KafkaProducer<>(fixture.east().producerProperties(),
				new StringSerializer(), new StringSerializer());

		LiveProduction(String topic, int partitions) {
			this.producing.scheduleAtFixedRate(() -> {
				for (int k = 0; k < 5; k++) {
					int i = this.next.getAndIncrement();
					this.producer.send(new ProducerRecord<>(topic, i % partitions, "k" + i, "v" + i));
				}
			}, 0, 10, TimeUnit.MILLISECONDS);
		}

		/** Returns how many records were sent: every one, once closed. */
		int produced() {
			return this.next.get();
		}

		@Override
		public void close() throws InterruptedException {
			this.producing.shutdownNow();
			this.producing.awaitTermination(5, TimeUnit.SECONDS);
			this.producer.flush();
			this.producer.close();
		}

	}

}
