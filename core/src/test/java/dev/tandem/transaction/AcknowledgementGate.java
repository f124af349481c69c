package dev.tandem.transaction;

import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.producer.ProducerInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.jspecify.annotations.Nullable;

/**
 * A producer interceptor ({@code interceptor.classes}) that, from {@link #hold()} on, keeps
 * every acknowledgement its producers receive on their network threads until {@link #release()} (at most 60 s): records already sent stay unacknowledged to the
 * application, as across a slow link, without touching the brokers. One gate for the JVM.
 */
public final class AcknowledgementGate implements ProducerInterceptor<byte[], byte[]> {

	private static volatile @Nullable CountDownLatch closed;

	/** Holds acknowledgements from now on. */
	static void hold() {
		closed = new CountDownLatch(1);
	}

	/** Lets every held acknowledgement through, and those to come. */
	static void release() {
		CountDownLatch latch = closed;
		closed = null;
		if (latch != null) {
			latch.countDown();
		}
	}

	@Override
	public ProducerRecord<byte[], byte[]> onSend(ProducerRecord<byte[], byte[]> record) {
		return record;
	}

	@Override
	public void onAcknowledgement(RecordMetadata metadata, Exception exception) {
		CountDownLatch latch = closed;
		// only on the network thread: a send that fails as it is made calls back on the caller's
		if (latch != null && Thread.currentThread().getName().startsWith("kafka-producer-network-thread")) {
			try {
				latch.await(60, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	@Override
	public void close() {
		// the gate is static: nothing of this instance to close
	}

	@Override
	public void configure(Map<String, ?> configs) {
		// nothing to configure
	}

}
