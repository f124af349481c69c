package dev.tandem.autoconfigure.failover;

import java.util.Map;
import java.util.Set;

import dev.tandem.autoconfigure.TandemClusterCustomizer;
import dev.tandem.failover.ClientType;
import dev.tandem.failover.FailoverProfile;
import dev.tandem.failover.LeaderCacheRegistry;

/**
 * Applies Tandem's {@link FailoverProfile} to every client of every cluster (the cluster's own
 * properties win) and instruments producers and consumers with leader tracking, so that their
 * leader caches feed {@code /actuator/kafkaleaders}.
 *
 * @since 0.1.0
 */
public class FailoverClusterCustomizer implements TandemClusterCustomizer {

	private final FailoverProfile profile;

	private final LeaderCacheRegistry registry;

	/**
	 * Creates the customizer.
	 * @param profile the profile to apply
	 * @param registry the registry that collects leader caches
	 */
	public FailoverClusterCustomizer(FailoverProfile profile, LeaderCacheRegistry registry) {
		this.profile = profile;
		this.registry = registry;
	}

	@Override
	public void customizeProducer(String cluster, Map<String, Object> config, Set<String> userKeys) {
		replace(config, this.registry.instrument(cluster, ClientType.PRODUCER, this.profile.producerProperties(config)));
	}

	@Override
	public void customizeConsumer(String cluster, Map<String, Object> config, Set<String> userKeys) {
		replace(config, this.registry.instrument(cluster, ClientType.CONSUMER, this.profile.consumerProperties(config)));
	}

	@Override
	public void customizeAdmin(String cluster, Map<String, Object> config, Set<String> userKeys) {
		replace(config, this.profile.adminProperties(config));
	}

	private static void replace(Map<String, Object> config, Map<String, Object> result) {
		config.clear();
		config.putAll(result);
	}

}
