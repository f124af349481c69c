package dev.tandem.autoconfigure.transaction;

import java.util.List;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Binds and unbinds the {@link ListenerInvocation} of the calling listener thread; used by
 * Tandem's listener containers.
 *
 * @since 0.1.0
 */
public final class ListenerDeliveries {

	private ListenerDeliveries() {
	}

	/**
	 * Binds a delivery to the calling thread.
	 * @param cluster the cluster the consumer reads from
	 * @param consumer the consumer
	 * @param records the records delivered
	 */
	public static void bind(String cluster, Consumer<?, ?> consumer, List<ConsumerRecord<?, ?>> records) {
		ListenerInvocation.bind(cluster, consumer, records);
	}

	/**
	 * Unbinds the calling thread's delivery.
	 */
	public static void unbind() {
		ListenerInvocation.unbind();
	}

}
