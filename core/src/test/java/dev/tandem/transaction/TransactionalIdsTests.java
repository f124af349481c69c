package dev.tandem.transaction;

import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The two formats of {@link TransactionalIds}: per run (issue 26 item 1) and legacy, told apart by their last segment.
 */
class TransactionalIdsTests {

	private static final String RUN = "3f2a9c1e-5b7d-4e08-9a61-0c4d2b8e7f15";

	@Test
	void aPerRunIdEndsWithTheRunIdAndReadsBackWithIt() {
		assertThat(TransactionalIds.of("orders", "east", "web.1", 3, RUN)).isEqualTo("orders.east.web.1.3." + RUN);
		TransactionalIds.Parsed parsed = TransactionalIds.parse("orders.east.web.1.3." + RUN, "orders", "east");
		assertThat(parsed).isEqualTo(new TransactionalIds.Parsed("orders", "east", "web.1", 3, RUN));
		assertThat(parsed.owner()).isEqualTo("orders.web.1");
		assertThat(parsed.isOfRun(RUN)).isTrue();
		assertThat(parsed.isOfRun(null)).isFalse();
		assertThat(TransactionalIds.of("orders", "east", "web.1", 3, RUN))
			.startsWith(TransactionalIds.prefix("orders", "east", "web.1"));
	}

	@Test
	void aLegacyIdHasNoRunIdAndIsBuiltWithoutOne() {
		assertThat(TransactionalIds.of("orders", "east", "web.1", 3, null)).isEqualTo("orders.east.web.1.3");
		TransactionalIds.Parsed parsed = TransactionalIds.parse("orders.east.web.1.3", "orders", "east");
		assertThat(parsed.runId()).isNull();
		assertThat(parsed.isOfRun(null)).isTrue();
		assertThat(parsed.isOfRun(RUN)).isFalse();
	}

	@Test
	void onlyALowerCaseCanonicalUuidIsARunId() {
		assertThat(TransactionalIds.isRunId(UUID.randomUUID().toString())).isTrue();
		for (String notARun : List.of("", "3", RUN.toUpperCase(), RUN.replace('-', '_'), RUN + "0", RUN.substring(1),
				"3f2a9c1e5b7d4e089a610c4d2b8e7f15", "g" + RUN.substring(1))) {
			assertThat(TransactionalIds.isRunId(notARun)).as(notARun).isFalse();
		}
		assertThatIllegalArgumentException().isThrownBy(() -> TransactionalIds.of("orders", "east", "i", 0, "run-1"));
	}

	@Test
	void aRunIdAfterSomethingThatIsNotASlotIsNotTandems() {
		for (String notTandems : List.of("orders.east.i." + RUN, "orders.east.i.07." + RUN, "orders.east." + RUN,
				"orders.east.i.0." + RUN.toUpperCase(), "orders.west.i.0." + RUN)) {
			assertThat(TransactionalIds.parse(notTandems, "orders", "east")).as(notTandems).isNull();
		}
	}

	@Test
	void anInstanceIdEndingLikeASlotStaysTheInstancesOwn() {
		// instance "web" never takes instance "web.1"'s ids for its own, in either format
		assertThat(TransactionalIds.parse("orders.east.web.1.0." + RUN, "orders", "east").instanceId()).isEqualTo("web.1");
		assertThat(TransactionalIds.parse("orders.east.web.1.0", "orders", "east").instanceId()).isEqualTo("web.1");
	}

}
