package dev.tandem.actuate;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link KafkaClusterHealthIndicator} against an address where no broker listens (port 1 of the
 * loopback interface: the connection is refused, the describe-cluster call times out).
 */
class KafkaClusterHealthIndicatorTests {

	@Test
	void aClusterThatDoesNotAnswerIsDownNamingTheClusterItsBootstrapServersAndTheTimeout() {
		KafkaClusterHealthIndicator indicator = new KafkaClusterHealthIndicator(
				Map.of("bootstrap.servers", "localhost:1"), Duration.ofSeconds(1), "east", null);
		try {
			Health health = indicator.health(true);
			assertThat(health.getStatus()).isEqualTo(Status.DOWN);
			assertThat(health.getDetails()).containsEntry("error",
					"cluster 'east' (localhost:1) did not answer within 1s");
		}
		finally {
			indicator.destroy();
		}
	}

	@Test
	void bootstrapServersGivenAsAListAreJoinedAndAnUnnamedClusterIsStillDescribed() {
		KafkaClusterHealthIndicator indicator = new KafkaClusterHealthIndicator(
				Map.of("bootstrap.servers", List.of("localhost:1", "127.0.0.1:1")), Duration.ofMillis(500));
		try {
			assertThat(indicator.health(true).getDetails()).containsEntry("error",
					"cluster (localhost:1,127.0.0.1:1) did not answer within 500ms");
		}
		finally {
			indicator.destroy();
		}
	}

}
