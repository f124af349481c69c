package dev.tandem.coordinator.testing;

import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Consumer;

import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.coordinator.security.AccessPolicy;
import dev.tandem.coordinator.security.CoordinatorTls;
import dev.tandem.coordinator.server.CoordinatorServer;
import dev.tandem.coordinator.server.CoordinatorServerBuilder;
import dev.tandem.test.TestCertificates;

/**
 * Three coordinator peers under mutual TLS with an access policy, and the certificate
 * authority that issued every identity: the fixture of the security tests. The peers present
 * the identity {@link #PEER}, which the policy must list among its peers; clients get an
 * identity by common name from {@link #tls(String)}. Not thread-safe: drive it from the test
 * thread.
 */
public final class TlsCoordinatorCluster implements AutoCloseable {

	/** Common name of the identity every peer presents. */
	public static final String PEER = "coordinator-peer";

	private static final int PEERS = 3;

	private final TestCertificates authority;

	private final CoordinatorCluster cluster;

	private TlsCoordinatorCluster(TestCertificates authority, CoordinatorCluster cluster) {
		this.authority = authority;
		this.cluster = cluster;
	}

	/**
	 * Starts three peers with no settings beyond TLS and the policy; see
	 * {@link #start(Path, AccessPolicy, Consumer, Duration)}.
	 * @param directory where certificates and peer data go; empty or missing
	 * @param policy the access policy of every peer, {@link #PEER} among its peers
	 * @param timeout how long to wait for a leader
	 * @return the running peers
	 */
	public static TlsCoordinatorCluster start(Path directory, AccessPolicy policy, Duration timeout) {
		return start(directory, policy, (server) -> {
		}, timeout);
	}

	/**
	 * Creates a certificate authority under {@code directory/certs}, starts three peers under
	 * {@code directory/peers} and waits for a leader.
	 * @param directory where certificates and peer data go; empty or missing
	 * @param policy the access policy of every peer, {@link #PEER} among its peers
	 * @param customizer further settings of every peer (quotas, for example), applied after
	 * TLS and the policy
	 * @param timeout how long to wait for a leader
	 * @return the running peers
	 * @throws org.awaitility.core.ConditionTimeoutException if no leader is elected in time
	 */
	public static TlsCoordinatorCluster start(Path directory, AccessPolicy policy,
			Consumer<CoordinatorServerBuilder> customizer, Duration timeout) {
		TestCertificates authority = TestCertificates.create(directory.resolve("certs"), "tandem-test-ca");
		CoordinatorTls peer = tls(authority.issue(PEER));
		CoordinatorCluster cluster = CoordinatorCluster.start(directory.resolve("peers"), PEERS, (server) -> {
			server.tls(peer).accessPolicy(policy);
			customizer.accept(server);
		});
		try {
			cluster.awaitLeader(timeout);
		}
		catch (RuntimeException ex) {
			cluster.close();
			throw ex;
		}
		return new TlsCoordinatorCluster(authority, cluster);
	}

	/**
	 * Returns the running peers.
	 * @return the group, closed by {@link #close()}
	 */
	public CoordinatorCluster cluster() {
		return this.cluster;
	}

	/**
	 * Returns the authority that issued the peers' identity.
	 * @return the authority, for identities the tests tamper with
	 */
	public TestCertificates authority() {
		return this.authority;
	}

	/**
	 * Issues an identity signed by the peers' authority.
	 * @param commonName the identity's name, as an access policy lists it
	 * @return TLS settings presenting that identity and trusting the authority
	 */
	public CoordinatorTls tls(String commonName) {
		return tls(this.authority.issue(commonName));
	}

	/**
	 * Returns a decision log client presenting an identity issued by {@link #tls(String)};
	 * closed with the peers.
	 * @param commonName the identity's name
	 * @return the client
	 */
	public RatisDecisionLog client(String commonName) {
		CoordinatorTls tls = tls(commonName);
		return this.cluster.client((client) -> client.tls(tls));
	}

	/**
	 * Returns the TLS settings of an identity.
	 * @param identity a key and trust store pair
	 * @return TLS settings presenting the identity and trusting its authority
	 */
	public static CoordinatorTls tls(TestCertificates.Identity identity) {
		return CoordinatorTls.of(identity.keyManager(), identity.trustManager());
	}

	@Override
	public void close() {
		this.cluster.close();
	}

}
