package dev.tandem.autoconfigure.kafka;

import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.jspecify.annotations.Nullable;
import org.springframework.kafka.listener.BatchInterceptor;
import org.springframework.kafka.listener.RecordInterceptor;

import dev.tandem.autoconfigure.transaction.ListenerInvocation;
import dev.tandem.transaction.CrossClusterTransactionManager;

/**
 * Installed on every Tandem listener container of one cluster: registers the container's consumer
 * with the transaction manager as reading from that cluster, and binds each delivery to the
 * listener thread so that a {@code @CrossClusterTransactional} listener commits the delivered
 * offsets on that cluster, inside its transaction.
 *
 * @since 0.1.0
 */
public class TandemListenerInterceptor implements RecordInterceptor<Object, Object>, BatchInterceptor<Object, Object> {

	private final String cluster;

	private final CrossClusterTransactionManager manager;

	private final @Nullable ListenerContainerMonitor monitor;

	/**
	 * Creates an interceptor.
	 * @param cluster the cluster the container consumes from
	 * @param manager the transaction manager
	 */
	public TandemListenerInterceptor(String cluster, CrossClusterTransactionManager manager) {
		this(cluster, manager, null);
	}

	/**
	 * Creates an interceptor that reports each delivery's offsets to a monitor.
	 * @param cluster the cluster the container consumes from
	 * @param manager the transaction manager
	 * @param monitor the monitor that finds stalled containers, or null
	 */
	public TandemListenerInterceptor(String cluster, CrossClusterTransactionManager manager,
			@Nullable ListenerContainerMonitor monitor) {
		this.cluster = cluster;
		this.manager = manager;
		this.monitor = monitor;
	}

	/**
	 * Returns the cluster the container consumes from.
	 * @return the cluster's name
	 */
	public String cluster() {
		return this.cluster;
	}

	private void delivered(Consumer<Object, Object> consumer, List<? extends ConsumerRecord<?, ?>> records) {
		if (this.monitor != null && !records.isEmpty()) {
			String group = groupId(consumer);
			if (group != null) {
				this.monitor.delivered(group, records);
			}
		}
	}

	private static @Nullable String groupId(Consumer<Object, Object> consumer) {
		try {
			return consumer.groupMetadata().groupId();
		}
		catch (RuntimeException ex) {
			return null; // no group: nothing is committed, nothing can stall
		}
	}

	@Override
	public @Nullable ConsumerRecord<Object, Object> intercept(ConsumerRecord<Object, Object> record,
			Consumer<Object, Object> consumer) {
		this.manager.registerConsumer(this.cluster, consumer);
		List<ConsumerRecord<?, ?>> records = List.of(record);
		delivered(consumer, records);
		ListenerInvocation.bind(this.cluster, consumer, records, false);
		return record;
	}

	@Override
	public void afterRecord(ConsumerRecord<Object, Object> record, Consumer<Object, Object> consumer) {
		ListenerInvocation.unbind();
	}

	@Override
	public ConsumerRecords<Object, Object> intercept(ConsumerRecords<Object, Object> records,
			Consumer<Object, Object> consumer) {
		this.manager.registerConsumer(this.cluster, consumer);
		List<ConsumerRecord<?, ?>> list = new ArrayList<>(records.count());
		records.forEach(list::add);
		delivered(consumer, list);
		ListenerInvocation.bind(this.cluster, consumer, list, true);
		return records;
	}

	@Override
	public void success(ConsumerRecords<Object, Object> records, Consumer<Object, Object> consumer) {
		ListenerInvocation.unbind();
	}

	@Override
	public void failure(ConsumerRecords<Object, Object> records, Exception exception, Consumer<Object, Object> consumer) {
		ListenerInvocation.unbind();
	}

	@Override
	public void clearThreadState(Consumer<?, ?> consumer) {
		ListenerInvocation.unbind();
	}

}
