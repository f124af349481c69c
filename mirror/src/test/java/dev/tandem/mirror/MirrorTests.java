package dev.tandem.mirror;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.tandem.mirror.MirrorTestFixture.HeldPrepare;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;

import static dev.tandem.mirror.MirrorTestFixture.produce;
import static dev.tandem.mirror.MirrorTestFixture.spread;
import static dev.tandem.mirror.MirrorTestFixture.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The mirror on two real KRaft clusters, {@code east} and {@code west}, with a real Ratis
 * coordinator peer: the scenarios of MirrorMaker 2's integration suite, each checked with
 * {@code read_committed} reads of every record and the groups' committed offsets on the target.
 */
class MirrorTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	// one coordinator for every manager here: a shared log, whose leases see a duplicate instance
	@RegisterExtension
	static final MirrorTestFixture fixture = MirrorTestFixture.eitherWay(kafka, "mirror-tests");

	@Test
	void severalTopicsWithKeysHeadersAndAnEmptyPartitionAreMirroredOnceWithTheirProvenance() throws Exception {
		String orders = "orders-" + fixture.name();
		String payments = "payments-" + fixture.name();
		String excluded = "payments-" + fixture.name() + "-secret";
		fixture.east().createTopic(orders, 3, (short) 1, Map.of("retention.ms", "86400000"));
		fixture.east().createTopic(payments, 2, (short) 1);
		fixture.east().createTopic(excluded, 1, (short) 1);
		List<ProducerRecord<String, String>> sent = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			RecordHeaders headers = new RecordHeaders();
			headers.add("trace", ("t" + i).getBytes(StandardCharsets.UTF_8));
			// partition 2 of orders stays empty
			sent.add(new ProducerRecord<>((i % 2 == 0) ? orders : payments, i % 2, 1_700_000_000_000L + i, "k" + i,
					"v" + i, headers));
		}
		sent.add(new ProducerRecord<>(excluded, 0, null, "secret"));
		produce(fixture.east(), sent);

		Mirror mirror = fixture.mirror("east", List.of("west"), (settings) -> settings.topics(List.of(orders))
			.topicPattern("payments-.*")
			.excludes(List.of(".*-secret"))
			.copiedConfigs(List.of("retention.ms")));

		await().atMost(WAIT).until(() -> ReadCommitted.records(fixture.west().bootstrapServers(), "east." + payments, WAIT).size() == 20
				&& ReadCommitted.records(fixture.west().bootstrapServers(), "east." + orders, WAIT).size() == 20);
		List<ConsumerRecord<byte[], byte[]>> copies = new ArrayList<>();
		copies.addAll(ReadCommitted.records(fixture.west().bootstrapServers(), "east." + orders, WAIT));
		copies.addAll(ReadCommitted.records(fixture.west().bootstrapServers(), "east." + payments, WAIT));
		assertThat(copies).hasSize(40);
		for (ConsumerRecord<byte[], byte[]> copy : copies) {
			int i = Integer.parseInt(utf8(copy.value()).substring(1));
			assertThat(copy.partition()).isEqualTo(i % 2);
			assertThat(utf8(copy.key())).isEqualTo("k" + i);
			assertThat(copy.timestamp()).isEqualTo(1_700_000_000_000L + i);
			assertThat(utf8(copy.headers().lastHeader("trace").value())).isEqualTo("t" + i);
			Provenance provenance = Provenance.read(copy.headers());
			assertThat(provenance).isNotNull();
			assertThat(provenance.origin()).isEqualTo("east");
			assertThat(provenance.sourceCluster()).isEqualTo("east");
			assertThat(provenance.topic()).isEqualTo((i % 2 == 0) ? orders : payments);
			assertThat(provenance.partition()).isEqualTo(i % 2);
			assertThat(provenance.offset()).isEqualTo(i / 2);
		}
		Admin admin = fixture.west().admin();
		assertThat(admin.describeTopics(List.of("east." + orders)).allTopicNames().get().get("east." + orders).partitions())
			.as("the empty partition exists on the target too").hasSize(3);
		Config config = admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, "east." + orders)))
			.all().get().values().iterator().next();
		assertThat(config.get("retention.ms").value()).isEqualTo("86400000");
		assertThat(admin.listTopics().names().get()).doesNotContain("east." + excluded);
		await().atMost(WAIT).untilAsserted(() -> assertThat(mirror.status().lagRecords()).isZero());
		assertThat(mirror.status().recordsMirrored()).isEqualTo(40);
	}

	@Test
	void recordsOfAbortedSourceTransactionsAreNeverMirrored() throws Exception {
		String topic = "txn-" + fixture.name();
		fixture.east().createTopic(topic, 1, (short) 1);
		Map<String, Object> config = fixture.east().producerProperties();
		config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "source-" + fixture.name());
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(config)) {
			producer.initTransactions();
			for (String outcome : List.of("committed-a", "aborted", "committed-b")) {
				producer.beginTransaction();
				for (int i = 0; i < 5; i++) {
					producer.send(new ProducerRecord<>(topic, 0, "k", outcome + "-" + i));
				}
				if (outcome.equals("aborted")) {
					producer.abortTransaction();
				}
				else {
					producer.commitTransaction();
				}
			}
		}
		String group = "g-" + fixture.name();
		// A group committed inside the aborted range: it has read committed-a, nothing after.
		long lastOfFirst = sourceOffsetOf(topic, "committed-a-4");
		fixture.commitOnSource(group, new TopicPartition(topic, 0), lastOfFirst + 2);

		fixture.mirror("east", List.of("west"), (settings) -> settings.topics(List.of(topic)).groups(List.of(group)));

		await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), "east." + topic).size() == 10);
		List<String> values = ReadCommitted.values(fixture.west().bootstrapServers(), "east." + topic);
		assertThat(values).hasSize(10).noneMatch((value) -> value.startsWith("aborted")).doesNotHaveDuplicates();
		long expected = targetOffsetOf("east." + topic, 0, sourceOffsetOf(topic, "committed-b-0"));
		await().atMost(WAIT).until(() -> fixture.targetCommitted(group, new TopicPartition("east." + topic, 0)) == expected);
		assertThat(firstRecordOnTarget(group, "east." + topic)).isEqualTo("committed-b-0");
	}

	@Test
	void groupWhoseConsumedRecordsExpiredOnTheSourceIsTranslatedToTheFirstMirroredRecord() throws Exception {
		String topic = "expiry-" + fixture.name();
		fixture.east().createTopic(topic, 1, (short) 1);
		produce(fixture.east(), values(topic, 0, 30));
		String group = "g-" + fixture.name();
		TopicPartition partition = new TopicPartition(topic, 0);
		fixture.commitOnSource(group, partition, 10);
		// Records 0..19 expire: the group's committed offset is below the log start offset.
		fixture.east().admin().deleteRecords(Map.of(partition, RecordsToDelete.beforeOffset(20))).all().get();

		fixture.mirror("east", List.of("west"), (settings) -> settings.topics(List.of(topic)).groups(List.of(group)));

		TopicPartition remote = new TopicPartition("east." + topic, 0);
		await().atMost(WAIT).until(() -> fixture.targetCommitted(group, remote) >= 0);
		assertThat(fixture.targetCommitted(group, remote)).as("the first mirrored record, not the literal offset 10 (KAFKA-12635)")
			.isEqualTo(targetOffsetOf(remote.topic(), 0, 20));
		assertThat(firstRecordOnTarget(group, remote.topic())).isEqualTo("v20");
	}

	@Test
	void restartedMirrorWithDataAlreadyOnTheTargetCopiesNothingTwiceAndTranslatesExactly() throws Exception {
		String topic = "restart-" + fixture.name();
		fixture.east().createTopic(topic, 2, (short) 1);
		produce(fixture.east(), values(topic, 0, 60));
		Mirror first = fixture.mirror("east", List.of("west"), (settings) -> settings.topics(List.of(topic)).maxRecords(7));
		await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), "east." + topic).size() == 60);
		first.close();
		produce(fixture.east(), values(topic, 60, 120));
		String group = "g-" + fixture.name();
		// Offset 10 of partition 0 was mirrored by the first mirror: the second one knows its
		// target offset only from the provenance headers on the target.
		fixture.commitOnSource(group, new TopicPartition(topic, 0), 10);

		fixture.mirror("east", List.of("west"), (settings) -> settings.topics(List.of(topic)).groups(List.of(group)).maxRecords(7));

		await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), "east." + topic).size() >= 120);
		assertThat(ReadCommitted.values(fixture.west().bootstrapServers(), "east." + topic)).hasSize(120).doesNotHaveDuplicates();
		long expected = targetOffsetOf("east." + topic, 0, 10);
		await().atMost(WAIT).until(() -> fixture.targetCommitted(group, new TopicPartition("east." + topic, 0)) == expected);
	}

	@Test
	void copiesAnEarlierSnapshotWroteWithTheThreeStringHeadersAreMappedAndTheMirrorGoesOnAfterThem() throws Exception {
		String topic = "legacy-" + fixture.name();
		String remote = "east." + topic;
		fixture.east().createTopic(topic, 2, (short) 1);
		fixture.west().createTopic(remote, 2, (short) 1);
		produce(fixture.east(), values(topic, 0, 60));
		Uuid topicId = fixture.topicId(topic);
		// what an earlier snapshot's mirror left: copies of source offsets 0-19 of each partition
		// with the three string headers, and its positions after them (in its group on the source,
		// which a mirror keeping them on the target starts from where the target group has none)
		try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(fixture.west().producerProperties(),
				new ByteArraySerializer(), new ByteArraySerializer())) {
			for (ConsumerRecord<byte[], byte[]> record : ReadCommitted.records(fixture.east().bootstrapServers(), topic, WAIT)) {
				if (record.offset() < 20) {
					RecordHeaders headers = new RecordHeaders();
					headers.add(Provenance.ORIGIN_HEADER, "east".getBytes(StandardCharsets.UTF_8));
					headers.add(Provenance.SOURCE_HEADER, ("east/" + topic + "/" + record.partition() + "/" + record.offset())
						.getBytes(StandardCharsets.UTF_8));
					headers.add(Provenance.TOPIC_ID_HEADER, topicId.toString().getBytes(StandardCharsets.UTF_8));
					producer.send(new ProducerRecord<>(remote, record.partition(), null, record.key(), record.value(), headers));
				}
			}
			producer.flush();
		}
		String mirrorGroup = "mirror-" + fixture.name() + "-east";
		fixture.east().admin().alterConsumerGroupOffsets(mirrorGroup, Map.of(new TopicPartition(topic, 0),
				new OffsetAndMetadata(20), new TopicPartition(topic, 1), new OffsetAndMetadata(20))).all().get();
		String group = "g-" + fixture.name();
		// offset 10 of partition 0 has only a legacy copy: its target offset comes from the old headers
		fixture.commitOnSource(group, new TopicPartition(topic, 0), 10);

		fixture.mirror("east", List.of("west"), (settings) -> settings.topics(List.of(topic)).groups(List.of(group)).maxRecords(7));

		await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), remote).size() >= 60);
		List<ConsumerRecord<byte[], byte[]>> copies = ReadCommitted.records(fixture.west().bootstrapServers(), remote, WAIT);
		assertThat(copies).extracting((copy) -> utf8(copy.value())).hasSize(60).doesNotHaveDuplicates();
		assertThat(copies).filteredOn((copy) -> copy.offset() >= 20)
			.allSatisfy((copy) -> assertThat(copy.headers().toArray()).extracting(Header::key)
				.as("the mirror's own copies carry only the new header").containsExactly(Provenance.HEADER))
			.allSatisfy((copy) -> assertThat(Provenance.read(copy.headers()).topicId()).isEqualTo(topicId));
		long expected = targetOffsetOf(remote, 0, 10);
		assertThat(expected).as("the legacy copy of source offset 10").isEqualTo(10);
		await().atMost(WAIT).until(() -> fixture.targetCommitted(group, new TopicPartition(remote, 0)) == expected);
	}

	@Test
	void partitionAddedToASourceTopicWhileRunningIsFollowed() throws Exception {
		String topic = "grow-" + fixture.name();
		fixture.east().createTopic(topic, 1, (short) 1);
		produce(fixture.east(), values(topic, 0, 5));
		Mirror mirror = fixture.mirror("east", List.of("west"), (settings) -> settings.topics(List.of(topic)));
		await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), "east." + topic).size() == 5);

		fixture.east().admin().createPartitions(Map.of(topic, NewPartitions.increaseTo(2))).all().get();
		produce(fixture.east(), List.of(new ProducerRecord<>(topic, 1, "k", "in-the-new-partition")));

		await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), "east." + topic).size() == 6);
		List<ConsumerRecord<byte[], byte[]>> copies = ReadCommitted.records(fixture.west().bootstrapServers(), "east." + topic, WAIT);
		assertThat(copies).filteredOn((copy) -> copy.partition() == 1).singleElement()
			.satisfies((copy) -> assertThat(utf8(copy.value())).isEqualTo("in-the-new-partition"));
		assertThat(mirror.status().partitions()).hasSize(2);
	}

	@Test
	void activeActiveMirrorsWithIdentityNamesNeverLoop() throws Exception {
		String topic = "aa-" + fixture.name();
		fixture.east().createTopic(topic, 1, (short) 1);
		fixture.west().createTopic(topic, 1, (short) 1);
		produce(fixture.east(), values(topic, 0, 10));
		produce(fixture.west(), values(topic, 100, 110));

		Mirror eastToWest = fixture.mirror("east", List.of("west"),
				(settings) -> settings.topics(List.of(topic)).naming(RemoteTopicNaming.identity()));
		Mirror westToEast = fixture.mirror("west", List.of("east"),
				(settings) -> settings.topics(List.of(topic)).naming(RemoteTopicNaming.identity()));

		// Each mirror reads the other's copies back and skips them: then nothing more can come.
		await().atMost(WAIT).untilAsserted(() -> {
			assertThat(eastToWest.status().recordsSkipped()).isEqualTo(10);
			assertThat(westToEast.status().recordsSkipped()).isEqualTo(10);
			assertThat(eastToWest.status().lagRecords()).isZero();
			assertThat(westToEast.status().lagRecords()).isZero();
		});
		assertThat(ReadCommitted.values(fixture.east().bootstrapServers(), topic)).hasSize(20).doesNotHaveDuplicates();
		assertThat(ReadCommitted.values(fixture.west().bootstrapServers(), topic)).hasSize(20).doesNotHaveDuplicates();
		assertThat(eastToWest.status().recordsMirrored()).isEqualTo(10);
		assertThat(westToEast.status().recordsMirrored()).isEqualTo(10);
	}

	@Test
	void caughtUpGroupReReadsNothingAfterMovingToTheTargetAndIsNeverWrittenWhileActiveThere() throws Exception {
		String topic = "move-" + fixture.name();
		fixture.east().createTopic(topic, 2, (short) 1);
		produce(fixture.east(), values(topic, 0, 40));
		String group = "g-" + fixture.name();
		Map<String, Object> config = fixture.east().consumerProperties();
		config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
		int consumed = 0;
		try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config)) {
			consumer.subscribe(List.of(topic));
			while (consumed < 40) {
				consumed += consumer.poll(Duration.ofMillis(200)).count();
			}
			consumer.commitSync();
		}

		Mirror mirror = fixture.mirror("east", List.of("west"), (settings) -> settings.topics(List.of(topic)).groups(List.of(group)));

		String remote = "east." + topic;
		await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), remote).size() == 40);
		for (int partition = 0; partition < 2; partition++) {
			TopicPartition tp = new TopicPartition(remote, partition);
			long afterLast = targetOffsetOf(remote, partition, 19) + 1;
			await().atMost(WAIT).until(() -> fixture.targetCommitted(group, tp) == afterLast);
		}

		// The group moves to west: it reads nothing again, then exactly the next new record.
		Map<String, Object> westConfig = fixture.west().consumerProperties();
		westConfig.put(ConsumerConfig.GROUP_ID_CONFIG, group);
		westConfig.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
		try (KafkaConsumer<String, String> moved = new KafkaConsumer<>(westConfig)) {
			moved.subscribe(List.of(remote));
			List<String> reRead = new ArrayList<>();
			long until = System.nanoTime() + Duration.ofSeconds(3).toNanos();
			while (System.nanoTime() < until) {
				moved.poll(Duration.ofMillis(200)).forEach((record) -> reRead.add(record.value()));
			}
			assertThat(reRead).as("records re-read after the move").isEmpty();
			long before = fixture.targetCommitted(group, new TopicPartition(remote, 0));

			// While the group is active on west, a new commit on east is never translated there.
			produce(fixture.east(), List.of(new ProducerRecord<>(topic, 0, "k", "after-the-move")));
			fixture.commitOnSource(group, new TopicPartition(topic, 0), 21);
			List<String> next = new ArrayList<>();
			await().atMost(WAIT).until(() -> {
				moved.poll(Duration.ofMillis(200)).forEach((record) -> next.add(record.value()));
				return !next.isEmpty();
			});
			assertThat(next).containsExactly("after-the-move");
			await().atMost(WAIT).until(() -> mirror.status().groups().stream()
				.anyMatch((status) -> status.group().equals(group) && status.activeOnTarget()));
			assertThat(fixture.targetCommitted(group, new TopicPartition(remote, 0))).as("the group's own commits only")
				.isEqualTo(before);
		}
	}

	@Test
	void twoInstancesShareThePartitionsThroughTheMirrorsGroupAndCopyEveryRecordOnce() throws Exception {
		String topic = "shared-" + fixture.name();
		fixture.east().createTopic(topic, 4, (short) 1);
		produce(fixture.east(), spread(topic, 4, 0, 100));
		Mirror first = fixture.mirror("east", List.of("west"), (settings) -> settings.topics(List.of(topic)).maxRecords(10));
		await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), "east." + topic).size() >= 40);

		Mirror second = fixture.mirror("east", List.of("west"), (settings) -> settings.topics(List.of(topic)).maxRecords(10));
		await().atMost(WAIT).until(() -> first.status().partitions().size() == 2 && second.status().partitions().size() == 2);
		produce(fixture.east(), spread(topic, 4, 100, 200));

		await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), "east." + topic).size() >= 200);
		assertThat(ReadCommitted.values(fixture.west().bootstrapServers(), "east." + topic)).hasSize(200).doesNotHaveDuplicates();
		assertThat(first.status().partitions()).extracting(MirrorStatus.PartitionStatus::partition)
			.doesNotContainAnyElementsOf(second.status().partitions().stream().map(MirrorStatus.PartitionStatus::partition).toList());
		assertThat(second.status().recordsMirrored()).isPositive();
	}

	@Test
	void aBacklogIsMirroredInTransactionsOfFewerThanTwiceMaxRecordsWhateverTheConsumersMaxPollRecords() throws Exception {
		String topic = "backlog-" + fixture.name();
		fixture.east().createTopic(topic, 1, (short) 1);
		produce(fixture.east(), values(topic, 0, 60));
		// The clients' max.poll.records is 50: one poll would make a transaction of 50 records.
		Mirror mirror = fixture.mirror("east", List.of("west"), (settings) -> settings.topics(List.of(topic)).maxRecords(5)
			// transactions close at maxRecords even while the previous one prepares
			.growth(1));

		await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), "east." + topic).size() == 60);
		await().atMost(WAIT).untilAsserted(() -> assertThat(mirror.status().recordsMirrored()).isEqualTo(60));
		// a transaction closes after the poll that brought it to 5 records: at most 4 + 5 records
		assertThat(mirror.status().transactions()).as("mirror transactions for 60 records").isGreaterThanOrEqualTo(7);
		assertThat(ReadCommitted.values(fixture.west().bootstrapServers(), "east." + topic)).hasSize(60).doesNotHaveDuplicates();
	}

	@Test
	void aSourceTopicCreatedAgainStartsANewMappingAndNoTranslationEverPointsIntoTheOldIncarnationsCopies()
			throws Exception {
		String topic = "reborn-" + fixture.name();
		String remote = "east." + topic;
		TopicPartition source = new TopicPartition(topic, 0);
		TopicPartition target = new TopicPartition(remote, 0);
		String group = "g-" + fixture.name();
		fixture.east().createTopic(topic, 1, (short) 1);
		Uuid oldId = fixture.topicId(topic);
		produce(fixture.east(), values(topic, 0, 100));
		Mirror mirror = fixture.mirror("east", List.of("west"), (settings) -> settings.topics(List.of(topic)).groups(List.of(group)));
		await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), remote).size() == 100);

		// The source topic is deleted and created again under the running mirror, with fewer records:
		// the old incarnation's copies stay on the target, at the offsets a group of the new one would
		// be translated to with them.
		fixture.east().admin().deleteTopics(List.of(topic)).all().get();
		await().atMost(WAIT).until(() -> !fixture.east().admin().listTopics().names().get().contains(topic));
		// the mirror's consumer saw it gone (a topic created again before that is found by the topic refresh)
		await().atMost(WAIT).until(() -> mirror.status().partitions().isEmpty());
		await().atMost(WAIT).ignoreExceptions().until(() -> {
			fixture.east().createTopic(topic, 1, (short) 1);
			return true;
		});
		Uuid newId = fixture.topicId(topic);
		assertThat(newId).isNotEqualTo(oldId);
		// The group's offset on the target, sampled every 100 ms from now on.
		List<Long> sampled = Collections.synchronizedList(new ArrayList<>());
		ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
		sampler.scheduleAtFixedRate(() -> {
			try {
				long offset = fixture.targetCommitted(group, target);
				if (offset >= 0) {
					sampled.add(offset);
				}
			}
			catch (Exception ex) {
				// the group does not exist on the target yet
			}
		}, 0, 100, TimeUnit.MILLISECONDS);
		try {
			// Records and a group's commit on the new incarnation at once, typically before the mirror's
			// consumer is assigned it again: its first transaction copies them while only the old
			// incarnation's copies are on the target (and mapped, before topic ids: rebuilt from them).
			produce(fixture.east(), values(topic, 100, 130));
			fixture.commitOnSource(group, source, 10);
			for (long committed : new long[] { 10, 20, 30 }) {
				fixture.commitOnSource(group, source, committed);
				await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), remote).size() == 130);
				long expected = (committed < 30) ? copyOf(remote, newId, committed).offset()
						: copyOf(remote, newId, 29).offset() + 1;
				await().atMost(WAIT).until(() -> fixture.targetCommitted(group, target) == expected);
			}
		}
		finally {
			sampler.shutdownNow();
			sampler.awaitTermination(5, TimeUnit.SECONDS);
		}

		List<ConsumerRecord<byte[], byte[]>> copies = ReadCommitted.records(fixture.west().bootstrapServers(), remote, WAIT);
		assertThat(copies).hasSize(130);
		assertThat(copies.subList(0, 100)).allSatisfy((copy) -> assertThat(Provenance.read(copy.headers()).topicId())
			.isEqualTo(oldId));
		assertThat(copies.subList(100, 130)).allSatisfy((copy) -> assertThat(Provenance.read(copy.headers()).topicId())
			.isEqualTo(newId));
		assertThat(sampled).as("offsets sampled on the target").isNotEmpty();
		List<Long> intoOldCopies;
		synchronized (sampled) {
			// where a consumer of the group would start: the first copy at or after the offset
			intoOldCopies = sampled.stream().distinct().filter((offset) -> copies.stream()
				.filter((copy) -> copy.offset() >= offset)
				.findFirst()
				.map((copy) -> oldId.equals(Provenance.read(copy.headers()).topicId()))
				.orElse(false)).toList();
		}
		assertThat(intoOldCopies).as("translated offsets pointing into the old incarnation's copies").isEmpty();
		assertThat(fixture.targetCommitted(group, target)).as("the final translation, exact")
			.isEqualTo(copyOf(remote, newId, 29).offset() + 1);
	}

	/** The copy of a source record of one incarnation, found by its provenance headers. */
	private static ConsumerRecord<byte[], byte[]> copyOf(String remoteTopic, Uuid topicId, long sourceOffset) {
		return ReadCommitted.records(fixture.west().bootstrapServers(), remoteTopic, WAIT).stream()
			.filter((copy) -> topicId.equals(Provenance.read(copy.headers()).topicId()))
			.filter((copy) -> Provenance.read(copy.headers()).offset() == sourceOffset)
			.findFirst()
			.orElseThrow(() -> new AssertionError("no copy of source offset " + sourceOffset + " of topic id " + topicId));
	}

	/**
	 * With the positions on the target ({@link MirrorSettings.Positions#TARGET}), an instance is
	 * removed from the mirror's group on the target while a transaction of its copies is held
	 * in prepare, and another instance takes its partitions. Either the held transaction's offset
	 * commit carries a generation the group no longer has and is refused, so the transaction
	 * aborts (KIP-447's fencing), or it was accepted before and the successor's read of the
	 * positions waits for the transaction's outcome (stable offsets): no copy is made twice
	 * either way, and the source holds nothing of the mirror's group.
	 */
	@Test
	void anInstanceRemovedFromTheGroupWithATransactionUnderWayHasNoCopyMadeTwice() throws Exception {
		String topic = "zombie-" + fixture.name();
		String remote = "east." + topic;
		fixture.east().createTopic(topic, 2, (short) 1);
		produce(fixture.east(), values(topic, 0, 40));
		HeldPrepare hold = new HeldPrepare();
		Mirror removed = fixture.mirror("east", List.of("west"), (manager) -> manager.protocolHook(hold),
				(settings) -> settings.topics(List.of(topic)).maxRecords(10));
		assertThat(removed.settings().positions()).isEqualTo(MirrorSettings.Positions.TARGET);
		assertThat(hold.awaitHeld(WAIT)).as("a transaction held after its offset commit").isTrue();
		String group = removed.settings().consumerGroup();
		try (hold) {
			fixture.west().admin().removeMembersFromConsumerGroup(group, new RemoveMembersFromConsumerGroupOptions()).all().get();
			Mirror successor = fixture.mirror("east", List.of("west"), (settings) -> settings.topics(List.of(topic)).maxRecords(10));
			// the successor alone owns both partitions in the group (the removed one is stuck in its held transaction)
			await().atMost(WAIT).until(() -> fixture.onlyMemberOwns(group, 2));
			hold.release();
			produce(fixture.east(), values(topic, 40, 80));
			await().atMost(WAIT).until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), remote).size() >= 80);
			assertThat(ReadCommitted.values(fixture.west().bootstrapServers(), remote)).hasSize(80).doesNotHaveDuplicates();
			assertThat(successor.status().recordsMirrored()).isPositive();
			// nothing of the mirror's group is kept on the source
			assertThat(fixture.east().admin().listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get()).isEmpty();
		}
	}

	private static List<ProducerRecord<String, String>> values(String topic, int from, int to) {
		List<ProducerRecord<String, String>> records = new ArrayList<>();
		for (int i = from; i < to; i++) {
			records.add(new ProducerRecord<>(topic, i % 2 == 0 || topicPartitions(topic) == 1 ? 0 : 1, "k" + i, "v" + i));
		}
		return records;
	}

	private static int topicPartitions(String topic) {
		try {
			return fixture.east().admin().describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size();
		}
		catch (Exception ex) {
			return 1;
		}
	}

	/** The target offset of the copy of a source record, found by its provenance header. */
	private static long targetOffsetOf(String remoteTopic, int partition, long sourceOffset) {
		return ReadCommitted.records(fixture.west().bootstrapServers(), remoteTopic, WAIT).stream()
			.filter((copy) -> copy.partition() == partition)
			.filter((copy) -> Provenance.read(copy.headers()).offset() == sourceOffset)
			.mapToLong(ConsumerRecord::offset)
			.findFirst()
			.orElseThrow(() -> new AssertionError("no copy of source offset " + sourceOffset + " in " + remoteTopic));
	}

	private static long sourceOffsetOf(String topic, String value) {
		return ReadCommitted.records(fixture.east().bootstrapServers(), topic, WAIT).stream()
			.filter((record) -> utf8(record.value()).equals(value))
			.mapToLong(ConsumerRecord::offset)
			.findFirst()
			.orElseThrow(() -> new AssertionError("no " + value + " in " + topic));
	}

	private static String firstRecordOnTarget(String group, String remoteTopic) {
		Map<String, Object> config = fixture.west().consumerProperties();
		config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
		config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
		try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config, new StringDeserializer(),
				new StringDeserializer())) {
			consumer.subscribe(Set.of(remoteTopic));
			long deadline = System.nanoTime() + WAIT.toNanos();
			while (System.nanoTime() < deadline) {
				ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
				if (!records.isEmpty()) {
					return records.iterator().next().value();
				}
			}
			throw new AssertionError("nothing to read on " + remoteTopic);
		}
	}

}
