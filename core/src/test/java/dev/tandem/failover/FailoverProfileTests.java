package dev.tandem.failover;

import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Unit tests for {@link FailoverProfile}.
 */
class FailoverProfileTests {

	private final FailoverProfile profile = FailoverProfile.standard();

	@Test
	void producerPropertiesCarryEveryProducerSettingOfTheProfile() {
		Map<String, Object> properties = this.profile.producerProperties(Map.of());
		assertThat(properties).containsEntry("retry.backoff.ms", 10)
			.containsEntry("retry.backoff.max.ms", 1000)
			.containsEntry("reconnect.backoff.ms", 50)
			.containsEntry("reconnect.backoff.max.ms", 1000)
			.containsEntry("socket.connection.setup.timeout.ms", 2000)
			.containsEntry("socket.connection.setup.timeout.max.ms", 10_000)
			.containsEntry("request.timeout.ms", 10_000)
			.containsEntry("delivery.timeout.ms", 120_000)
			.containsEntry("metadata.max.age.ms", 60_000)
			.containsEntry("metadata.recovery.strategy", "rebootstrap")
			.containsEntry("metadata.recovery.rebootstrap.trigger.ms", 30_000);
	}

	@Test
	void consumerAndAdminPropertiesLeaveOutSettingsTheyDoNotUnderstandOrShouldNotGet() {
		assertThat(this.profile.consumerProperties(Map.of())).doesNotContainKey("delivery.timeout.ms")
			.containsEntry("request.timeout.ms", 10_000)
			.containsEntry("metadata.recovery.strategy", "rebootstrap");
		assertThat(this.profile.adminProperties(Map.of())).doesNotContainKeys("delivery.timeout.ms", "request.timeout.ms")
			.containsEntry("retry.backoff.ms", 10);
	}

	@Test
	void everySettingIsAKnownConfigurationKeyOfEachClientTypeItIsAppliedTo() {
		for (FailoverProfile.Setting setting : this.profile.settings()) {
			for (ClientType clientType : setting.clientTypes()) {
				assertThat(clientType.configNames()).as("%s for %s", setting.name(), clientType).contains(setting.name());
			}
			assertThat(setting.doc()).isNotBlank();
		}
	}

	@Test
	void propertyMapsParseAsKafkaClientConfigurations() {
		Map<String, Object> producer = this.profile.producerProperties(Map.of(
				CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092",
				ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
				ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class));
		ProducerConfig producerConfig = new ProducerConfig(producer);
		assertThat(producerConfig.getLong("retry.backoff.ms")).isEqualTo(10L);
		assertThat(producerConfig.getInt("delivery.timeout.ms")).isEqualTo(120_000);
		Map<String, Object> consumer = this.profile.consumerProperties(Map.of(
				CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092",
				ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
				ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class));
		assertThat(new ConsumerConfig(consumer).getInt("request.timeout.ms")).isEqualTo(10_000);
		Map<String, Object> admin = this.profile
			.adminProperties(Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092"));
		assertThat(new AdminClientConfig(admin).getLong("metadata.recovery.rebootstrap.trigger.ms")).isEqualTo(30_000L);
	}

	@Test
	void callerPropertiesWinOverTheProfile() {
		Map<String, Object> properties = this.profile
			.producerProperties(Map.of("retry.backoff.ms", "250", "metadata.recovery.strategy", "none", "acks", "1"));
		assertThat(properties).containsEntry("retry.backoff.ms", "250")
			.containsEntry("metadata.recovery.strategy", "none")
			.containsEntry("acks", "1")
			.containsEntry("retry.backoff.max.ms", 1000);
	}

	@Test
	void profileDoesNotSetAcksIdempotenceOrLinger() {
		assertThat(this.profile.producerProperties(Map.of())).doesNotContainKeys("acks", "enable.idempotence",
				"linger.ms", "max.in.flight.requests.per.connection");
	}

	@Test
	void raisingALowerBoundAboveTheProfilesUpperBoundRaisesTheUpperBound() {
		Map<String, Object> properties = this.profile
			.consumerProperties(Map.of("socket.connection.setup.timeout.ms", 15_000, "retry.backoff.ms", "3000"));
		assertThat(properties).containsEntry("socket.connection.setup.timeout.max.ms", 15_000L)
			.containsEntry("retry.backoff.max.ms", 3000L);
	}

	@Test
	void contradictoryConnectionSetupTimeoutsSetByTheCallerAreRejectedNamingBoth() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.profile.producerProperties(
					Map.of("socket.connection.setup.timeout.ms", 20_000, "socket.connection.setup.timeout.max.ms", 5000)))
			.withMessageContaining("socket.connection.setup.timeout.ms=20000")
			.withMessageContaining("socket.connection.setup.timeout.max.ms=5000");
	}

	@Test
	void raisingTheRequestTimeoutRaisesTheProfilesDeliveryTimeout() {
		Map<String, Object> properties = this.profile
			.producerProperties(Map.of("request.timeout.ms", 150_000, "linger.ms", 20));
		assertThat(properties).containsEntry("delivery.timeout.ms", 150_020);
	}

	@Test
	void aDeliveryTimeoutBelowLingerPlusRequestTimeoutSetByTheCallerIsRejectedNamingBoth() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.profile.producerProperties(Map.of("delivery.timeout.ms", 5000)))
			.withMessageContaining("delivery.timeout.ms=5000")
			.withMessageContaining("request.timeout.ms");
	}

	@Test
	void profileLevelChangesApplyToEveryClientTypeThatKnowsTheKey() {
		FailoverProfile changed = this.profile.withSetting("retry.backoff.ms", 25)
			.withSetting("client.dns.lookup", "use_all_dns_ips")
			.withoutSetting("metadata.max.age.ms");
		assertThat(changed.adminProperties(Map.of())).containsEntry("retry.backoff.ms", 25)
			.containsEntry("client.dns.lookup", "use_all_dns_ips")
			.doesNotContainKey("metadata.max.age.ms");
		assertThat(changed.setting("retry.backoff.ms")).isNotNull();
		assertThat(this.profile.producerProperties(Map.of())).containsEntry("retry.backoff.ms", 10);
		assertThatIllegalArgumentException().isThrownBy(() -> this.profile.withSetting("no.such.setting", 1))
			.withMessageContaining("no.such.setting");
	}

	@Test
	void emptyProfileLeavesTheCallersPropertiesUnchanged() {
		Map<String, Object> user = new HashMap<>();
		user.put("bootstrap.servers", "localhost:9092");
		assertThat(FailoverProfile.none().producerProperties(user)).isEqualTo(user).isNotSameAs(user);
	}

}
