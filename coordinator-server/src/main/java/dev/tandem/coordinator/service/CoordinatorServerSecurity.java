package dev.tandem.coordinator.service;

import java.security.KeyStore;
import java.security.KeyStoreException;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;

import dev.tandem.coordinator.security.AccessPolicy;
import dev.tandem.coordinator.security.CoordinatorTls;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.ssl.NoSuchSslBundleException;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;

/**
 * Resolves the TLS material and access policy of the peer from
 * {@code tandem.coordinator.server.ssl.*}, {@code plaintext-allowed} and
 * {@code authorization.*}; every mistake fails start-up with a message naming the property.
 *
 * @param tls the peer's TLS material, or {@code null} in plain text
 * @param policy who may do what
 */
record CoordinatorServerSecurity(@Nullable CoordinatorTls tls, AccessPolicy policy) {

	static CoordinatorServerSecurity of(CoordinatorServerProperties properties, @Nullable SslBundles sslBundles) {
		properties.group(); // the peer list's mistakes first
		String bundleName = properties.getSsl().getBundle();
		CoordinatorServerProperties.Authorization authorization = properties.getAuthorization();
		if (bundleName == null || bundleName.isBlank()) {
			if (!properties.isPlaintextAllowed()) {
				throw new IllegalStateException("The coordinator peer requires TLS but tandem.coordinator.server.ssl.bundle "
						+ "is not set: name a Spring Boot SSL bundle (spring.ssl.bundle.*) holding this peer's "
						+ "certificate and the CA of its peers and clients, or set "
						+ "tandem.coordinator.server.plaintext-allowed=true to serve plain text on a trusted network");
			}
			if (!authorization.getAdmins().isEmpty() || !authorization.getApps().isEmpty()
					|| !authorization.getPeers().isEmpty()) {
				throw new IllegalStateException("tandem.coordinator.server.authorization.* is set but "
						+ "tandem.coordinator.server.ssl.bundle is not: identities come from TLS client certificates");
			}
			return new CoordinatorServerSecurity(null, AccessPolicy.open());
		}
		if (sslBundles == null) {
			throw new IllegalStateException("tandem.coordinator.server.ssl.bundle is set but no SslBundles bean exists");
		}
		SslBundle bundle;
		try {
			bundle = sslBundles.getBundle(bundleName);
		}
		catch (NoSuchSslBundleException ex) {
			throw new IllegalStateException("tandem.coordinator.server.ssl.bundle names SSL bundle '" + bundleName
					+ "' but there is none: define it under spring.ssl.bundle.jks." + bundleName + " or spring.ssl.bundle.pem."
					+ bundleName + " (" + ex.getMessage() + ")");
		}
		CoordinatorTls tls;
		try {
			tls = CoordinatorTls.of(bundle.getManagers().getKeyManagers(), bundle.getManagers().getTrustManagers(),
					"SSL bundle '" + bundleName + "' (tandem.coordinator.server.ssl.bundle)");
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException(ex.getMessage(), ex);
		}
		List<String> peers = authorization.getPeers();
		if (peers.isEmpty()) {
			String own = ownCommonName(bundle.getStores().getKeyStore());
			if (own == null) {
				throw new IllegalStateException("SSL bundle '" + bundleName + "' has no certificate with a common name: set "
						+ "tandem.coordinator.server.authorization.peers to the peers' certificate identities");
			}
			peers = List.of(own);
		}
		AccessPolicy.Builder policy = AccessPolicy.builder().peers(peers).admins(authorization.getAdmins());
		for (Map.Entry<String, List<String>> app : authorization.getApps().entrySet()) {
			try {
				policy.app(app.getKey(), app.getValue());
			}
			catch (IllegalArgumentException ex) {
				throw new IllegalStateException("tandem.coordinator.server.authorization.apps." + app.getKey()
						+ " is invalid: " + ex.getMessage(), ex);
			}
		}
		return new CoordinatorServerSecurity(tls, policy.build());
	}

	private static @Nullable String ownCommonName(@Nullable KeyStore keyStore) {
		if (keyStore == null) {
			return null;
		}
		try {
			for (String alias : Collections.list(keyStore.aliases())) {
				if (keyStore.isKeyEntry(alias)) {
					Certificate certificate = keyStore.getCertificate(alias);
					if (certificate instanceof X509Certificate x509) {
						return commonName(x509);
					}
				}
			}
			return null;
		}
		catch (KeyStoreException ex) {
			throw new IllegalStateException("Cannot read the key store of the coordinator's SSL bundle", ex);
		}
	}

	private static @Nullable String commonName(X509Certificate certificate) {
		try {
			for (Rdn rdn : new LdapName(certificate.getSubjectX500Principal().getName()).getRdns()) {
				if ("CN".equalsIgnoreCase(rdn.getType())) {
					return rdn.getValue().toString();
				}
			}
			return null;
		}
		catch (InvalidNameException ex) {
			return null;
		}
	}

}
