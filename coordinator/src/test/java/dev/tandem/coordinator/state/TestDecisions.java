package dev.tandem.coordinator.state;

import java.util.List;

import dev.tandem.transaction.Decision;
import dev.tandem.transaction.Decision.ParticipantRecord;

/**
 * Decisions for tests.
 */
public final class TestDecisions {

	private TestDecisions() {
	}

	public static Decision decision(String transactionId, String owner, long decidedAtMs) {
		return new Decision(transactionId, owner, decidedAtMs,
				List.of(new ParticipantRecord("east", "app.east.i1.0", 4000L + decidedAtMs, (short) 3, "tandem-markers", 2,
						1000L + decidedAtMs),
						new ParticipantRecord("west", "app.west.i1.0", 9000L, (short) 32767, "tandem-markers", 0, 7L)));
	}

}
