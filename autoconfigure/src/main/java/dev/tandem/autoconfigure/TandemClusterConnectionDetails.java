package dev.tandem.autoconfigure;

import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.autoconfigure.service.connection.ConnectionDetails;
import org.springframework.boot.ssl.SslBundle;

/**
 * How to reach one cluster under {@code tandem.clusters}: Spring Boot's connection-details
 * pattern, one bean per cluster. A bean for cluster {@code <c>} wins over
 * {@code tandem.clusters.<c>.bootstrap-servers}, and, where it returns one, over the security
 * protocol and SSL bundle the cluster would otherwise get; every other client property still
 * comes from {@code spring.kafka.*} and {@code tandem.clusters.<c>.*}. The cluster must be
 * declared under {@code tandem.clusters} (any one property of it will do), so that its beans
 * are registered. Testcontainers' {@code @ServiceConnection} and Tandem's test kit create such
 * beans.
 *
 * @since 0.1.0
 */
public interface TandemClusterConnectionDetails extends ConnectionDetails {

	/**
	 * Returns the cluster these details are for.
	 * @return a name under {@code tandem.clusters}
	 */
	String getCluster();

	/**
	 * Returns the bootstrap servers.
	 * @return {@code host:port} entries, at least one
	 */
	List<String> getBootstrapServers();

	/**
	 * Returns the security protocol every client of the cluster uses.
	 * @return a {@code security.protocol} value, or null to keep the configured one
	 */
	default @Nullable String getSecurityProtocol() {
		return null;
	}

	/**
	 * Returns the SSL bundle every client of the cluster uses.
	 * @return the bundle, or null to keep the configured one
	 */
	default @Nullable SslBundle getSslBundle() {
		return null;
	}

	/**
	 * Returns details with bootstrap servers only.
	 * @param cluster the cluster name
	 * @param bootstrapServers the {@code host:port} entries
	 * @return the details
	 */
	static TandemClusterConnectionDetails of(String cluster, List<String> bootstrapServers) {
		Objects.requireNonNull(cluster, "cluster");
		List<String> servers = List.copyOf(bootstrapServers);
		return new TandemClusterConnectionDetails() {

			@Override
			public String getCluster() {
				return cluster;
			}

			@Override
			public List<String> getBootstrapServers() {
				return servers;
			}

			@Override
			public String toString() {
				return "TandemClusterConnectionDetails[" + cluster + " at " + servers + "]";
			}

		};
	}

}
