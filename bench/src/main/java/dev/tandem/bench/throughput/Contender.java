package dev.tandem.bench.throughput;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.tandem.bench.BenchOptions;

/**
 * One contender of the run, parsed from {@code name} or {@code name[key=value,...]}: which copy
 * ({@value #AT_LEAST_ONCE_ASYNC}, {@value #AT_LEAST_ONCE}, {@value #KAFKA_EOS}, {@value #TANDEM}, {@value #PIPELINED},
 * {@value #LISTENER}) and its own settings on top of the run's common client settings. Keys the
 * copy itself takes ({@code depth}, {@code max-records}, {@code max-interval}, {@code close-when-idle}, {@code slots}; for
 * the listener every {@code tandem.*} or {@code spring.*} property) are not passed to clients.
 *
 * @param spec the text it was parsed from, its label in the report
 * @param kind the copy
 * @param overrides its own settings, in order
 * @since 0.1.0
 */
record Contender(String spec, String kind, Map<String, String> overrides) {

	static final String AT_LEAST_ONCE_ASYNC = "alo-async";

	static final String AT_LEAST_ONCE = "alo";

	static final String KAFKA_EOS = "kafka-eos";

	static final String TANDEM = "tandem";

	static final String PIPELINED = "tandem-pipelined";

	static final String LISTENER = "listener";

	static final List<String> KINDS = List.of(AT_LEAST_ONCE_ASYNC, AT_LEAST_ONCE, KAFKA_EOS, TANDEM, PIPELINED, LISTENER);

	/** Keys the Tandem copies take themselves. */
	static final List<String> OWN_KEYS = List.of("depth", "max-records", "max-interval", "close-when-idle", "slots");

	/**
	 * Parses a comma-separated list of specs; commas inside brackets belong to a spec.
	 * @param text for example {@code alo,kafka-eos[max.poll.records=500],tandem-pipelined[depth=4]}
	 * @return the contenders, in order
	 * @throws IllegalArgumentException if a kind is unknown or a setting is not {@code key=value}
	 */
	static List<Contender> parseAll(String text) {
		List<Contender> contenders = new ArrayList<>();
		for (String spec : BenchOptions.specs(text)) {
			contenders.add(parse(spec));
		}
		if (contenders.isEmpty()) {
			throw new IllegalArgumentException("--contenders names none of " + KINDS);
		}
		return contenders;
	}

	static Contender parse(String spec) {
		int bracket = spec.indexOf('[');
		String kind = (bracket < 0) ? spec : spec.substring(0, bracket).trim();
		if (!KINDS.contains(kind)) {
			throw new IllegalArgumentException("--contenders: unknown contender '" + kind + "'; use " + KINDS);
		}
		Map<String, String> overrides = new LinkedHashMap<>();
		if (bracket >= 0) {
			if (!spec.endsWith("]")) {
				throw new IllegalArgumentException("--contenders: '" + spec + "' lacks its closing ']'");
			}
			overrides.putAll(BenchOptions.pairs(spec.substring(bracket + 1, spec.length() - 1), "--contenders " + spec));
		}
		return new Contender(spec, kind, overrides);
	}

	/** Returns the client settings: the common ones, then this contender's own client keys. */
	ClientSettings clientSettings(Map<String, String> common) {
		Map<String, String> settings = new LinkedHashMap<>(common);
		this.overrides.forEach((key, value) -> {
			if (!OWN_KEYS.contains(key) && !isSpringProperty(key)) {
				settings.put(key, value);
			}
		});
		return new ClientSettings(settings);
	}

	/** Returns the Spring properties of the listener copy. */
	Map<String, String> springProperties() {
		Map<String, String> properties = new LinkedHashMap<>();
		this.overrides.forEach((key, value) -> {
			if (isSpringProperty(key)) {
				properties.put(key, value);
			}
		});
		return properties;
	}

	private static boolean isSpringProperty(String key) {
		return key.startsWith("tandem.") || key.startsWith("spring.") || key.startsWith("logging.");
	}

	/** Whether its target topic is on the source cluster (Kafka's exactly-once cannot span two). */
	boolean singleCluster() {
		return this.kind.equals(KAFKA_EOS);
	}

	/** Whether it is an at-least-once copy (a reference of the ratios). */
	boolean atLeastOnce() {
		return this.kind.equals(AT_LEAST_ONCE_ASYNC) || this.kind.equals(AT_LEAST_ONCE);
	}

	/** The report's name for the kind. */
	String title() {
		return switch (this.kind) {
			case AT_LEAST_ONCE_ASYNC -> "(a) at-least-once, commitAsync of acknowledged polls, no flush";
			case AT_LEAST_ONCE -> "(a') at-least-once, flush + commitSync per poll";
			case KAFKA_EOS -> "(b) Kafka exactly-once, one cluster";
			case TANDEM -> "(c) Tandem sequential";
			case PIPELINED -> "(d) Tandem pipelined";
			default -> "(e) starter @KafkaListener";
		};
	}

}
