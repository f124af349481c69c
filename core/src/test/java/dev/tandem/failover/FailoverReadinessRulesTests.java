package dev.tandem.failover;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.tandem.failover.FailoverReadiness.TopicSettings;
import dev.tandem.failover.ReadinessFinding.Severity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Unit tests for the rules of {@link FailoverReadiness}, on settings as a 3-broker cluster
 * would report them.
 */
class FailoverReadinessRulesTests {

	private static final Map<String, String> TUNED = Map.of("replica.fetch.backoff.ms", "50",
			"broker.session.timeout.ms", "3000", "broker.heartbeat.interval.ms", "1000",
			"unclean.leader.election.enable", "false", "min.insync.replicas", "2", "default.replication.factor", "3",
			"replica.lag.time.max.ms", "10000", "auto.leader.rebalance.enable", "false");

	@Test
	void tunedThreeBrokerClusterIsReady() {
		FailoverReadinessReport report = evaluate(brokers(TUNED, TUNED, TUNED), Map.of());
		assertThat(report.ready()).isTrue();
		assertThat(report.findings()).hasSize(7).allSatisfy((finding) -> {
			assertThat(finding.severity()).isEqualTo(Severity.OK);
			assertThat(finding.scope()).isEqualTo("brokers 0,1,2");
		});
		assertThat(report.summary()).contains("allow fast failover");
	}

	@Test
	void brokerWithADifferentValueGetsItsOwnFinding() {
		Map<String, String> slow = new LinkedHashMap<>(TUNED);
		slow.put("replica.fetch.backoff.ms", "1000");
		FailoverReadinessReport report = evaluate(brokers(TUNED, slow, TUNED), Map.of());
		assertThat(report.findings("replica.fetch.backoff.ms")).extracting(ReadinessFinding::scope,
				ReadinessFinding::severity)
			.containsExactly(tuple("brokers 0,2", Severity.OK),
					tuple("broker 1", Severity.WARNING));
	}

	@Test
	void heartbeatIntervalAboveAThirdOfTheSessionTimeoutIsFlagged() {
		Map<String, String> sparse = new LinkedHashMap<>(TUNED);
		sparse.put("broker.heartbeat.interval.ms", "1500");
		assertThat(evaluate(brokers(sparse), Map.of()).findings("broker.heartbeat.interval.ms")).singleElement()
			.satisfies((finding) -> {
				assertThat(finding.severity()).isEqualTo(Severity.WARNING);
				assertThat(finding.recommendation()).contains("1000");
			});
	}

	@Test
	void minInsyncReplicasOfOneOrEqualToTheReplicationFactorIsFlagged() {
		Map<String, String> one = new LinkedHashMap<>(TUNED);
		one.put("min.insync.replicas", "1");
		assertThat(evaluate(brokers(one, one, one), Map.of()).findings("min.insync.replicas")).singleElement()
			.extracting(ReadinessFinding::severity)
			.isEqualTo(Severity.WARNING);
		FailoverReadinessReport report = evaluate(brokers(TUNED),
				Map.of("strict", new TopicSettings(2, Map.of("min.insync.replicas", "2"), null), "fine",
						new TopicSettings(3, Map.of("min.insync.replicas", "2"), null)));
		assertThat(report.findings("min.insync.replicas")).extracting(ReadinessFinding::scope, ReadinessFinding::severity)
			.contains(tuple("topic strict", Severity.WARNING),
					tuple("topic fine", Severity.OK));
	}

	@Test
	void unreadableSettingsAreUnknownNotMissing() {
		FailoverReadinessReport report = FailoverReadiness.evaluate("east", Instant.EPOCH,
				Map.of(0, Map.of(), 1, Map.of()), "Cluster authorization failed.", Map.of());
		assertThat(report.findings()).hasSize(7).allSatisfy((finding) -> {
			assertThat(finding.severity()).isEqualTo(Severity.UNKNOWN);
			assertThat(finding.reason()).contains("Cluster authorization failed.");
		});
		assertThat(report.ready()).isTrue();
	}

	@Test
	void kafkaDefaultsAreFlaggedWhereTheySlowFailover() {
		Map<String, String> defaults = Map.of("replica.fetch.backoff.ms", "1000", "broker.session.timeout.ms", "9000",
				"broker.heartbeat.interval.ms", "2000", "unclean.leader.election.enable", "false",
				"min.insync.replicas", "1", "default.replication.factor", "1", "replica.lag.time.max.ms", "30000",
				"auto.leader.rebalance.enable", "true");
		FailoverReadinessReport report = evaluate(brokers(defaults, defaults, defaults), Map.of());
		assertThat(report.warnings()).extracting(ReadinessFinding::setting)
			.containsExactly("replica.fetch.backoff.ms", "broker.session.timeout.ms", "min.insync.replicas");
		assertThat(report.findings(Severity.INFO)).extracting(ReadinessFinding::setting)
			.containsExactly("replica.lag.time.max.ms", "auto.leader.rebalance.enable");
	}

	@Test
	void aClusterOfOneBrokerIsNotWarnedAboutMinInsyncReplicasOfOneButAboutMoreThanOne() {
		Map<String, String> one = new LinkedHashMap<>(TUNED);
		one.put("min.insync.replicas", "1");
		one.put("default.replication.factor", "1");
		FailoverReadinessReport demo = evaluate(brokers(one), Map.of());
		assertThat(demo.ready()).isTrue();
		assertThat(demo.findings("min.insync.replicas")).singleElement().satisfies((finding) -> {
			assertThat(finding.severity()).isEqualTo(Severity.INFO);
			assertThat(finding.reason()).contains("one broker");
		});
		Map<String, String> two = new LinkedHashMap<>(one);
		two.put("min.insync.replicas", "2");
		assertThat(evaluate(brokers(two), Map.of()).findings("min.insync.replicas")).singleElement()
			.extracting(ReadinessFinding::severity)
			.isEqualTo(Severity.WARNING);
	}

	@SafeVarargs
	private static Map<Integer, Map<String, String>> brokers(Map<String, String>... configs) {
		Map<Integer, Map<String, String>> brokers = new LinkedHashMap<>();
		for (int i = 0; i < configs.length; i++) {
			brokers.put(i, configs[i]);
		}
		return brokers;
	}

	private static FailoverReadinessReport evaluate(Map<Integer, Map<String, String>> brokers,
			Map<String, TopicSettings> topics) {
		return FailoverReadiness.evaluate("east", Instant.EPOCH, brokers, null, topics);
	}

}
