package dev.tandem.test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link DelayLine}, the bounded, ordered queue behind each direction of a
 * {@link LatencyProxy} connection.
 *
 * @author Tandem
 */
class DelayLineTests {

	@Test
	void aChunkIsNeverReleasedBeforeItsDelay() throws Exception {
		DelayLine line = new DelayLine(1024);
		long put = System.nanoTime();
		line.put(new byte[] { 1 }, TimeUnit.MILLISECONDS.toNanos(80));
		DelayLine.Chunk chunk = line.take();
		assertThat(System.nanoTime() - chunk.dueNanos()).isNotNegative();
		assertThat(Duration.ofNanos(System.nanoTime() - put)).isGreaterThanOrEqualTo(Duration.ofMillis(80));
		assertThat(chunk.data()).containsExactly(1);
	}

	@Test
	void aShorterDelayAfterALongerOneWaitsForTheEarlierChunk() throws Exception {
		DelayLine line = new DelayLine(1024);
		line.put(new byte[] { 1 }, TimeUnit.MILLISECONDS.toNanos(100));
		line.put(new byte[] { 2 }, 0);
		DelayLine.Chunk first = line.take();
		DelayLine.Chunk second = line.take();
		assertThat(first.data()).containsExactly(1);
		assertThat(second.data()).containsExactly(2);
		assertThat(second.dueNanos()).isEqualTo(first.dueNanos());
	}

	@Test
	void putBlocksAtCapacityUntilAChunkIsTaken() throws Exception {
		DelayLine line = new DelayLine(1024);
		line.put(new byte[1024], 0);
		CompletableFuture<Boolean> blocked = CompletableFuture.supplyAsync(() -> {
			try {
				return line.put(new byte[] { 7 }, 0);
			}
			catch (InterruptedException ex) {
				throw new IllegalStateException(ex);
			}
		});
		await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> !blocked.isDone());
		assertThat(line.take().data()).hasSize(1024);
		assertThat(blocked.get(10, TimeUnit.SECONDS)).isTrue();
		assertThat(line.take().data()).containsExactly(7);
	}

	@Test
	void closeWakesBothSidesAndDropsWhatIsHeld() throws Exception {
		DelayLine line = new DelayLine(1024);
		CompletableFuture<DelayLine.Chunk> taker = CompletableFuture.supplyAsync(() -> {
			try {
				return line.take();
			}
			catch (InterruptedException ex) {
				throw new IllegalStateException(ex);
			}
		});
		line.close();
		assertThat(taker.get(10, TimeUnit.SECONDS)).isNull();
		assertThat(line.put(new byte[] { 1 }, 0)).isFalse();
	}

}
