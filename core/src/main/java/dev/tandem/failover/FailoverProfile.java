package dev.tandem.failover;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.jspecify.annotations.Nullable;

/**
 * Client settings that Tandem applies by default so that Kafka clients fail over to a new
 * partition leader quickly, and the property maps for producers, consumers and admin clients
 * built from them.
 * <p>
 * kafka-clients 3.7+ already follows the leader hints that brokers put into
 * {@code NOT_LEADER_OR_FOLLOWER} produce and fetch responses (KIP-951): a retry towards a
 * leader with a newer epoch is sent at once, without a metadata round trip and without
 * {@code retry.backoff.ms}. What remains slow are the paths without a hint: a broker that
 * disconnects (shutdown, crash), a connection attempt to a host that no longer answers, a
 * request to a leader that went silent, and a client whose every known broker was replaced.
 * The values below shorten those paths; each constant's {@code _DOC} says why the value was
 * chosen.
 * <p>
 * What the values rest on: the mechanism each {@code _DOC} describes, and the {@code bench}
 * module's {@code FailoverBench} (KIP-951's scenario: a move of 100 leaders, a graceful
 * shutdown and a {@code SIGKILL} of the busiest broker, at 0, 10 and 40 ms round trip time
 * between clients and brokers), whose results, with the command and the machine, are in
 * {@code docs/benchmarks.md} (section "Failover"). That page also says which values the bench
 * cannot test: the dead-host, silent-leader and replaced-cluster paths are not in its
 * scenarios. Broker settings ({@code replica.fetch.backoff.ms},
 * {@code broker.session.timeout.ms}) bound failover more than any client setting does, which
 * is why Tandem checks them ({@link FailoverReadiness}).
 * <p>
 * Not part of the profile, on purpose: {@code acks} and {@code enable.idempotence} (the
 * kafka-clients defaults {@code all} and {@code true} are what keeps failover retries free of
 * loss, duplicates and reordering; setting them here would turn a user's {@code acks=1} into
 * a configuration error), {@code linger.ms} and {@code max.in.flight.requests.per.connection}
 * (throughput settings that do not change failover).
 * <p>
 * Property maps are built as: the profile's settings that the client type understands, then
 * the caller's properties on top (the caller's values always win), then two consistency
 * rules so that an override means what its author meant:
 * <ul>
 * <li>if the caller sets a lower bound ({@code retry.backoff.ms}, {@code reconnect.backoff.ms}
 * or {@code socket.connection.setup.timeout.ms}) above the profile's upper bound without
 * setting the upper bound, the upper bound is raised to it;</li>
 * <li>for producers, if the caller raises {@code request.timeout.ms} or {@code linger.ms} so
 * that the profile's {@code delivery.timeout.ms} would be below their sum (which
 * {@code KafkaProducer} rejects), the delivery timeout is raised to the sum.</li>
 * </ul>
 * Contradictions in the caller's own properties are rejected with an
 * {@link IllegalArgumentException} naming both properties.
 * <p>
 * Instances are immutable and thread-safe.
 *
 * @author Tandem
 * @since 0.1.0
 * @see <a href="https://cwiki.apache.org/confluence/display/KAFKA/KIP-951%3A+Leader+discovery+optimisations+for+the+client">KIP-951</a>
 */
public final class FailoverProfile {

	/**
	 * Tandem's {@code retry.backoff.ms}: 10 ms (kafka-clients: 100 ms).
	 */
	public static final int RETRY_BACKOFF_MS = 10;

	/**
	 * Why {@link #RETRY_BACKOFF_MS}.
	 */
	public static final String RETRY_BACKOFF_MS_DOC = "After a disconnect or an error without a leader hint "
			+ "(a broker shutting down, a pre-KIP-951 broker) every retried batch and the metadata refresh that "
			+ "finds the new leader first wait this long; the backoff then grows exponentially (x2, 20% jitter) "
			+ "up to retry.backoff.max.ms, so a struggling cluster still sees at most ~7 attempts in the first "
			+ "second. Retries that follow a KIP-951 leader hint skip the backoff either way (proven by "
			+ "LeaderFailoverTests with a 5 s backoff: worst latency across a leader move stayed below 2.5 s). "
			+ "Measurements against the kafka-clients default: docs/benchmarks.md, section Failover.";

	/**
	 * Tandem's {@code retry.backoff.max.ms}: 1000 ms, the kafka-clients default, pinned.
	 */
	public static final int RETRY_BACKOFF_MAX_MS = 1000;

	/**
	 * Why {@link #RETRY_BACKOFF_MAX_MS}.
	 */
	public static final String RETRY_BACKOFF_MAX_MS_DOC = "Caps the exponential retry backoff. A lower cap adds "
			+ "load while a partition has no leader at all (the only case where retries go on for seconds) and "
			+ "buys nothing once a leader exists, because a new leader is announced by a hint or a metadata "
			+ "response, not by a retry timer.";

	/**
	 * Tandem's {@code reconnect.backoff.ms}: 50 ms, the kafka-clients default, pinned.
	 */
	public static final int RECONNECT_BACKOFF_MS = 50;

	/**
	 * Why {@link #RECONNECT_BACKOFF_MS}.
	 */
	public static final String RECONNECT_BACKOFF_MS_DOC = "Failover moves traffic to brokers the client is "
			+ "normally already connected to, so reconnect backoff is not on the failover path; it is on the "
			+ "path back to a restarted broker, which is reached within reconnect.backoff.max.ms either way. "
			+ "Kafka's documentation of metadata.recovery.strategy advises against lowering it: a broker in "
			+ "reconnect backoff counts as unavailable, which is what lets rebootstrap start.";

	/**
	 * Tandem's {@code reconnect.backoff.max.ms}: 1000 ms, the kafka-clients default, pinned.
	 */
	public static final int RECONNECT_BACKOFF_MAX_MS = 1000;

	/**
	 * Why {@link #RECONNECT_BACKOFF_MAX_MS}.
	 */
	public static final String RECONNECT_BACKOFF_MAX_MS_DOC = "A stopped broker is retried at least once a "
			+ "second, so a restarted broker gets its connections back within about a second of listening.";

	/**
	 * Tandem's {@code socket.connection.setup.timeout.ms}: 2000 ms (kafka-clients: 10000 ms).
	 */
	public static final int SOCKET_CONNECTION_SETUP_TIMEOUT_MS = 2000;

	/**
	 * Why {@link #SOCKET_CONNECTION_SETUP_TIMEOUT_MS}.
	 */
	public static final String SOCKET_CONNECTION_SETUP_TIMEOUT_MS_DOC = "A connection attempt to a host that "
			+ "no longer answers (power loss, network partition, a replaced pod's old address: no RST comes "
			+ "back) blocks that node until this timeout, then the client tries the next one. TCP set-up "
			+ "within a region takes milliseconds and across regions well under a second, so 2 s still "
			+ "tolerates a slow network while cutting the wait on a dead address from 10 s. A refused "
			+ "connection (process stopped, host up) fails at once and is not affected.";

	/**
	 * Tandem's {@code socket.connection.setup.timeout.max.ms}: 10000 ms (kafka-clients: 30000 ms).
	 */
	public static final int SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS = 10_000;

	/**
	 * Why {@link #SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS}.
	 */
	public static final String SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_DOC = "Caps the exponential growth of "
			+ "the connection set-up timeout over consecutive failures; 10 s keeps the client from waiting "
			+ "30 s on one dead address when all others are dead too (the rebootstrap case).";

	/**
	 * Tandem's {@code request.timeout.ms} for producers and consumers: 10000 ms (kafka-clients:
	 * 30000 ms).
	 */
	public static final int REQUEST_TIMEOUT_MS = 10_000;

	/**
	 * Why {@link #REQUEST_TIMEOUT_MS}.
	 */
	public static final String REQUEST_TIMEOUT_MS_DOC = "A leader that goes silent without closing its "
			+ "connections (network partition, frozen process) is only noticed when an in-flight request "
			+ "times out. The controller fences such a broker after broker.session.timeout.ms (9 s by default) "
			+ "and elects a new leader; retrying much earlier only finds the old leader again, much later is "
			+ "wasted time, so 10 s. Retries are idempotent (enable.idempotence=true), so a request that "
			+ "timed out on a slow but alive broker causes neither duplicates nor reordering. Admin clients "
			+ "keep 30 s: their requests (topic creation, reassignment) legitimately take longer.";

	/**
	 * Tandem's {@code delivery.timeout.ms} for producers: 120000 ms, the kafka-clients default,
	 * pinned.
	 */
	public static final int DELIVERY_TIMEOUT_MS = 120_000;

	/**
	 * Why {@link #DELIVERY_TIMEOUT_MS}.
	 */
	public static final String DELIVERY_TIMEOUT_MS_DOC = "Failover must never be resolved by giving up on a "
			+ "record. The budget covers the slowest failover that still ends well: a crashed leader fenced "
			+ "after broker.session.timeout.ms (9 s by default), an election, and a "
			+ "full rebootstrap after metadata.recovery.rebootstrap.trigger.ms (30 s), with room to spare. "
			+ "Raised automatically to linger.ms + request.timeout.ms if the caller raises those.";

	/**
	 * Tandem's {@code metadata.max.age.ms}: 60000 ms (kafka-clients: 300000 ms).
	 */
	public static final int METADATA_MAX_AGE_MS = 60_000;

	/**
	 * Why {@link #METADATA_MAX_AGE_MS}.
	 */
	public static final String METADATA_MAX_AGE_MS_DOC = "Busy partitions learn of a new leader from "
			+ "responses (KIP-951 hints, errors); idle ones and the leader cache of a client that sends "
			+ "rarely only from a periodic refresh. One minute bounds how stale that view gets (and how long "
			+ "new partitions stay unseen) for one small metadata request per minute per client.";

	/**
	 * Tandem's {@code metadata.recovery.strategy}: {@code rebootstrap} (the default since
	 * kafka-clients 4.0, {@code none} before).
	 */
	public static final String METADATA_RECOVERY_STRATEGY = "rebootstrap";

	/**
	 * Why {@link #METADATA_RECOVERY_STRATEGY}.
	 */
	public static final String METADATA_RECOVERY_STRATEGY_DOC = "When every broker the client knows is "
			+ "gone (all brokers replaced with new addresses, as in a Kubernetes roll of the whole cluster), "
			+ "the client resolves bootstrap.servers again instead of retrying dead addresses forever. "
			+ "Explicit so that it also holds where an older default or a shared config says none (KIP-899).";

	/**
	 * Tandem's {@code metadata.recovery.rebootstrap.trigger.ms}: 30000 ms (kafka-clients:
	 * 300000 ms).
	 */
	public static final int METADATA_RECOVERY_REBOOTSTRAP_TRIGGER_MS = 30_000;

	/**
	 * Why {@link #METADATA_RECOVERY_REBOOTSTRAP_TRIGGER_MS}.
	 */
	public static final String METADATA_RECOVERY_REBOOTSTRAP_TRIGGER_MS_DOC = "Rebootstrap also starts when no "
			+ "metadata could be obtained from any known broker for this long (KIP-1102). With the default "
			+ "5 minutes every record of a producer whose cluster was replaced would expire first "
			+ "(delivery.timeout.ms is 2 minutes); 30 s lets such a producer recover with its records intact.";

	/**
	 * The producer property to which an override of {@link #DELIVERY_TIMEOUT_MS} must fit,
	 * together with {@code request.timeout.ms}.
	 */
	private static final String LINGER_MS = ProducerConfig.LINGER_MS_CONFIG;

	private static final Set<ClientType> ALL = Collections.unmodifiableSet(EnumSet.allOf(ClientType.class));

	private static final Set<ClientType> PRODUCER_AND_CONSUMER = Collections
		.unmodifiableSet(EnumSet.of(ClientType.PRODUCER, ClientType.CONSUMER));

	private static final Set<ClientType> PRODUCER = Collections.unmodifiableSet(EnumSet.of(ClientType.PRODUCER));

	/**
	 * Pairs of (lower bound, upper bound) settings whose upper bound follows a raised lower
	 * bound.
	 */
	private static final List<String[]> BOUNDED_PAIRS = List.of(
			new String[] { CommonClientConfigs.RETRY_BACKOFF_MS_CONFIG, CommonClientConfigs.RETRY_BACKOFF_MAX_MS_CONFIG },
			new String[] { CommonClientConfigs.RECONNECT_BACKOFF_MS_CONFIG,
					CommonClientConfigs.RECONNECT_BACKOFF_MAX_MS_CONFIG },
			new String[] { CommonClientConfigs.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG,
					CommonClientConfigs.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG });

	private static final FailoverProfile STANDARD = new FailoverProfile(standardSettings());

	private static final FailoverProfile NONE = new FailoverProfile(List.of());

	private final List<Setting> settings;

	private FailoverProfile(List<Setting> settings) {
		this.settings = List.copyOf(settings);
	}

	private static List<Setting> standardSettings() {
		List<Setting> settings = new ArrayList<>();
		settings.add(new Setting(CommonClientConfigs.RETRY_BACKOFF_MS_CONFIG, RETRY_BACKOFF_MS, ALL,
				RETRY_BACKOFF_MS_DOC));
		settings.add(new Setting(CommonClientConfigs.RETRY_BACKOFF_MAX_MS_CONFIG, RETRY_BACKOFF_MAX_MS, ALL,
				RETRY_BACKOFF_MAX_MS_DOC));
		settings.add(new Setting(CommonClientConfigs.RECONNECT_BACKOFF_MS_CONFIG, RECONNECT_BACKOFF_MS, ALL,
				RECONNECT_BACKOFF_MS_DOC));
		settings.add(new Setting(CommonClientConfigs.RECONNECT_BACKOFF_MAX_MS_CONFIG, RECONNECT_BACKOFF_MAX_MS, ALL,
				RECONNECT_BACKOFF_MAX_MS_DOC));
		settings.add(new Setting(CommonClientConfigs.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG,
				SOCKET_CONNECTION_SETUP_TIMEOUT_MS, ALL, SOCKET_CONNECTION_SETUP_TIMEOUT_MS_DOC));
		settings.add(new Setting(CommonClientConfigs.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG,
				SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS, ALL, SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_DOC));
		settings.add(new Setting(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG, REQUEST_TIMEOUT_MS,
				PRODUCER_AND_CONSUMER, REQUEST_TIMEOUT_MS_DOC));
		settings.add(new Setting(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, DELIVERY_TIMEOUT_MS, PRODUCER,
				DELIVERY_TIMEOUT_MS_DOC));
		settings.add(new Setting(CommonClientConfigs.METADATA_MAX_AGE_CONFIG, METADATA_MAX_AGE_MS, ALL,
				METADATA_MAX_AGE_MS_DOC));
		settings.add(new Setting(CommonClientConfigs.METADATA_RECOVERY_STRATEGY_CONFIG, METADATA_RECOVERY_STRATEGY,
				ALL, METADATA_RECOVERY_STRATEGY_DOC));
		settings.add(new Setting(CommonClientConfigs.METADATA_RECOVERY_REBOOTSTRAP_TRIGGER_MS_CONFIG,
				METADATA_RECOVERY_REBOOTSTRAP_TRIGGER_MS, ALL, METADATA_RECOVERY_REBOOTSTRAP_TRIGGER_MS_DOC));
		return settings;
	}

	/**
	 * Return the profile Tandem applies by default: every setting documented on this class.
	 * @return the standard profile
	 * @since 0.1.0
	 */
	public static FailoverProfile standard() {
		return STANDARD;
	}

	/**
	 * Return an empty profile: property maps built from it are exactly the caller's
	 * properties, so clients run with the kafka-clients defaults. For comparisons and for
	 * users who opt out of the profile.
	 * @return the empty profile
	 * @since 0.1.0
	 */
	public static FailoverProfile none() {
		return NONE;
	}

	/**
	 * Return a copy of this profile with one setting replaced or added, for the client types
	 * that understand the key. Use it to change the profile itself (for example for every
	 * cluster of an application); per-client values are better passed to
	 * {@link #producerProperties(Map)} and its siblings.
	 * @param name the Kafka configuration key, such as {@code retry.backoff.ms}
	 * @param value the value, a {@code String} or a value of the type Kafka's config parser
	 * expects for the key
	 * @return a new profile
	 * @throws IllegalArgumentException if no client type knows the key
	 * @since 0.1.0
	 */
	public FailoverProfile withSetting(String name, Object value) {
		Objects.requireNonNull(name, "name must not be null");
		Objects.requireNonNull(value, "value must not be null");
		Set<ClientType> clientTypes = EnumSet.noneOf(ClientType.class);
		Setting existing = setting(name);
		if (existing != null) {
			clientTypes.addAll(existing.clientTypes());
		}
		else {
			for (ClientType clientType : ClientType.values()) {
				if (clientType.configNames().contains(name)) {
					clientTypes.add(clientType);
				}
			}
		}
		if (clientTypes.isEmpty()) {
			throw new IllegalArgumentException("'" + name + "' is not a configuration key of any Kafka client");
		}
		List<Setting> settings = new ArrayList<>(this.settings.size() + 1);
		boolean replaced = false;
		for (Setting setting : this.settings) {
			if (setting.name().equals(name)) {
				settings.add(new Setting(name, value, setting.clientTypes(), "Overridden; Tandem's reason for "
						+ setting.value() + ": " + setting.doc()));
				replaced = true;
			}
			else {
				settings.add(setting);
			}
		}
		if (!replaced) {
			settings.add(new Setting(name, value, clientTypes, "Added to the profile by the application"));
		}
		return new FailoverProfile(settings);
	}

	/**
	 * Return a copy of this profile without a setting, so the client falls back to the
	 * kafka-clients default for it.
	 * @param name the Kafka configuration key
	 * @return a new profile, or this one if it has no such setting
	 * @since 0.1.0
	 */
	public FailoverProfile withoutSetting(String name) {
		Objects.requireNonNull(name, "name must not be null");
		if (setting(name) == null) {
			return this;
		}
		return new FailoverProfile(this.settings.stream().filter((setting) -> !setting.name().equals(name)).toList());
	}

	/**
	 * Return the profile's settings in a stable order, for documentation and endpoints.
	 * @return an unmodifiable list
	 * @since 0.1.0
	 */
	public List<Setting> settings() {
		return this.settings;
	}

	/**
	 * Return one setting of the profile.
	 * @param name the Kafka configuration key
	 * @return the setting, or {@code null} if the profile does not set the key
	 * @since 0.1.0
	 */
	public @Nullable Setting setting(String name) {
		for (Setting setting : this.settings) {
			if (setting.name().equals(name)) {
				return setting;
			}
		}
		return null;
	}

	/**
	 * Return producer properties: the profile's producer settings with the given properties
	 * on top.
	 * @param properties the caller's producer properties (for example a cluster's
	 * {@code tandem.clusters.<name>.producer.*}), which win over the profile
	 * @return a new mutable map
	 * @throws IllegalArgumentException if the given properties contradict each other (see
	 * the class description)
	 * @since 0.1.0
	 */
	public Map<String, Object> producerProperties(Map<String, ?> properties) {
		return properties(ClientType.PRODUCER, properties);
	}

	/**
	 * Return consumer properties: the profile's consumer settings with the given properties
	 * on top.
	 * @param properties the caller's consumer properties, which win over the profile
	 * @return a new mutable map
	 * @throws IllegalArgumentException if the given properties contradict each other
	 * @since 0.1.0
	 */
	public Map<String, Object> consumerProperties(Map<String, ?> properties) {
		return properties(ClientType.CONSUMER, properties);
	}

	/**
	 * Return admin client properties: the profile's admin settings with the given properties
	 * on top.
	 * @param properties the caller's admin properties, which win over the profile
	 * @return a new mutable map
	 * @throws IllegalArgumentException if the given properties contradict each other
	 * @since 0.1.0
	 */
	public Map<String, Object> adminProperties(Map<String, ?> properties) {
		return properties(ClientType.ADMIN, properties);
	}

	/**
	 * Return properties for a client type: the profile's settings for that type with the
	 * given properties on top, made consistent as described on the class.
	 * @param clientType the kind of client
	 * @param properties the caller's properties, which win over the profile
	 * @return a new mutable map
	 * @throws IllegalArgumentException if the given properties contradict each other
	 * @since 0.1.0
	 */
	public Map<String, Object> properties(ClientType clientType, Map<String, ?> properties) {
		Objects.requireNonNull(clientType, "clientType must not be null");
		Objects.requireNonNull(properties, "properties must not be null");
		Map<String, Object> merged = new LinkedHashMap<>();
		for (Setting setting : this.settings) {
			if (setting.clientTypes().contains(clientType)) {
				merged.put(setting.name(), setting.value());
			}
		}
		merged.putAll(properties);
		for (String[] pair : BOUNDED_PAIRS) {
			raiseUpperBound(merged, properties, pair[0], pair[1]);
		}
		if (clientType == ClientType.PRODUCER) {
			fitDeliveryTimeout(merged, properties);
		}
		return merged;
	}

	private static void raiseUpperBound(Map<String, Object> merged, Map<String, ?> properties, String lowerName,
			String upperName) {
		Long lower = longValue(merged, lowerName);
		Long upper = longValue(merged, upperName);
		if (lower == null || upper == null || lower <= upper) {
			return;
		}
		if (properties.containsKey(upperName)) {
			if (properties.containsKey(lowerName)
					&& CommonClientConfigs.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG.equals(lowerName)) {
				// kafka-clients would silently cap the lower bound
				throw new IllegalArgumentException(lowerName + "=" + lower + " must not exceed " + upperName + "="
						+ upper + "; kafka-clients would silently use " + upper);
			}
			// kafka-clients documents a lower bound above the upper one (constant backoff)
			return;
		}
		merged.put(upperName, lower);
	}

	private static void fitDeliveryTimeout(Map<String, Object> merged, Map<String, ?> properties) {
		Long delivery = longValue(merged, ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG);
		Long request = longValue(merged, CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG);
		if (delivery == null || request == null) {
			return;
		}
		Long linger = longValue(merged, LINGER_MS);
		long lingerMs = (linger != null) ? linger
				: ((Number) ProducerConfig.configDef().defaultValues().get(LINGER_MS)).longValue();
		long minimum = lingerMs + request;
		if (delivery >= minimum) {
			return;
		}
		if (properties.containsKey(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG)) {
			throw new IllegalArgumentException(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG + "=" + delivery
					+ " must be at least " + LINGER_MS + " + " + CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG + " ("
					+ lingerMs + " + " + request + " ms)");
		}
		merged.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) Math.min(Integer.MAX_VALUE, minimum));
	}

	private static @Nullable Long longValue(Map<String, ?> properties, String name) {
		Object value = properties.get(name);
		if (value == null) {
			return null;
		}
		if (value instanceof Number number) {
			return number.longValue();
		}
		try {
			return Long.parseLong(value.toString().trim());
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException(name + " must be a number of milliseconds but was '" + value + "'", ex);
		}
	}

	@Override
	public String toString() {
		StringBuilder builder = new StringBuilder("FailoverProfile{");
		for (int i = 0; i < this.settings.size(); i++) {
			Setting setting = this.settings.get(i);
			builder.append((i > 0) ? ", " : "").append(setting.name()).append('=').append(setting.value());
		}
		return builder.append('}').toString();
	}

	/**
	 * One setting of a {@link FailoverProfile}.
	 *
	 * @param name the Kafka configuration key
	 * @param value the value put into property maps
	 * @param clientTypes the kinds of client the setting is applied to
	 * @param doc why the value was chosen
	 * @since 0.1.0
	 */
	public record Setting(String name, Object value, Set<ClientType> clientTypes, String doc) {

		/**
		 * Create a setting.
		 * @param name the Kafka configuration key
		 * @param value the value
		 * @param clientTypes the client types, not empty
		 * @param doc the reason for the value
		 * @throws IllegalArgumentException if {@code clientTypes} is empty
		 */
		public Setting {
			Objects.requireNonNull(name, "name must not be null");
			Objects.requireNonNull(value, "value must not be null");
			Objects.requireNonNull(doc, "doc must not be null");
			if (clientTypes.isEmpty()) {
				throw new IllegalArgumentException("Setting '" + name + "' must apply to at least one client type");
			}
			clientTypes = Collections.unmodifiableSet(EnumSet.copyOf(clientTypes));
		}

	}

}
