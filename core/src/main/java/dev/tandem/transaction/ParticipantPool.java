package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.clients.ClusterClients;

/**
 * The participant slots of one app instance: one transactional producer per (cluster, slot), with
 * the stable transactional id {@code <id-prefix>.<cluster>.<instance-id>.<slot>} so that a restarted
 * instance fences its own zombies; slots are taken by a transaction and released when it ends.
 * Also aborts the open transactions a previous incarnation left on slots this one does not use.
 * <p>
 * Thread-safe: {@link #take(Duration)} and {@link #release(ParticipantSlot)} from any thread;
 * {@link #start()}, {@link #close()} and {@link #abandon()} from the manager's lifecycle calls.
 */
final class ParticipantPool {

	private static final Logger logger = LoggerFactory.getLogger(ParticipantPool.class);

	private final ClusterClients clients;

	private final String idPrefix;

	private final String instanceId;

	private final int slotCount;

	private final Duration transactionTimeout;

	private final Duration commitTimeout;

	private final BiConsumer<String, Producer<?, ?>> producerCreated;

	private final List<ParticipantSlot> slots = new ArrayList<>();

	private final BlockingQueue<ParticipantSlot> free = new LinkedBlockingQueue<>();

	private volatile boolean open;

	ParticipantPool(ClusterClients clients, String idPrefix, String instanceId, int slotCount,
			Duration transactionTimeout, Duration commitTimeout, BiConsumer<String, Producer<?, ?>> producerCreated) {
		this.clients = clients;
		this.idPrefix = idPrefix;
		this.instanceId = instanceId;
		this.slotCount = slotCount;
		this.transactionTimeout = transactionTimeout;
		this.commitTimeout = commitTimeout;
		this.producerCreated = producerCreated;
	}

	int slotCount() {
		return this.slotCount;
	}

	String transactionalId(String cluster, int slot) {
		return this.idPrefix + "." + cluster + "." + this.instanceId + "." + slot;
	}

	/**
	 * Returns the configuration of a transactional producer of a cluster, without its
	 * transactional id: idempotent, {@code acks=all}, the transaction timeout, and
	 * {@code max.block.ms} bounded by the commit timeout unless the cluster sets it.
	 */
	Map<String, Object> producerConfig(String cluster) {
		Map<String, Object> config = this.clients.producerConfig(cluster);
		config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
		config.put(ProducerConfig.ACKS_CONFIG, "all");
		config.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, (int) this.transactionTimeout.toMillis());
		// Bounds initTransactions, commitTransaction, abortTransaction and a send blocked on metadata.
		config.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, this.commitTimeout.toMillis());
		return config;
	}

	/**
	 * Aborts the orphans of unused slots on every cluster, then creates every slot and initializes
	 * its producers ({@code initTransactions()} aborts what a previous incarnation left open).
	 * @throws TandemException if a producer cannot be initialized
	 */
	void start() {
		for (String cluster : this.clients.names()) {
			abortOrphanedTransactions(cluster);
		}
		for (int i = 0; i < this.slotCount; i++) {
			ParticipantSlot slot = new ParticipantSlot(i);
			for (String cluster : this.clients.names()) {
				Participant participant = new Participant(cluster, transactionalId(cluster, i));
				slot.participants.put(cluster, participant);
				open(participant);
			}
			this.slots.add(slot);
			this.free.add(slot);
		}
		this.open = true;
	}

	/**
	 * Takes a free slot.
	 * @return the slot, or null if none became free within the timeout
	 */
	@Nullable ParticipantSlot take(Duration timeout) throws InterruptedException {
		return this.free.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
	}

	/** Returns a slot to the pool; after close, does nothing. */
	void release(ParticipantSlot slot) {
		if (this.open) {
			this.free.add(slot);
		}
	}

	/**
	 * Creates and initializes the participant's producer unless it has one.
	 * @throws TandemException if {@code initTransactions()} fails
	 */
	void open(Participant participant) {
		if (participant.isReady()) {
			return;
		}
		Map<String, Object> config = producerConfig(participant.cluster);
		config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, participant.transactionalId);
		config.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, participant.transactionalId);
		KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config, new ByteArraySerializer(),
				new ByteArraySerializer());
		try {
			producer.initTransactions();
		}
		catch (RuntimeException ex) {
			producer.close(Duration.ZERO);
			throw new TandemException("Could not initialize transactional producer " + participant.transactionalId
					+ " on cluster '" + participant.cluster + "' (" + config.get(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG)
					+ "): " + ex.getMessage(), ex);
		}
		participant.open(producer);
		try {
			this.producerCreated.accept(participant.cluster, producer);
		}
		catch (RuntimeException ex) {
			logger.warn("Producer listener failed for {}", participant.transactionalId, ex);
		}
	}

	/**
	 * Aborts open transactions that a previous incarnation of this instance left on slots this
	 * incarnation does not use (it ran with more slots): initTransactions() fences only the ids
	 * in use, and an open transaction holds back every read_committed reader of its partitions.
	 * Needs DESCRIBE on the transactional ids; without it, logs a warning.
	 */
	private void abortOrphanedTransactions(String cluster) {
		String prefix = this.idPrefix + "." + cluster + "." + this.instanceId + ".";
		List<String> orphans = new ArrayList<>();
		Admin admin = this.clients.admin(cluster, this.commitTimeout);
		try {
			for (TransactionListing listing : admin
				.listTransactions(new ListTransactionsOptions()
					.filterStates(List.of(org.apache.kafka.clients.admin.TransactionState.ONGOING)))
				.all()
				.get(this.commitTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
				String id = listing.transactionalId();
				if (id.startsWith(prefix) && isUnusedSlot(id.substring(prefix.length()))) {
					orphans.add(id);
				}
			}
		}
		catch (Exception ex) {
			logger.warn("Could not list open transactions on cluster '{}' to abort those of unused slots: {}", cluster,
					ex.toString());
			return;
		}
		finally {
			admin.close(Duration.ofSeconds(1));
		}
		for (String id : orphans) {
			Participant participant = new Participant(cluster, id);
			open(participant);
			participant.close(this.commitTimeout);
			logger.info("Aborted the open transaction of unused slot {} on cluster '{}'", id, cluster);
		}
	}

	private boolean isUnusedSlot(String suffix) {
		try {
			return Integer.parseInt(suffix) >= this.slotCount;
		}
		catch (NumberFormatException ex) {
			return false; // not one of ours
		}
	}

	/**
	 * Closes every producer without aborting its open transaction, as a crashed process would leave
	 * it.
	 */
	void abandon() {
		this.open = false;
		for (ParticipantSlot slot : this.slots) {
			for (Participant participant : slot.participants.values()) {
				participant.abandon();
			}
		}
	}

	/** Closes every producer gracefully: an open transaction is aborted. */
	void close() {
		this.open = false;
		for (ParticipantSlot slot : this.slots) {
			for (Participant participant : slot.participants.values()) {
				try {
					participant.close(this.commitTimeout);
				}
				catch (RuntimeException ex) {
					logger.warn("Error closing producer {}", participant.transactionalId, ex);
				}
			}
		}
	}

}
