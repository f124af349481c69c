package dev.tandem.coordinator.state;

import java.util.List;

/**
 * A batch of operations applied to the {@link DecisionTable} as one unit (one Raft log entry).
 * <p>
 * The time travels with the command, so applying it is deterministic on every replica.
 * Immutable and thread-safe.
 *
 * @param atMs the time of the command, epoch milliseconds of the writer's clock: completions
 *     and aborts are stamped with it and purges measure retention from it
 * @param operations the operations, applied in order; never empty
 * @since 0.1.0
 */
public record Command(long atMs, List<Operation> operations) {

	public Command {
		operations = List.copyOf(operations);
		if (operations.isEmpty()) {
			throw new IllegalArgumentException("A command needs at least one operation");
		}
	}

	/**
	 * Creates a command of one operation.
	 * @param atMs the time of the command, epoch milliseconds
	 * @param operation the operation
	 * @return the command
	 */
	public static Command of(long atMs, Operation operation) {
		return new Command(atMs, List.of(operation));
	}

}
