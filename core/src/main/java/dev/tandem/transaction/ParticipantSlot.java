package dev.tandem.transaction;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One producer per cluster sharing a slot number: runs one cross-cluster transaction at a time.
 * The transactional ids are stable ({@code <id-prefix>.<cluster>.<instance-id>.<slot>}) so that
 * a restarted instance fences its own zombies.
 */
final class ParticipantSlot {

	final int index;

	final Map<String, Participant> participants = new LinkedHashMap<>();

	ParticipantSlot(int index) {
		this.index = index;
	}

	Participant participant(String cluster) {
		Participant participant = this.participants.get(cluster);
		if (participant == null) {
			throw new IllegalArgumentException("Unknown cluster '" + cluster + "'; known clusters: "
					+ this.participants.keySet());
		}
		return participant;
	}

}
