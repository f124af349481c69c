package dev.tandem.test;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link ClusterPreset}; the presets start on real brokers in the test classes that
 * use them.
 */
class ClusterPresetTests {

	@Test
	void eachPresetDeclaresItsClustersInStartOrder() {
		assertThat(ClusterPreset.EAST1_WEST1.builder().build().names()).containsExactly("east", "west");
		assertThat(ClusterPreset.EAST3_WEST3.builder().build().names()).containsExactly("east", "west");
		assertThat(ClusterPreset.EAST3.builder().build().names()).containsExactly("east");
		assertThat(ClusterPreset.EAST1_WEST1.brokers()).isEqualTo(1);
		assertThat(ClusterPreset.EAST3_WEST3.brokers()).isEqualTo(3);
		assertThat(ClusterPreset.EAST3.brokers()).isEqualTo(3);
	}

	@Test
	void everyCallReturnsANewBuilderThatATestClassMayExtend() {
		EmbeddedKafkaClusters.Builder extended = ClusterPreset.EAST3.builder().cluster("west", 1);
		assertThat(extended.build().names()).containsExactly("east", "west");
		assertThat(ClusterPreset.EAST3.builder().build().names()).containsExactly("east");
		assertThatIllegalArgumentException().isThrownBy(() -> ClusterPreset.EAST3.builder().cluster("east", 1))
			.withMessageContaining("'east' is already declared");
	}

}
