package dev.tandem.transaction;

/**
 * Points in the two-phase commit at which a {@link ProtocolHook} is called: where a crash of the
 * app has a distinct consequence ({@code docs/architecture.md}, "The protocol and recovery").
 *
 * @since 0.1.0
 */
public enum ProtocolStep {

	/** Sends done, nothing flushed yet. A crash here aborts everything. */
	BEFORE_PREPARE,

	/** Every participant flushed and acknowledged, no decision yet. A crash here aborts everything. */
	AFTER_PREPARE,

	/** The decision is durable, no participant committed yet. A crash here commits on recovery. */
	AFTER_DECISION,

	/** At least one participant committed, not all. A crash here commits the rest on recovery. */
	MID_COMMIT,

	/** Every participant committed, the completion not yet recorded. */
	AFTER_COMMIT

}
