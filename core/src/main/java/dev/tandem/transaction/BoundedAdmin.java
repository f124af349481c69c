package dev.tandem.transaction;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * Creates admin clients whose every call is bounded by one timeout (Kafka's default waits up to
 * 60 s on an unreachable cluster, whatever the caller's own deadline): the client configuration is
 * reduced to the admin client's keys, and {@code default.api.timeout.ms} and
 * {@code request.timeout.ms} are set to the timeout. Close them with a short timeout, for example
 * {@code admin.close(Duration.ofSeconds(1))}.
 *
 * @since 0.1.0
 */
public final class BoundedAdmin {

	private BoundedAdmin() {
	}

	/**
	 * Creates an admin client.
	 * @param clientConfig a cluster's client properties (keys of other client types are dropped)
	 * @param timeout the bound of each call, 1 ms to {@link Integer#MAX_VALUE} ms
	 * @return the admin client; the caller closes it
	 * @throws org.apache.kafka.common.KafkaException if the configuration is invalid
	 */
	public static Admin create(Map<String, ?> clientConfig, Duration timeout) {
		Map<String, Object> config = new HashMap<>(clientConfig);
		ClientConfigs.retain(config, AdminClientConfig.configNames());
		int timeoutMs = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
		config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, timeoutMs);
		config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, timeoutMs);
		return Admin.create(config);
	}

}
