package dev.tandem.mirror.app;

import java.util.List;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;

import dev.tandem.autoconfigure.TandemProperties;
import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;
import dev.tandem.mirror.MirrorSettings;
import dev.tandem.transaction.CrossClusterTransactionManagerBuilder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class MirrorSettingsFactoryTests {

	private final TandemProperties tandem = new TandemProperties();

	MirrorSettingsFactoryTests() {
		this.tandem.getClusters().put("east", new TandemProperties.Cluster());
		this.tandem.getClusters().put("west", new TandemProperties.Cluster());
	}

	@Test
	void validPropertiesBecomeSettingsWithMirrorMakerNamesAndTheMarkerTopicExcluded() {
		MirrorSettings settings = MirrorSettingsFactory.create(properties((p) -> p.setGroupPattern("billing-.*")),
				this.tandem);
		assertThat(settings.naming().remoteTopic("east", "orders")).isEqualTo("east.orders");
		assertThat(settings.consumerGroup()).isEqualTo("tandem-mirror-east");
		assertThat(settings.groups().matches("billing-eu")).isTrue();
		assertThat(settings.topics().matches("orders")).isTrue();
		assertThat(settings.topics().matches(this.tandem.getTransaction().getMarkerTopic())).isFalse();
	}

	@Test
	void missingSourceNamesThePropertyAndTheClusters() {
		assertFails(properties((p) -> p.setSource(null)), "tandem.mirror.source", "tandem.clusters [east, west]");
	}

	@Test
	void unknownTargetNamesTheProperty() {
		assertFails(properties((p) -> p.setTargets(List.of("south"))), "tandem.mirror.targets", "south");
	}

	@Test
	void sourceAmongTheTargetsIsRefused() {
		assertFails(properties((p) -> p.setTargets(List.of("west", "east"))), "tandem.mirror.targets", "cannot be a target");
	}

	@Test
	void noTopicsIsRefused() {
		assertFails(properties((p) -> p.setTopics(List.of())), "tandem.mirror.topics", "No topics");
		assertThatExceptionOfType(TandemConfigurationException.class)
			.isThrownBy(() -> MirrorSettingsFactory.create(properties((p) -> p.setTopics(List.of())), this.tandem))
			.satisfies((ex) -> {
				assertThat(ex.getMessage()).doesNotContain("tandem.mirror.No");
				assertThat(ex.getAction()).contains("tandem.mirror.topic-pattern");
			});
	}

	@Test
	void depthNotBelowTheSlotsIsRefused() {
		assertFails(properties((p) -> p.setDepth(CrossClusterTransactionManagerBuilder.DEFAULT_SLOTS)), "tandem.mirror.depth",
				"tandem.transaction.slots");
	}

	@Test
	void invalidRegularExpressionNamesTheProperty() {
		assertFails(properties((p) -> p.setTopicPattern("(unclosed")), "tandem.mirror.topic-pattern", "regular expression");
	}

	@Test
	void tooShortGroupSyncIntervalNamesThePropertyAndTheFix() {
		assertFails(properties((p) -> p.setGroupSyncInterval(java.time.Duration.ofMillis(1))),
				"tandem.mirror.group-sync-interval", "10ms or more");
	}

	@Test
	void invalidExcludeNamesTheExcludesProperty() {
		assertFails(properties((p) -> p.setExcludes(List.of("[unclosed"))), "tandem.mirror.excludes",
				"regular expression");
	}

	@Test
	void positionsAreOnTheTargetWithOneTargetAndOnTheSourceWithMoreUnlessSet() {
		this.tandem.getClusters().put("south", new TandemProperties.Cluster());
		assertThat(MirrorSettingsFactory.create(properties((p) -> {
		}), this.tandem).positions()).isEqualTo(MirrorSettings.Positions.TARGET);
		assertThat(MirrorSettingsFactory.create(properties((p) -> p.setTargets(List.of("west", "south"))), this.tandem)
			.positions()).isEqualTo(MirrorSettings.Positions.SOURCE);
		assertThat(MirrorSettingsFactory.create(properties((p) -> p.setPositions(MirrorSettings.Positions.SOURCE)),
				this.tandem).positions()).isEqualTo(MirrorSettings.Positions.SOURCE);
	}

	@Test
	void positionsOnTheTargetWithTwoTargetsNamesThePropertyAndTheFix() {
		this.tandem.getClusters().put("south", new TandemProperties.Cluster());
		assertFails(properties((p) -> {
			p.setTargets(List.of("west", "south"));
			p.setPositions(MirrorSettings.Positions.TARGET);
		}), "tandem.mirror.positions", "use source");
	}

	@Test
	void propertiesLeftUnsetGiveTheBuildersDefaults() {
		MirrorSettings fromProperties = MirrorSettingsFactory.create(properties((p) -> {
		}), this.tandem);
		MirrorSettings fromBuilder = MirrorSettings.builder("east", List.of("west")).topics(List.of("orders")).build();
		assertThat(fromProperties).usingRecursiveComparison()
			.comparingOnlyFields("groupSyncInterval", "consumerGroup", "replicationFactor", "copiedConfigs",
					"topicRefreshInterval", "maxRecords", "maxInterval", "depth", "growth", "positions", "mappingCapacity",
					"rebuildRecords")
			.isEqualTo(fromBuilder);
		assertThat(fromProperties.naming().isIdentity()).isEqualTo(fromBuilder.naming().isIdentity());
		assertThat(fromProperties.naming().separator()).isEqualTo(fromBuilder.naming().separator());
	}

	private MirrorProperties properties(Consumer<MirrorProperties> customizer) {
		MirrorProperties properties = new MirrorProperties();
		properties.setSource("east");
		properties.setTargets(List.of("west"));
		properties.setTopics(List.of("orders"));
		customizer.accept(properties);
		return properties;
	}

	private void assertFails(MirrorProperties properties, String property, String text) {
		assertThatExceptionOfType(TandemConfigurationException.class)
			.isThrownBy(() -> MirrorSettingsFactory.create(properties, this.tandem))
			.satisfies((ex) -> {
				assertThat(ex.getProperty()).isEqualTo(property);
				assertThat(ex.getMessage() + " " + ex.getAction()).contains(text);
			});
	}

}
