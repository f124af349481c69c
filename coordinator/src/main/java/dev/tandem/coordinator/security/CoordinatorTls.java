package dev.tandem.coordinator.security;

import java.util.Objects;

import javax.net.ssl.KeyManager;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509KeyManager;
import javax.net.ssl.X509TrustManager;

import org.apache.ratis.grpc.GrpcTlsConfig;

/**
 * Key and trust material of one coordinator peer or client, for mutual TLS on Ratis' gRPC
 * transport: the peer presents its certificate and requires one from every caller (peers and
 * clients alike), and both sides verify the other's chain against the trust manager. Clients
 * also verify that the peer's certificate names the host they dial (subject alternative
 * names), as HTTPS does.
 * <p>
 * Spring Boot's SSL bundles are the usual source ({@code SslBundle.getManagers()}); the
 * managers are handed to Ratis as given, when the peer or client is built (a changed
 * certificate takes effect at the next start).
 * <p>
 * Immutable and thread-safe.
 *
 * @since 0.1.0
 */
public final class CoordinatorTls {

	private final X509KeyManager keyManager;

	private final X509TrustManager trustManager;

	private CoordinatorTls(X509KeyManager keyManager, X509TrustManager trustManager) {
		this.keyManager = Objects.requireNonNull(keyManager, "keyManager");
		this.trustManager = Objects.requireNonNull(trustManager, "trustManager");
	}

	/**
	 * Creates the TLS settings of a peer or client.
	 * @param keyManager presents this side's certificate chain and key
	 * @param trustManager verifies the other side's chain (trust only the coordinator's CA)
	 * @return the settings
	 */
	public static CoordinatorTls of(X509KeyManager keyManager, X509TrustManager trustManager) {
		return new CoordinatorTls(keyManager, trustManager);
	}

	/**
	 * Creates the TLS settings from the managers of a key store and a trust store, as JSSE's
	 * factories (and Spring Boot's {@code SslManagerBundle}) return them.
	 * @param keyManagers the key managers; the first X.509 one is used
	 * @param trustManagers the trust managers; the first X.509 one is used
	 * @param source what the managers come from, named in the error message
	 * @return the settings
	 * @throws IllegalArgumentException if either array has no X.509 manager
	 */
	public static CoordinatorTls of(KeyManager[] keyManagers, TrustManager[] trustManagers, String source) {
		X509KeyManager key = null;
		for (KeyManager manager : keyManagers) {
			if (manager instanceof X509KeyManager x509) {
				key = x509;
				break;
			}
		}
		X509TrustManager trust = null;
		for (TrustManager manager : trustManagers) {
			if (manager instanceof X509TrustManager x509) {
				trust = x509;
				break;
			}
		}
		if (key == null || trust == null) {
			throw new IllegalArgumentException(source + " has no X.509 " + ((key == null) ? "key store" : "trust store")
					+ ": the coordinator needs both a certificate with its key and the CA that signed the other peers'");
		}
		return new CoordinatorTls(key, trust);
	}

	/**
	 * Returns the key manager.
	 * @return the key manager
	 */
	public X509KeyManager keyManager() {
		return this.keyManager;
	}

	/**
	 * Returns the trust manager.
	 * @return the trust manager
	 */
	public X509TrustManager trustManager() {
		return this.trustManager;
	}

	/**
	 * Returns the Ratis gRPC TLS settings, with mutual authentication on.
	 * @return a new Ratis configuration object
	 */
	public GrpcTlsConfig grpcTlsConfig() {
		return new GrpcTlsConfig(this.keyManager, this.trustManager, true);
	}

	@Override
	public String toString() {
		return "CoordinatorTls[mutual]";
	}

}
