package dev.tandem.coordinator.service;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.tandem.text.DurationText;
import dev.tandem.transaction.HangingTransactions;
import dev.tandem.transaction.TandemException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * {@code /actuator/coordinatorhanging}: per configured cluster
 * ({@code tandem.coordinator.server.clusters}), the served apps' Kafka transactions open on a
 * broker with nobody to end them — their instance's lease expired and nobody claimed it, their
 * instance holds no lease but has decisions in the log, or they are older than
 * {@code tandem.coordinator.server.hanging.transaction-timeout} — read at each call (Admin
 * {@code listTransactions} / {@code describeTransactions}, the leases and decisions of the decision
 * log). Only Tandem's transactions: another application's producer whose transactional id merely
 * looks like a served app's is never listed nor aborted ({@link HangingTransactions}).
 * {@code POST /actuator/coordinatorhanging/{cluster}/{transactionalId}} aborts one by fencing its
 * transactional id (Admin {@code fenceProducers}): its broker aborts it and the last stable offset
 * moves on; refused (400) for a transaction that is not hanging, for one that is not Tandem's, and
 * for a participant of a decided transaction, which must commit. The same finder as the apps' {@code /actuator/kafkatransactions}
 * ({@link HangingTransactions}).
 *
 * @since 0.1.0
 */
@Endpoint(id = "coordinatorhanging")
public class CoordinatorHangingTransactionsEndpoint {

	private static final Logger logger = LoggerFactory.getLogger(CoordinatorHangingTransactionsEndpoint.class);

	private final @Nullable HangingTransactions finder;

	private final List<String> clusters;

	private final Duration timeout;

	/**
	 * Creates the endpoint.
	 * @param finder what finds and aborts the hanging transactions, or null when no cluster is
	 *     configured
	 * @param clusters the configured clusters, in configuration order
	 * @param timeout the bound of each read and of an abort
	 */
	public CoordinatorHangingTransactionsEndpoint(@Nullable HangingTransactions finder, List<String> clusters,
			Duration timeout) {
		this.finder = finder;
		this.clusters = List.copyOf(clusters);
		this.timeout = timeout;
	}

	/**
	 * Lists the hanging transactions per cluster.
	 * @return the transactions, oldest first per cluster, and what could not be read
	 */
	@ReadOperation
	public HangingDescriptor hanging() {
		Map<String, List<HangingTransactions.Hanging>> byCluster = new LinkedHashMap<>();
		this.clusters.forEach((cluster) -> byCluster.put(cluster, new ArrayList<>()));
		if (this.finder == null) {
			return new HangingDescriptor(byCluster, Map.of("clusters",
					"none configured: set tandem.coordinator.server.clusters.<name>.bootstrap-servers"));
		}
		HangingTransactions.Report report = this.finder.find(this.timeout);
		report.transactions().forEach((hanging) -> byCluster.get(hanging.cluster()).add(hanging));
		Map<String, String> unavailable = new LinkedHashMap<>();
		this.clusters.stream()
			.filter(report.unavailable()::containsKey)
			.forEach((cluster) -> unavailable.put(cluster, report.unavailable().get(cluster)));
		report.unavailable().forEach(unavailable::putIfAbsent);
		return new HangingDescriptor(byCluster, unavailable);
	}

	/**
	 * Aborts one hanging transaction, an operator's decision. Logged at WARN.
	 * @param cluster the cluster it is open on
	 * @param transactionalId its transactional id
	 * @return the transaction as it was listed before the abort
	 * @throws InvalidEndpointRequestException if it is not hanging, not Tandem's, or a participant of
	 *     a decided transaction (answered with 400, saying why)
	 */
	@WriteOperation
	public HangingTransactions.Hanging abort(@Selector String cluster, @Selector String transactionalId) {
		if (this.finder == null || !this.clusters.contains(cluster)) {
			throw invalid("Cluster '" + shortened(cluster) + "' is not one of tandem.coordinator.server.clusters "
					+ this.clusters);
		}
		try {
			HangingTransactions.Hanging aborted = this.finder.abort(cluster, transactionalId, this.timeout);
			logger.warn("Aborted hanging transaction {} on cluster '{}' of {} by hand ({}; open {}, {} partition(s))",
					transactionalId, cluster, aborted.owner(), aborted.reason(),
					DurationText.of(Duration.ofMillis(aborted.ageMs())), aborted.partitions());
			return aborted;
		}
		catch (IllegalArgumentException | IllegalStateException ex) {
			throw invalid(ex.getMessage());
		}
		catch (TandemException ex) {
			// the cluster or the decision log did not answer: nothing was aborted, say why
			throw invalid("Nothing aborted: " + ex.getMessage() + " (retry once cluster '" + cluster + "' answers)");
		}
	}

	/** A 400 saying why; a message grown by echoed input is cut at 1,000 characters. */
	private static InvalidEndpointRequestException invalid(String message) {
		String reason = (message.length() <= 1000) ? message : message.substring(0, 1000) + "...";
		return new InvalidEndpointRequestException(reason, reason);
	}

	/** A selector as echoed in a refusal: at most 255 characters of it. */
	private static String shortened(String selector) {
		return (selector.length() <= 255) ? selector
				: selector.substring(0, 255) + "... (" + selector.length() + " characters)";
	}

	/**
	 * The hanging transactions.
	 *
	 * @param clusters every configured cluster, in configuration order, with its hanging
	 *     transactions, oldest first
	 * @param unavailable what could not be read (a cluster, the decision log's leases), with why
	 * @since 0.1.0
	 */
	public record HangingDescriptor(Map<String, List<HangingTransactions.Hanging>> clusters,
			Map<String, String> unavailable) {

	}

}
