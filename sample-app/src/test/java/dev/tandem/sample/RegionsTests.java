package dev.tandem.sample;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class RegionsTests {

	private final Regions regions = Regions.load();

	@Test
	void pacificAndMountainAirportsRouteWest() {
		assertThat(this.regions.clusterOf("LAX")).isEqualTo(Regions.WEST);
		assertThat(this.regions.clusterOf("DEN")).isEqualTo(Regions.WEST);
		assertThat(this.regions.clusterOf("HNL")).isEqualTo(Regions.WEST);
	}

	@Test
	void otherAirportsRouteEast() {
		assertThat(this.regions.clusterOf("ATL")).isEqualTo(Regions.EAST);
		assertThat(this.regions.clusterOf("DTW")).isEqualTo(Regions.EAST);
		assertThat(this.regions.clusterOf("DFW")).isEqualTo(Regions.EAST);
	}

	@Test
	void unknownAirportIsRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.regions.clusterOf("ZZZ9"));
	}

}
