package dev.tandem.autoconfigure;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.config.ConcurrentKafkaListenerContainerFactory;
import org.springframework.kafka.core.KafkaTemplate;

import dev.tandem.actuate.KafkaTransactionsEndpoint;
import dev.tandem.actuate.TransactionMetrics;
import dev.tandem.autoconfigure.actuate.TandemActuatorAutoConfiguration;
import dev.tandem.autoconfigure.coordinator.TandemCoordinatorAutoConfiguration;
import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;
import dev.tandem.autoconfigure.diagnostics.TandemConfigurationFailureAnalyzer;
import dev.tandem.autoconfigure.kafka.TandemKafkaAutoConfiguration;
import dev.tandem.autoconfigure.transaction.ClusterTransactionalTemplate;
import dev.tandem.autoconfigure.transaction.TandemTransactionAutoConfiguration;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.CrossClusterTransactionTemplate;
import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionLog;
import dev.tandem.transaction.DecisionState;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Auto-configuration of Tandem: defaults, disabled, user beans win, optional libraries missing,
 * and start-up mistakes reported with the property to fix. Contexts that start a transaction
 * manager talk to two real single-broker clusters.
 */
class TandemAutoConfigurationTests {

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	@TempDir
	Path dataDir;

	private ApplicationContextRunner runner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(dev.tandem.autoconfigure.failover.TandemFailoverAutoConfiguration.class,
					TandemAutoConfiguration.class,
					TandemCoordinatorAutoConfiguration.class, TandemTransactionAutoConfiguration.class,
					TandemKafkaAutoConfiguration.class, TandemActuatorAutoConfiguration.class))
			.withPropertyValues("tandem.coordinator.data-dir=" + this.dataDir.resolve("coordinator"));
	}

	private ApplicationContextRunner configured() {
		return runner().withPropertyValues(
				"tandem.clusters.east.bootstrap-servers=" + kafka.cluster("east").bootstrapServers(),
				"tandem.clusters.west.bootstrap-servers=" + kafka.cluster("west").bootstrapServers(),
				"tandem.transaction.id-prefix=tests", "tandem.transaction.instance-id=auto-config-tests");
	}

	@Test
	void configuredClustersGetAStartedManagerTemplatesAndListenerFactories() {
		configured().run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).hasSingleBean(CrossClusterTransactionManager.class)
				.hasSingleBean(CrossClusterTransactionTemplate.class)
				.hasSingleBean(DecisionLog.class);
			assertThat(context.getBean(CrossClusterTransactionManager.class).clusters()).containsExactly("east", "west");
			assertThat(context.getBean("eastTandemTemplate", ClusterTransactionalTemplate.class).getCluster())
				.isEqualTo("east");
			assertThat(context.getBean("westTandemTemplate")).isInstanceOf(ClusterTransactionalTemplate.class);
			assertThat(context.getBean("eastKafkaTemplate")).isInstanceOf(KafkaTemplate.class);
			assertThat(context.getBean("westKafkaListenerContainerFactory"))
				.isInstanceOf(ConcurrentKafkaListenerContainerFactory.class);
			assertThat(context.getBean(TandemClusters.class).consumerConfig("east"))
				.containsEntry("bootstrap.servers", kafka.cluster("east").bootstrapServers());
		});
	}

	@Test
	void transactionalTemplateOutsideATransactionFailsLoudly() {
		configured().run((context) -> {
			ClusterTransactionalTemplate<?, ?> template = context.getBean("eastTandemTemplate",
					ClusterTransactionalTemplate.class);
			assertThatIllegalStateException().isThrownBy(() -> template.send("topic", null))
				.withMessageContaining("No cross-cluster transaction is bound");
		});
	}

	@Test
	void disabledTransactionsKeepPlainPerClusterBeans() {
		configured().withPropertyValues("tandem.transaction.enabled=false").run((context) -> {
			assertThat(context).hasNotFailed()
				.doesNotHaveBean(CrossClusterTransactionManager.class)
				.doesNotHaveBean(DecisionLog.class)
				.doesNotHaveBean(KafkaTransactionsEndpoint.class);
			assertThat(context.getBean("westKafkaTemplate")).isInstanceOf(KafkaTemplate.class);
		});
	}

	@Test
	void userBeansWin() {
		configured().withUserConfiguration(UserBeans.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(DecisionLog.class)).isSameAs(UserBeans.LOG);
			assertThat(context.getBean("eastKafkaTemplate")).isSameAs(context.getBean(UserBeans.class).eastTemplate);
		});
	}

	@Test
	void withoutSpringKafkaTheCoreBeansStillWork() {
		configured().withClassLoader(new FilteredClassLoader(KafkaTemplate.class)).run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(CrossClusterTransactionManager.class);
			assertThat(context.containsBean("eastKafkaTemplate")).isFalse();
			assertThat(context.getBean("eastTandemTemplate")).isInstanceOf(ClusterTransactionalTemplate.class);
		});
	}

	@Test
	void withoutActuatorOrMicrometerTheAppStillStarts() {
		configured().withClassLoader(new FilteredClassLoader(Endpoint.class, io.micrometer.core.instrument.MeterRegistry.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(CrossClusterTransactionManager.class)
				.doesNotHaveBean(KafkaTransactionsEndpoint.class)
				.doesNotHaveBean(TransactionMetrics.class));
	}

	@Test
	void endpointIsPresentWithActuatorAndShowsTheOwner() {
		configured().withPropertyValues("management.endpoints.web.exposure.include=kafkatransactions").run((context) -> {
			assertThat(context).hasSingleBean(KafkaTransactionsEndpoint.class);
			KafkaTransactionsEndpoint.TransactionsDescriptor status = context.getBean(KafkaTransactionsEndpoint.class)
				.transactions();
			assertThat(status.owner()).isEqualTo("tests.auto-config-tests");
			assertThat(status.clusters()).containsExactly("east", "west");
			assertThat(status.toString()).doesNotContain("bootstrap");
		});
	}

	@Test
	void noClusterIsReportedWithTheProperty() {
		runner().withPropertyValues("tandem.transaction.id-prefix=p", "tandem.transaction.instance-id=i")
			.run((context) -> assertThat(analysis(context.getStartupFailure()).getDescription())
				.contains("'tandem.clusters'"));
	}

	@Test
	void springsDashedNameOfAKafkaKeyInAClientSectionIsReportedWithKafkasKey() {
		configured().withPropertyValues("tandem.clusters.east.consumer.max-poll-records=777").run((context) -> {
			FailureAnalysis analysis = analysis(context.getStartupFailure());
			assertThat(analysis.getDescription()).contains("tandem.clusters.east.consumer.max-poll-records");
			assertThat(analysis.getAction()).contains("tandem.clusters.east.consumer.max.poll.records");
		});
		configured().withPropertyValues("tandem.clusters.west.properties.request-timeout-ms=5000")
			.run((context) -> assertThat(analysis(context.getStartupFailure()).getAction())
				.contains("tandem.clusters.west.properties.request.timeout.ms"));
		configured().withPropertyValues("tandem.clusters.east.producer.linger.ms=5")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void failedRecordSettingsThatCannotWorkAreReportedWithTheProperty() {
		configured().withPropertyValues("tandem.listener.attempts=0").run((context) -> {
			FailureAnalysis analysis = analysis(context.getStartupFailure());
			assertThat(analysis.getDescription()).contains("tandem.listener.attempts");
			assertThat(analysis.getAction()).contains("tandem.listener.attempts").contains("(3 by default)");
		});
		configured().withPropertyValues("tandem.listener.dead-letter.topic-suffix=no spaces").run((context) -> {
			FailureAnalysis analysis = analysis(context.getStartupFailure());
			assertThat(analysis.getDescription()).contains("'no spaces' is not a valid topic name suffix");
			assertThat(analysis.getAction()).contains("such as -dlt (the default)");
		});
		configured().withPropertyValues("tandem.listener.dead-letter.cluster=north").run((context) -> {
			FailureAnalysis analysis = analysis(context.getStartupFailure());
			assertThat(analysis.getDescription()).contains("tandem.listener.dead-letter.cluster").contains("'north'");
			assertThat(analysis.getAction()).contains("[east, west]");
		});
	}

	@Test
	void tandemListenerContainersCommitOnlyThroughTransactionsWhateverSpringKafkaListenerSays() {
		configured().withConfiguration(AutoConfigurations.of(org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration.class))
			.withPropertyValues("spring.kafka.listener.ack-mode=record", "spring.kafka.listener.poll-timeout=777ms")
			.run((context) -> {
			ConcurrentKafkaListenerContainerFactory<?, ?> factory = context.getBean("eastKafkaListenerContainerFactory",
					ConcurrentKafkaListenerContainerFactory.class);
			assertThat(factory.getContainerProperties().getAckMode())
				.isEqualTo(org.springframework.kafka.listener.ContainerProperties.AckMode.MANUAL);
			assertThat(factory.getContainerProperties().getKafkaAwareTransactionManager()).isNull();
			assertThat(factory.getContainerProperties().getPollTimeout()).isEqualTo(777);
		});
	}

	@Test
	void missingInstanceIdIsReportedWithTheProperty() {
		runner().withPropertyValues("tandem.clusters.east.bootstrap-servers=" + kafka.cluster("east").bootstrapServers(),
				"tandem.transaction.id-prefix=p").run((context) -> {
					FailureAnalysis analysis = analysis(context.getStartupFailure());
					assertThat(analysis.getDescription()).contains("tandem.transaction.instance-id");
					assertThat(analysis.getAction()).contains("tandem.transaction.instance-id");
				});
	}

	@Test
	void missingIdPrefixFallsBackToTheApplicationNameOrIsReported() {
		runner().withPropertyValues("tandem.clusters.east.bootstrap-servers=" + kafka.cluster("east").bootstrapServers(),
				"tandem.transaction.instance-id=i")
			.run((context) -> assertThat(analysis(context.getStartupFailure()).getDescription())
				.contains("tandem.transaction.id-prefix"));
		runner().withPropertyValues("tandem.clusters.east.bootstrap-servers=" + kafka.cluster("east").bootstrapServers(),
				"tandem.transaction.instance-id=i", "spring.application.name=my-app")
			.run((context) -> assertThat(context.getBean(CrossClusterTransactionManager.class).owner())
				.isEqualTo("my-app.i"));
	}

	@Test
	void clusterWithoutBootstrapServersIsReported() {
		runner().withPropertyValues("tandem.clusters.east.properties.security.protocol=SSL",
				"tandem.transaction.enabled=false")
			.run((context) -> assertThat(analysis(context.getStartupFailure()).getDescription())
				.contains("tandem.clusters.east.bootstrap-servers"));
	}

	@Test
	void invalidTransactionSettingsAreReportedWithTheProperty() {
		configured().withPropertyValues("tandem.transaction.slots=0")
			.run((context) -> assertThat(analysis(context.getStartupFailure()).getDescription())
				.contains("tandem.transaction.slots"));
		configured().withPropertyValues("tandem.transaction.commit-timeout=-5s",
				"tandem.coordinator.data-dir=" + this.dataDir.resolve("never-created"))
			.run((context) -> {
				assertThat(analysis(context.getStartupFailure()).getDescription())
					.contains("tandem.transaction.commit-timeout is -5s;");
				// checked before the embedded coordinator starts: a bad start leaves no data directory
				assertThat(this.dataDir.resolve("never-created")).doesNotExist();
			});
		configured().withPropertyValues("tandem.transaction.timeout=30d")
			.run((context) -> assertThat(analysis(context.getStartupFailure()).getDescription())
				.contains("tandem.transaction.timeout"));
	}

	@Test
	void failoverProfileIsAppliedToEveryClusterAndClusterSettingsWin() {
		configured().withPropertyValues("tandem.clusters.east.producer.retry.backoff.ms=77").run((context) -> {
			TandemClusters clusters = context.getBean(TandemClusters.class);
			assertThat(clusters.producerConfig("east")).containsEntry("retry.backoff.ms", "77");
			assertThat(String.valueOf(clusters.producerConfig("west").get("retry.backoff.ms")))
				.isEqualTo(String.valueOf(dev.tandem.failover.FailoverProfile.RETRY_BACKOFF_MS));
			assertThat(String.valueOf(clusters.producerConfig("west").get("interceptor.classes")))
				.contains("LeaderTrackingProducerInterceptor");
			assertThat(context).hasSingleBean(dev.tandem.failover.LeaderCacheRegistry.class);
		});
	}

	@Test
	void disabledFailoverLeavesKafkaClientDefaults() {
		configured().withPropertyValues("tandem.failover.enabled=false").run((context) -> {
			assertThat(context).hasNotFailed().doesNotHaveBean(dev.tandem.failover.LeaderCacheRegistry.class);
			assertThat(context.getBean(TandemClusters.class).producerConfig("west")).doesNotContainKey("retry.backoff.ms");
		});
	}

	@Test
	void unresolvedPlaceholderInTheInstanceIdIsReported() {
		configured().withPropertyValues("tandem.transaction.instance-id=${HOSTNAME_THAT_IS_NOT_SET}")
			.run((context) -> assertThat(analysis(context.getStartupFailure()).getDescription())
				.contains("tandem.transaction.instance-id").contains("placeholder"));
	}

	@Test
	void listenerConsumersOfANewGroupStartAtTheBeginning() {
		configured().run((context) -> {
			@SuppressWarnings("unchecked")
			org.springframework.kafka.core.DefaultKafkaConsumerFactory<Object, Object> factory = context
				.getBean("eastKafkaConsumerFactory", org.springframework.kafka.core.DefaultKafkaConsumerFactory.class);
			assertThat(factory.getConfigurationProperties()).containsEntry("auto.offset.reset", "earliest")
				.containsEntry("isolation.level", "read_committed")
				.containsEntry("max.poll.records", 5000);
			ConcurrentKafkaListenerContainerFactory<?, ?> listeners = context.getBean("eastKafkaListenerContainerFactory",
					ConcurrentKafkaListenerContainerFactory.class);
			assertThat(listeners.getContainerProperties().getAssignmentCommitOption())
				.isEqualTo(org.springframework.kafka.listener.ContainerProperties.AssignmentCommitOption.NEVER);
		});
	}

	@Test
	void aMaxPollRecordsOfTheAppWinsOverTandemsListenerDefault() {
		configured().withPropertyValues("spring.kafka.consumer.max-poll-records=77",
				"tandem.clusters.west.consumer.max.poll.records=5")
			.run((context) -> {
				assertThat(context.getBean("eastKafkaConsumerFactory",
						org.springframework.kafka.core.DefaultKafkaConsumerFactory.class)
					.getConfigurationProperties()).containsEntry("max.poll.records", 77);
				assertThat(context.getBean("westKafkaConsumerFactory",
						org.springframework.kafka.core.DefaultKafkaConsumerFactory.class)
					.getConfigurationProperties()).containsEntry("max.poll.records", "5");
			});
	}

	@Test
	void remoteCoordinatorWithoutPeersIsReported() {
		configured().withPropertyValues("tandem.coordinator.mode=remote")
			.run((context) -> assertThat(analysis(context.getStartupFailure()).getDescription())
				.contains("tandem.coordinator.peers"));
	}

	@Test
	void unwritableDataDirIsReported() throws Exception {
		Path file = Files.createFile(this.dataDir.resolve("not-a-directory"));
		configured().withPropertyValues("tandem.coordinator.data-dir=" + file.resolve("coordinator"))
			.run((context) -> {
				FailureAnalysis analysis = analysis(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("tandem.coordinator.data-dir");
				assertThat(analysis.getAction()).contains("writable");
			});
	}

	@Test
	void aMisspeltBootstrapServersKeyIsReportedWithTheKeysFoundAndTheMissingProperty() {
		runner().withPropertyValues("tandem.clusters.east.bootstrap-server=localhost:9092",
				"tandem.clusters.west.bootstrap-servers=" + kafka.cluster("west").bootstrapServers())
			.run((context) -> {
				FailureAnalysis analysis = analysis(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("tandem.clusters.east.bootstrap-servers")
					.contains("Keys found under tandem.clusters.east.*: [bootstrap-server]")
					.contains("Did you mean tandem.clusters.east.bootstrap-servers instead of "
							+ "tandem.clusters.east.bootstrap-server?")
					.doesNotContain("is not configured");
				assertThat(analysis.getAction()).contains(
						"rename tandem.clusters.east.bootstrap-server -> tandem.clusters.east.bootstrap-servers");
			});
		// a cluster that binds through another key: Kafka's dotted spelling, and a misspelt group
		runner().withPropertyValues("tandem.clusters.east.bootstrap.servers=localhost:9092",
				"tandem.clusters.east.producr.acks=all", "tandem.clusters.east.consumer.max.poll.records=5")
			.run((context) -> {
				FailureAnalysis analysis = analysis(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("tandem.clusters.east.bootstrap-servers is not set")
					.contains("[bootstrap.servers, consumer.max.poll.records, producr.acks]")
					.contains("Did you mean tandem.clusters.east.bootstrap-servers instead of "
							+ "tandem.clusters.east.bootstrap.servers?")
					.contains("Did you mean tandem.clusters.east.producer.acks instead of tandem.clusters.east.producr.acks?")
					.doesNotContain("instead of tandem.clusters.east.consumer");
			});
		// nothing close: the keys are listed, no guess
		runner().withPropertyValues("tandem.clusters.east.servers=localhost:9092").run((context) -> {
			FailureAnalysis analysis = analysis(context.getStartupFailure());
			assertThat(analysis.getDescription()).contains("tandem.clusters.east.bootstrap-servers is not set")
				.contains("[servers]")
				.doesNotContain("Did you mean");
		});
	}

	@Test
	void unknownClusterInAQualifierIsReportedWithTheProperty() {
		configured().withUserConfiguration(NorthUser.class).run((context) -> {
			Throwable failure = context.getStartupFailure();
			assertThat(failure).isNotNull();
			Throwable cause = failure;
			while (!(cause instanceof org.springframework.beans.factory.NoSuchBeanDefinitionException)) {
				cause = cause.getCause();
			}
			org.springframework.mock.env.MockEnvironment environment = new org.springframework.mock.env.MockEnvironment()
				.withProperty("tandem.clusters.east.bootstrap-servers", "east:9092")
				.withProperty("tandem.clusters.west.bootstrap-servers", "west:9092");
			FailureAnalysis analysis = new dev.tandem.autoconfigure.diagnostics.UnknownClusterFailureAnalyzer(environment)
				.analyze(failure);
			assertThat(analysis).as("analysis of %s", failure).isNotNull();
			assertThat(analysis.getDescription()).contains("'north'").contains("tandem.clusters.north.bootstrap-servers")
				.containsAnyOf("[east, west]", "[west, east]");
			assertThat(analysis.getAction()).contains("eastTandemTemplate");
		});
	}

	@Test
	void metersAndHealthAreRegisteredWhenTheirLibrariesArePresent() {
		configured().withBean(io.micrometer.core.instrument.simple.SimpleMeterRegistry.class).run((context) -> {
			assertThat(context).hasSingleBean(TransactionMetrics.class)
				.hasBean("kafkaClustersHealthContributor")
				.hasBean("tandemCoordinatorHealthContributor");
			io.micrometer.core.instrument.MeterRegistry registry = context
				.getBean(io.micrometer.core.instrument.MeterRegistry.class);
			assertThat(registry.find("tandem.transaction.in.doubt").gauge()).isNotNull();
			assertThat(registry.find("tandem.transaction.hanging").gauge()).isNotNull();
			assertThat(registry.find("tandem.transaction.commit").timers()).hasSize(2);
			org.springframework.boot.health.contributor.CompositeHealthContributor clusters = context
				.getBean("kafkaClustersHealthContributor", org.springframework.boot.health.contributor.CompositeHealthContributor.class);
			org.springframework.boot.health.contributor.Health east = ((org.springframework.boot.health.contributor.HealthIndicator) clusters
				.getContributor("east")).health();
			assertThat(east.getStatus()).isEqualTo(org.springframework.boot.health.contributor.Status.UP);
			assertThat(east.getDetails()).containsEntry("brokers", 1).doesNotContainKey("bootstrap.servers");
			org.springframework.boot.health.contributor.Health coordinator = context
				.getBean("tandemCoordinatorHealthContributor", org.springframework.boot.health.contributor.HealthIndicator.class)
				.health();
			assertThat(coordinator.getStatus()).isEqualTo(org.springframework.boot.health.contributor.Status.UP);
		});
	}

	@Test
	void aClusterThatDoesNotAnswerAtStartUpIsDownNamingItsBootstrapServersAndTheTimeout() {
		runner().withPropertyValues("tandem.clusters.east.bootstrap-servers=" + kafka.cluster("east").bootstrapServers(),
				"tandem.clusters.west.bootstrap-servers=localhost:1", "tandem.transaction.id-prefix=tests",
				"tandem.transaction.instance-id=unreachable-west", "tandem.transaction.commit-timeout=2s")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				org.springframework.boot.health.contributor.CompositeHealthContributor clusters = context
					.getBean("kafkaClustersHealthContributor", org.springframework.boot.health.contributor.CompositeHealthContributor.class);
				org.springframework.boot.health.contributor.Health west = ((org.springframework.boot.health.contributor.HealthIndicator) clusters
					.getContributor("west")).health(true);
				assertThat(west.getStatus()).isEqualTo(org.springframework.boot.health.contributor.Status.DOWN);
				assertThat(west.getDetails()).containsEntry("error", "cluster 'west' (localhost:1) did not answer within 5s");
				assertThat(((org.springframework.boot.health.contributor.HealthIndicator) clusters.getContributor("east"))
					.health().getStatus()).isEqualTo(org.springframework.boot.health.contributor.Status.UP);
			});
	}

	@Test
	void listenerHealthAndMetersAreThereWithSpringKafkaAndCanBeTurnedOff() {
		configured().withBean(io.micrometer.core.instrument.simple.SimpleMeterRegistry.class).run((context) -> {
			assertThat(context).hasSingleBean(dev.tandem.autoconfigure.kafka.ListenerContainerMonitor.class)
				.hasBean("tandemListenersHealthContributor");
			org.springframework.boot.health.contributor.Health listeners = context
				.getBean("tandemListenersHealthContributor", org.springframework.boot.health.contributor.HealthIndicator.class)
				.health();
			assertThat(listeners.getStatus()).isEqualTo(org.springframework.boot.health.contributor.Status.UP);
			assertThat(context.getBean(io.micrometer.core.instrument.MeterRegistry.class)
				.get("tandem.listener.containers").tag("state", "failed").gauge().value()).isZero();
		});
		configured().withPropertyValues("management.health.tandemlisteners.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean("tandemListenersHealthContributor"));
		configured().withClassLoader(new FilteredClassLoader(KafkaTemplate.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean("tandemListenersHealthContributor")
				.doesNotHaveBean(dev.tandem.autoconfigure.kafka.ListenerContainerMonitor.class));
	}

	@Test
	void negativeStallThresholdIsReportedWithTheProperty() {
		configured().withPropertyValues("tandem.transaction.hanging-check-interval=-1m").run((context) -> {
			FailureAnalysis analysis = analysis(context.getStartupFailure());
			assertThat(analysis.getDescription()).contains("tandem.transaction.hanging-check-interval is -1m;");
		});
		configured().withPropertyValues("tandem.listener.stall-threshold=-5s").run((context) -> {
			FailureAnalysis analysis = analysis(context.getStartupFailure());
			assertThat(analysis.getDescription()).contains("tandem.listener.stall-threshold");
			assertThat(analysis.getAction()).contains("tandem.listener.stall-threshold");
		});
		configured().withPropertyValues("tandem.listener.max-interval=20m").run((context) -> {
			FailureAnalysis analysis = analysis(context.getStartupFailure());
			assertThat(analysis.getDescription()).contains("tandem.listener.max-interval is 20m")
				.contains("tandem.transaction.timeout");
		});
		configured().withPropertyValues("tandem.listener.growth=0").run((context) -> {
			FailureAnalysis analysis = analysis(context.getStartupFailure());
			assertThat(analysis.getDescription()).contains("tandem.listener.growth is 0");
			assertThat(analysis.getAction()).contains("tandem.listener.growth");
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class NorthUser {

		@Bean
		String usesNorth(@org.springframework.beans.factory.annotation.Qualifier("northTandemTemplate")
				ClusterTransactionalTemplate<String, String> north) {
			return north.getCluster();
		}

	}

	private static FailureAnalysis analysis(Throwable failure) {
		assertThat(failure).isNotNull();
		Throwable cause = failure;
		while (cause != null && !(cause instanceof TandemConfigurationException)) {
			cause = cause.getCause();
		}
		assertThat(cause).as("a TandemConfigurationException in %s", failure).isNotNull();
		FailureAnalysis analysis = new TandemConfigurationFailureAnalyzer().analyze(failure);
		assertThat(analysis).isNotNull();
		return analysis;
	}

	@Configuration(proxyBeanMethods = false)
	static class UserBeans {

		static final DecisionLog LOG = new NoDecisionLog();

		final KafkaTemplate<Object, Object> eastTemplate = new KafkaTemplate<>(
				new org.springframework.kafka.core.DefaultKafkaProducerFactory<>(java.util.Map.of(
						"bootstrap.servers", "localhost:1")));

		@Bean
		DecisionLog userDecisionLog() {
			return LOG;
		}

		@Bean
		KafkaTemplate<Object, Object> eastKafkaTemplate() {
			return this.eastTemplate;
		}

	}

	/**
	 * A user's decision log with no in-doubt transactions.
	 */
	static final class NoDecisionLog implements DecisionLog {

		@Override
		public Decision decide(Decision decision, Duration timeout) {
			return decision;
		}

		@Override
		public void complete(String transactionId) {
		}

		@Override
		public void abort(String transactionId, String owner, Duration timeout) {
		}

		@Override
		public DecisionState state(String transactionId, Duration timeout) {
			return DecisionState.UNKNOWN;
		}

		@Override
		public List<Decision> inDoubt(String owner, Duration timeout) {
			return List.of();
		}

		@Override
		public void close() {
		}

	}

}
