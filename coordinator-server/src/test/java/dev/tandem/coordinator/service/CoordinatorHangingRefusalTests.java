package dev.tandem.coordinator.service;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;

import dev.tandem.clients.ClusterClients;
import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionLog;
import dev.tandem.transaction.DecisionState;
import dev.tandem.transaction.HangingTransactions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Refusals of {@code POST /actuator/coordinatorhanging/{cluster}/{transactionalId}} that need no
 * broker (found by breaking trials): an abort on a cluster that does not answer is a 400 saying
 * why, not a bare 500, an id that is not of the form Tandem builds is refused without reading the
 * cluster, and a refusal never echoes an oversized selector in full.
 */
class CoordinatorHangingRefusalTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(2);

	/** A log without leases or decisions. */
	private static final DecisionLog EMPTY = new DecisionLog() {

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

	};

	/** The endpoint over cluster "east" whose brokers never answer (nothing listens on port 1). */
	private static CoordinatorHangingTransactionsEndpoint unreachable() {
		ClusterClients clients = ClusterClients.builder().cluster("east", Map.of("bootstrap.servers", "127.0.0.1:1")).build();
		return new CoordinatorHangingTransactionsEndpoint(
				HangingTransactions.forApps(clients, () -> List.of("orders"), EMPTY, Duration.ofMinutes(1)), List.of("east"),
				TIMEOUT);
	}

	@Test
	void anAbortOnAClusterThatDoesNotAnswerIsRefusedSayingWhy() {
		assertThatThrownBy(() -> unreachable().abort("east", "orders.east.i1.0"))
			.isInstanceOf(InvalidEndpointRequestException.class)
			.hasMessageStartingWith("Nothing aborted: ")
			.hasMessageContaining("cluster 'east'");
	}

	@Test
	void anIdNotOfTheFormTandemBuildsIsRefusedWithoutReadingTheCluster() {
		for (String notTandems : List.of("payments-tx-7", "orders.east..0", "orders.east.i1.07", "")) {
			assertThatThrownBy(() -> unreachable().abort("east", notTandems))
				.isInstanceOf(InvalidEndpointRequestException.class)
				.hasMessageContaining("is not a transactional id of a served app")
				.hasMessageContaining("left alone");
		}
	}

	@Test
	void aRefusalDoesNotEchoAnOversizedSelector() {
		String huge = "x".repeat(200_000);
		assertThatThrownBy(() -> unreachable().abort(huge, "orders.east.i1.0"))
			.isInstanceOf(InvalidEndpointRequestException.class)
			.satisfies((ex) -> assertThat(ex.getMessage()).hasSizeLessThan(1_100).contains("200000 characters"));
	}

}
