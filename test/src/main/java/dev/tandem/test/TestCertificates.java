package dev.tandem.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509KeyManager;
import javax.net.ssl.X509TrustManager;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A throw-away certificate authority for TLS tests: it issues certificates whose subject is
 * {@code CN=<name>} and whose subject alternative names are {@code localhost} and
 * {@code 127.0.0.1}, so clients that verify host names accept them on the loopback interface.
 * Keys are EC P-256, generated in memory at test time; nothing is read from or committed to
 * the repository. Each certificate is also written as a PKCS12 key store (and the authority as
 * a PKCS12 trust store) under the directory given at creation, for configurations that take
 * files, such as Spring Boot's {@code spring.ssl.bundle.jks.*}.
 * <p>
 * Thread-safe.
 *
 * @since 0.1.0
 */
public final class TestCertificates {

	/** Password of every key store and trust store this class writes. */
	public static final String PASSWORD = "test-only";

	private static final Duration VALIDITY = Duration.ofDays(2);

	private static final AtomicLong serials = new AtomicLong(System.currentTimeMillis());

	private final Path directory;

	private final String authorityName;

	private final KeyPair authorityKeys;

	private final X509Certificate authority;

	private final Path trustStore;

	private TestCertificates(Path directory, String authorityName) {
		this.directory = directory;
		this.authorityName = authorityName;
		try {
			Files.createDirectories(directory);
			this.authorityKeys = newKeyPair();
			X500Name subject = new X500Name("CN=" + authorityName);
			X509v3CertificateBuilder builder = builder(subject, subject, this.authorityKeys);
			builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
			builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
			this.authority = sign(builder, this.authorityKeys.getPrivate());
			KeyStore trust = KeyStore.getInstance("PKCS12");
			trust.load(null, null);
			trust.setCertificateEntry("ca", this.authority);
			this.trustStore = directory.resolve(authorityName + "-trust.p12");
			store(trust, this.trustStore);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException("Could not create the test certificate authority", ex);
		}
	}

	/**
	 * Creates a new certificate authority.
	 * @param directory where key stores are written (created if missing)
	 * @param authorityName the authority's common name, also the prefix of its files
	 * @return the authority
	 * @throws UncheckedIOException if the directory cannot be written
	 */
	public static TestCertificates create(Path directory, String authorityName) {
		return new TestCertificates(Objects.requireNonNull(directory, "directory"),
				Objects.requireNonNull(authorityName, "authorityName"));
	}

	/**
	 * Issues a certificate for a subject, valid for two days, for both TLS client and server
	 * use.
	 * @param commonName the subject's common name ({@code CN}), also the name of its file
	 * @return the certificate with its key
	 * @throws UncheckedIOException if the key store cannot be written
	 */
	public Identity issue(String commonName) {
		try {
			KeyPair keys = newKeyPair();
			X509v3CertificateBuilder builder = builder(new X500Name("CN=" + this.authorityName),
					new X500Name("CN=" + commonName), keys);
			builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
			builder.addExtension(Extension.keyUsage, true,
					new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyAgreement));
			builder.addExtension(Extension.subjectAlternativeName, false,
					new GeneralNames(new GeneralName[] { new GeneralName(GeneralName.dNSName, "localhost"),
							new GeneralName(GeneralName.iPAddress, "127.0.0.1") }));
			X509Certificate certificate = sign(builder, this.authorityKeys.getPrivate());
			KeyStore keyStore = KeyStore.getInstance("PKCS12");
			keyStore.load(null, null);
			keyStore.setKeyEntry(commonName, keys.getPrivate(), PASSWORD.toCharArray(),
					new X509Certificate[] { certificate, this.authority });
			Path file = this.directory.resolve(this.authorityName + "-" + commonName + ".p12");
			store(keyStore, file);
			return new Identity(commonName, file, this.trustStore);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException("Could not issue a test certificate for " + commonName, ex);
		}
	}

	/**
	 * Returns the authority's certificate.
	 * @return the certificate
	 */
	public X509Certificate authority() {
		return this.authority;
	}

	/**
	 * Returns the PKCS12 trust store holding only this authority's certificate.
	 * @return the file (password {@link #PASSWORD})
	 */
	public Path trustStore() {
		return this.trustStore;
	}

	private static X509v3CertificateBuilder builder(X500Name issuer, X500Name subject, KeyPair keys) {
		Instant now = Instant.now();
		return new JcaX509v3CertificateBuilder(issuer, BigInteger.valueOf(serials.incrementAndGet()),
				Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(VALIDITY)), subject, keys.getPublic());
	}

	private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey issuerKey)
			throws GeneralSecurityException {
		try {
			ContentSigner signer = new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey);
			return new JcaX509CertificateConverter().getCertificate(builder.build(signer));
		}
		catch (OperatorCreationException ex) {
			throw new GeneralSecurityException(ex);
		}
	}

	private static KeyPair newKeyPair() throws GeneralSecurityException {
		KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
		generator.initialize(256, new SecureRandom());
		return generator.generateKeyPair();
	}

	private static void store(KeyStore keyStore, Path file) throws IOException, GeneralSecurityException {
		try (OutputStream out = Files.newOutputStream(file)) {
			keyStore.store(out, PASSWORD.toCharArray());
		}
	}

	/**
	 * A certificate issued by a {@link TestCertificates} authority, with its private key.
	 *
	 * @param commonName the subject's common name
	 * @param keyStore the PKCS12 key store holding the key and chain (password
	 *     {@link TestCertificates#PASSWORD})
	 * @param trustStore the PKCS12 trust store of the issuing authority
	 * @since 0.1.0
	 */
	public record Identity(String commonName, Path keyStore, Path trustStore) {

		/**
		 * Returns a key manager presenting this certificate.
		 * @return the key manager
		 */
		public X509KeyManager keyManager() {
			try {
				KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
				factory.init(load(this.keyStore), PASSWORD.toCharArray());
				return (X509KeyManager) factory.getKeyManagers()[0];
			}
			catch (GeneralSecurityException ex) {
				throw new IllegalStateException("Could not read " + this.keyStore, ex);
			}
		}

		/**
		 * Returns a trust manager that trusts the issuing authority only.
		 * @return the trust manager
		 */
		public X509TrustManager trustManager() {
			try {
				TrustManagerFactory factory = TrustManagerFactory
					.getInstance(TrustManagerFactory.getDefaultAlgorithm());
				factory.init(load(this.trustStore));
				return (X509TrustManager) factory.getTrustManagers()[0];
			}
			catch (GeneralSecurityException ex) {
				throw new IllegalStateException("Could not read " + this.trustStore, ex);
			}
		}

		private static KeyStore load(Path file) throws GeneralSecurityException {
			try (InputStream in = Files.newInputStream(file)) {
				KeyStore keyStore = KeyStore.getInstance("PKCS12");
				keyStore.load(in, PASSWORD.toCharArray());
				return keyStore;
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

	}

}
