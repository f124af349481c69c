package dev.tandem.bench.mirror;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;

/**
 * One way of mirroring, started and stopped once per run on fresh topics.
 */
interface Contender extends AutoCloseable {

	/** Returns the name in the report: {@code mm2-eos}, {@code mm2-alo}, {@code tandem}, {@code alo-async}. */
	String id();

	/** Whether it translates the source's consumer groups to the target (else no failover check). */
	default boolean translatesGroups() {
		return true;
	}

	/** Whether it is an at-least-once copy, a reference of the ratios. */
	default boolean atLeastOnce() {
		return atLeastOnce(id());
	}

	/**
	 * Whether a contender's id names an at-least-once copy: {@code alo-async}, a variant of it
	 * ({@code alo-async[...]}) or {@code mm2-alo}.
	 * @param id the contender's id
	 * @return true for an at-least-once copy
	 */
	static boolean atLeastOnce(String id) {
		return id.equals("alo-async") || id.startsWith("alo-async[") || id.equals("mm2-alo");
	}

	/** Returns the settings that matter, for the report (one line). */
	String settings();

	/** Returns the remote topic's name for a source topic: MirrorMaker 2's default {@code <alias>.<topic>}. */
	default String remoteTopic(String sourceAlias, String topic) {
		return sourceAlias + "." + topic;
	}

	/**
	 * Starts mirroring {@code run.topic()} and translating {@code run.groups()}; returns once the
	 * mirror is started (not necessarily copying yet).
	 */
	void start(MirrorRun run) throws Exception;

	/** Returns why the running mirror stopped by itself, or null while it runs. */
	@Nullable String failure();

	/** Stops the mirror of the current run. */
	void stop() throws Exception;

	/**
	 * Returns the source offset a mirrored record carries (a provenance header), or -1 if it
	 * carries none and the bench must place it by its record id.
	 */
	default long sourceOffset(ConsumerRecord<byte[], byte[]> record) {
		return -1;
	}

	/** Releases what the contender keeps across runs. */
	@Override
	default void close() throws Exception {
	}

}
