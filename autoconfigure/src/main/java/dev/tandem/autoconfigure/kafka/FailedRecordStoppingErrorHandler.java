package dev.tandem.autoconfigure.kafka;

import java.util.List;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.kafka.KafkaException;
import org.springframework.kafka.listener.CommonContainerStoppingErrorHandler;
import org.springframework.kafka.listener.MessageListenerContainer;

import dev.tandem.autoconfigure.transaction.FailedRecordException;

/**
 * Stops a Tandem listener container on a {@link FailedRecordException}, as Spring Kafka's
 * {@link CommonContainerStoppingErrorHandler} does, after reporting the record to the
 * {@link ListenerContainerMonitor} (health DOWN naming it) and logging one ERROR line that says
 * what stopped and how to go on; Spring Kafka's own "Stopped container" stack trace goes to
 * DEBUG. Thread-safe.
 *
 * @since 0.1.0
 */
final class FailedRecordStoppingErrorHandler extends CommonContainerStoppingErrorHandler {

	private static final Logger logger = LoggerFactory.getLogger(FailedRecordStoppingErrorHandler.class);

	private final String cluster;

	private final @Nullable ListenerContainerMonitor monitor;

	FailedRecordStoppingErrorHandler(String cluster, @Nullable ListenerContainerMonitor monitor) {
		this.cluster = cluster;
		this.monitor = monitor;
		setLogLevel(KafkaException.Level.DEBUG);
	}

	@Override
	public void handleRemaining(Exception thrownException, List<ConsumerRecord<?, ?>> records, Consumer<?, ?> consumer,
			MessageListenerContainer container) {
		report(thrownException, container);
		super.handleRemaining(thrownException, records, consumer, container);
	}

	@Override
	public void handleBatch(Exception thrownException, ConsumerRecords<?, ?> data, Consumer<?, ?> consumer,
			MessageListenerContainer container, Runnable invokeListener) {
		report(thrownException, container);
		super.handleBatch(thrownException, data, consumer, container, invokeListener);
	}

	private void report(Exception thrownException, MessageListenerContainer container) {
		FailedRecordException failure = failedRecord(thrownException);
		if (failure == null) {
			logger.error("Listener container '{}' of cluster '{}' stopped: {}", container.getListenerId(), this.cluster,
					String.valueOf(thrownException));
		}
		else if (this.monitor != null) {
			this.monitor.failed(container, this.cluster, failure);
		}
		else {
			logger.error("Listener container '{}' of cluster '{}' stopped: {}", container.getListenerId(), this.cluster,
					failure.getMessage());
		}
	}

	private static @Nullable FailedRecordException failedRecord(Throwable thrown) {
		for (Throwable current = thrown; current != null; current = (current.getCause() == current) ? null
				: current.getCause()) {
			if (current instanceof FailedRecordException failure) {
				return failure;
			}
		}
		return null;
	}

}
