package dev.tandem.coordinator.service;

import java.security.KeyStore;
import java.util.Map;
import java.util.Set;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;

import org.apache.kafka.common.security.auth.SslEngineFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.ssl.SslBundle;

/**
 * Kafka's {@code ssl.engine.factory.class} over a Spring Boot SSL bundle, for the admin clients
 * of {@code tandem.coordinator.server.clusters.<name>.ssl.bundle}: the bundle travels in the client
 * properties under {@link #BUNDLE_CONFIG} (the way Spring Boot's Kafka module does it, which the
 * coordinator service does not depend on). Client engines only.
 *
 * @since 0.1.0
 */
public class KafkaSslBundleEngineFactory implements SslEngineFactory {

	/** Client property holding the {@link SslBundle}. */
	static final String BUNDLE_CONFIG = SslBundle.class.getName();

	private @Nullable Map<String, ?> configs;

	private @Nullable SslBundle bundle;

	@Override
	public void configure(Map<String, ?> configs) {
		this.configs = configs;
		this.bundle = (SslBundle) configs.get(BUNDLE_CONFIG);
	}

	@Override
	public SSLEngine createClientSslEngine(String peerHost, int peerPort, String endpointIdentification) {
		SSLEngine engine = bundle().createSslContext().createSSLEngine(peerHost, peerPort);
		engine.setUseClientMode(true);
		SSLParameters parameters = engine.getSSLParameters();
		parameters.setEndpointIdentificationAlgorithm(endpointIdentification);
		engine.setSSLParameters(parameters);
		String[] protocols = bundle().getOptions().getEnabledProtocols();
		if (protocols != null) {
			engine.setEnabledProtocols(protocols);
		}
		String[] ciphers = bundle().getOptions().getCiphers();
		if (ciphers != null) {
			engine.setEnabledCipherSuites(ciphers);
		}
		return engine;
	}

	@Override
	public SSLEngine createServerSslEngine(String peerHost, int peerPort) {
		throw new UnsupportedOperationException("Client engines only");
	}

	@Override
	public boolean shouldBeRebuilt(Map<String, Object> nextConfigs) {
		return !nextConfigs.equals(this.configs);
	}

	@Override
	public Set<String> reconfigurableConfigs() {
		return Set.of(BUNDLE_CONFIG);
	}

	@Override
	public @Nullable KeyStore keystore() {
		return bundle().getStores().getKeyStore();
	}

	@Override
	public @Nullable KeyStore truststore() {
		return bundle().getStores().getTrustStore();
	}

	@Override
	public void close() {
	}

	private SslBundle bundle() {
		SslBundle bundle = this.bundle;
		if (bundle == null) {
			throw new IllegalStateException("No SSL bundle under " + BUNDLE_CONFIG);
		}
		return bundle;
	}

}
