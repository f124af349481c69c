package dev.tandem.failover;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.tandem.failover.ReadinessFinding.Severity;
import dev.tandem.test.ClusterName;
import dev.tandem.test.EmbeddedKafkaCluster;
import dev.tandem.test.EnableEmbeddedKafkaClusters;
import dev.tandem.test.EnableEmbeddedKafkaClusters.KafkaCluster;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link FailoverReadiness} against real brokers: one cluster with Kafka's stock failover
 * settings, one with the tuned settings of Tandem's test clusters.
 */
@EnableEmbeddedKafkaClusters(clusters = {
		@KafkaCluster(name = "stock", brokers = 1,
				brokerProperties = { "replica.fetch.backoff.ms=1000", "broker.session.timeout.ms=9000",
						"broker.heartbeat.interval.ms=2000" }),
		@KafkaCluster(name = "tuned", brokers = 1) })
class FailoverReadinessTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(15);

	@Test
	void defaultReplicaFetchBackoffIsFlaggedAndFiftyMillisecondsAccepted(@ClusterName("stock") EmbeddedKafkaCluster stock,
			@ClusterName("tuned") EmbeddedKafkaCluster tuned) {
		FailoverReadinessReport stockReport = check(stock, List.of());
		assertThat(stockReport.findings("replica.fetch.backoff.ms")).singleElement().satisfies((finding) -> {
			assertThat(finding.severity()).isEqualTo(Severity.WARNING);
			assertThat(finding.value()).isEqualTo("1000");
			assertThat(finding.scope()).isEqualTo("broker 0");
			assertThat(finding.recommendation()).isEqualTo("set 50");
		});
		assertThat(stockReport.ready()).isFalse();
		assertThat(stockReport.summary()).contains("replica.fetch.backoff.ms=1000 (broker 0): set 50");
		assertThat(check(tuned, List.of()).findings("replica.fetch.backoff.ms")).singleElement()
			.satisfies((finding) -> {
				assertThat(finding.severity()).isEqualTo(Severity.OK);
				assertThat(finding.value()).isEqualTo("50");
			});
	}

	@Test
	void defaultBrokerSessionTimeoutIsFlaggedWhereBrokersReportIt(@ClusterName("stock") EmbeddedKafkaCluster stock,
			@ClusterName("tuned") EmbeddedKafkaCluster tuned) {
		assertThat(check(stock, List.of()).findings("broker.session.timeout.ms")).singleElement()
			.satisfies((finding) -> {
				assertThat(finding.severity()).isEqualTo(Severity.WARNING);
				assertThat(finding.value()).isEqualTo("9000");
			});
		FailoverReadinessReport tunedReport = check(tuned, List.of());
		assertThat(tunedReport.findings("broker.session.timeout.ms")).singleElement()
			.satisfies((finding) -> assertThat(finding.severity()).isEqualTo(Severity.OK));
		assertThat(tunedReport.findings("broker.heartbeat.interval.ms")).singleElement()
			.satisfies((finding) -> assertThat(finding.severity()).isEqualTo(Severity.OK));
	}

	@Test
	void topicsWithUncleanElectionOrNoSpareReplicaAreFlagged(@ClusterName("tuned") EmbeddedKafkaCluster tuned) {
		tuned.createTopic("unsafe", 1, (short) 1, Map.of("unclean.leader.election.enable", "true"));
		FailoverReadinessReport report = check(tuned, List.of("unsafe", "missing"));
		assertThat(report.findings("unclean.leader.election.enable"))
			.filteredOn((finding) -> finding.scope().equals("topic unsafe"))
			.singleElement()
			.satisfies((finding) -> assertThat(finding.severity()).isEqualTo(Severity.WARNING));
		assertThat(report.findings("min.insync.replicas"))
			.filteredOn((finding) -> finding.scope().equals("topic unsafe"))
			.singleElement()
			.satisfies((finding) -> assertThat(finding.severity()).isEqualTo(Severity.WARNING));
		assertThat(report.findings()).filteredOn((finding) -> finding.scope().equals("topic missing"))
			.isNotEmpty()
			.allSatisfy((finding) -> assertThat(finding.severity()).isEqualTo(Severity.UNKNOWN));
	}

	private static FailoverReadinessReport check(EmbeddedKafkaCluster cluster, List<String> topics) {
		return new FailoverReadiness(cluster.name(), cluster.admin()).check(topics, TIMEOUT);
	}

}
