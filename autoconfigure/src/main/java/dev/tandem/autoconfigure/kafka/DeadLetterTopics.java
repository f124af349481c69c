package dev.tandem.autoconfigure.kafka;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.kafka.listener.AbstractMessageListenerContainer;
import org.springframework.kafka.listener.MessageListenerContainer;
import org.springframework.kafka.support.TopicPartitionOffset;

import dev.tandem.autoconfigure.TandemProperties.Listener.FailedRecordAction;
import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;
import dev.tandem.autoconfigure.transaction.FailedRecordPolicy;
import dev.tandem.clients.BoundedAdmin;

/**
 * Checks, before Tandem's listener containers start, that the dead-letter topic of every topic
 * they consume exists on its dead-letter cluster ({@code tandem.listener.failed-record=dead-letter}):
 * a missing one fails start-up with a {@link TandemConfigurationException} naming the topic and
 * the fix, or is created when {@code tandem.listener.dead-letter.create-topics=true} (with the
 * partition count of its source topic and the cluster's default replication factor). A cluster
 * that does not answer within the timeout is not checked (a WARN says so): the app starts
 * without it, as it does for transactions. Listeners subscribed by pattern are not checked.
 * Runs once, on the thread that starts the context.
 *
 * @since 0.1.0
 */
public class DeadLetterTopics implements SmartLifecycle {

	private static final Logger logger = LoggerFactory.getLogger(DeadLetterTopics.class);

	/** Started just before Spring Kafka's listener containers. */
	static final int PHASE = AbstractMessageListenerContainer.DEFAULT_PHASE - 10;

	static final String CREATE_TOPICS_PROPERTY = "tandem.listener.dead-letter.create-topics";

	private final Supplier<? extends Collection<? extends MessageListenerContainer>> containers;

	private final Function<String, Map<String, Object>> adminConfig;

	private final FailedRecordPolicy policy;

	private final boolean createTopics;

	private final Duration timeout;

	private volatile boolean running;

	/**
	 * Creates the check.
	 * @param containers the application's listener containers; those that are not Tandem's are ignored
	 * @param adminConfig Admin client properties of a cluster, by cluster name
	 * @param policy what happens to failed records, and where dead letters go
	 * @param createTopics whether missing dead-letter topics are created
	 * @param timeout the bound of each Admin call, positive
	 */
	public DeadLetterTopics(Supplier<? extends Collection<? extends MessageListenerContainer>> containers,
			Function<String, Map<String, Object>> adminConfig, FailedRecordPolicy policy, boolean createTopics,
			Duration timeout) {
		this.containers = containers;
		this.adminConfig = adminConfig;
		this.policy = policy;
		this.createTopics = createTopics;
		this.timeout = timeout;
	}

	/**
	 * Checks (and creates) the dead-letter topics.
	 * @throws TandemConfigurationException if a dead-letter topic is missing and may not be created
	 */
	@Override
	public void start() {
		this.running = true;
		if (this.policy.action() != FailedRecordAction.DEAD_LETTER) {
			return;
		}
		// dead-letter cluster -> dead-letter topic -> (source cluster, source topic)
		Map<String, Map<String, Source>> wanted = new LinkedHashMap<>();
		for (MessageListenerContainer container : this.containers.get()) {
			String cluster = ListenerContainerMonitor.clusterOf(container);
			if (cluster == null) {
				continue;
			}
			List<String> topics = topics(container);
			if (topics.isEmpty()) {
				logger.warn("Listener container '{}' of cluster '{}' subscribes by pattern: its dead-letter topics "
						+ "({} suffix) are not checked at start-up; create them beforehand", container.getListenerId(),
						cluster, this.policy.deadLetterSuffix());
			}
			for (String topic : topics) {
				wanted.computeIfAbsent(this.policy.deadLetterClusterOf(cluster), (c) -> new LinkedHashMap<>())
					.putIfAbsent(this.policy.deadLetterTopicOf(topic), new Source(cluster, topic, String.valueOf(container.getListenerId())));
			}
		}
		wanted.forEach(this::check);
	}

	private void check(String cluster, Map<String, Source> topics) {
		List<String> missing;
		try (Admin admin = BoundedAdmin.create(this.adminConfig.apply(cluster), this.timeout)) {
			missing = missing(admin, topics.keySet());
			if (missing.isEmpty()) {
				return;
			}
			if (!this.createTopics) {
				String topic = missing.get(0);
				Source source = topics.get(topic);
				throw new TandemConfigurationException(CREATE_TOPICS_PROPERTY, "Dead-letter topic '" + topic
						+ "' does not exist on cluster '" + cluster + "' (listener '" + source.listener()
						+ "' consumes '" + source.topic() + "' on cluster '" + source.cluster()
						+ "' with tandem.listener.failed-record=dead-letter)"
						+ ((missing.size() > 1) ? "; missing as well: " + missing.subList(1, missing.size()) : "") + ".",
						"Create " + ((missing.size() > 1) ? "these topics" : "it") + " on cluster '" + cluster
								+ "' (as many partitions as the source topic), or set " + CREATE_TOPICS_PROPERTY
								+ "=true to have Tandem create missing dead-letter topics at start-up.");
			}
			create(admin, cluster, missing, topics);
		}
		catch (TandemConfigurationException ex) {
			throw ex;
		}
		catch (RuntimeException ex) {
			logger.warn("Could not check the dead-letter topics {} on cluster '{}': {}; they are not checked",
					topics.keySet(), cluster, String.valueOf(ex));
		}
	}

	private List<String> missing(Admin admin, Collection<String> topics) {
		List<String> missing = new ArrayList<>();
		admin.describeTopics(topics).topicNameValues().forEach((topic, future) -> {
			try {
				future.get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
			}
			catch (ExecutionException ex) {
				if (ex.getCause() instanceof UnknownTopicOrPartitionException) {
					missing.add(topic);
				}
				else {
					throw new IllegalStateException(ex.getCause());
				}
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
		missing.sort(null);
		return missing;
	}

	private void create(Admin admin, String cluster, List<String> missing, Map<String, Source> topics) {
		List<NewTopic> creations = new ArrayList<>();
		for (String topic : missing) {
			Source source = topics.get(topic);
			int partitions = partitions(source);
			creations.add(new NewTopic(topic, Optional.of(partitions), Optional.empty()));
		}
		admin.createTopics(creations).values().forEach((topic, future) -> {
			try {
				future.get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
				logger.info("Created dead-letter topic '{}' on cluster '{}' ({})", topic, cluster, CREATE_TOPICS_PROPERTY);
			}
			catch (ExecutionException ex) {
				if (!(ex.getCause() instanceof TopicExistsException)) {
					throw new IllegalStateException("creating dead-letter topic '" + topic + "': " + ex.getCause(),
							ex.getCause());
				}
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
	}

	/** The source topic's partition count. */
	private int partitions(Source source) {
		try (Admin admin = BoundedAdmin.create(this.adminConfig.apply(source.cluster()), this.timeout)) {
			TopicDescription description = admin.describeTopics(List.of(source.topic()))
				.topicNameValues()
				.get(source.topic())
				.get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
			return description.partitions().size();
		}
		catch (Exception ex) {
			throw new IllegalStateException("reading the partitions of '" + source.topic() + "' on cluster '"
					+ source.cluster() + "': " + ex, ex);
		}
	}

	private static List<String> topics(MessageListenerContainer container) {
		List<String> topics = new ArrayList<>();
		String[] names = container.getContainerProperties().getTopics();
		if (names != null) {
			topics.addAll(List.of(names));
		}
		TopicPartitionOffset[] partitions = container.getContainerProperties().getTopicPartitions();
		if (partitions != null) {
			for (TopicPartitionOffset partition : partitions) {
				if (!topics.contains(partition.getTopic())) {
					topics.add(partition.getTopic());
				}
			}
		}
		return topics;
	}

	@Override
	public void stop() {
		this.running = false;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

	private record Source(String cluster, String topic, String listener) {
	}

}
