package dev.tandem.test;

import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

/**
 * One direction of a {@link LatencyProxy} connection: chunks of bytes, each released no earlier
 * than its due time, in the order they were put. Due times never decrease (a chunk is due at
 * the later of its own delay and the previous chunk's due time), so a plain FIFO suffices and
 * jitter cannot reorder bytes. Bounded: {@link #put} blocks while the bytes held reach the
 * capacity, so a slow receiver slows the sender down through TCP flow control instead of
 * growing the heap. One thread puts, one takes; both block, never spin.
 *
 * @author Tandem
 */
final class DelayLine {

	private final ReentrantLock lock = new ReentrantLock();

	private final Condition notFull = this.lock.newCondition();

	private final Condition changed = this.lock.newCondition();

	private final ArrayDeque<Chunk> chunks = new ArrayDeque<>();

	private final long capacityBytes;

	private long heldBytes;

	private long lastDueNanos = Long.MIN_VALUE;

	private boolean closed;

	DelayLine(long capacityBytes) {
		this.capacityBytes = capacityBytes;
	}

	/**
	 * Queue bytes (or the end of the stream, {@code data == null}) for release after a delay.
	 * @return {@code false} if the line was closed meanwhile
	 */
	boolean put(byte @Nullable [] data, long delayNanos) throws InterruptedException {
		this.lock.lockInterruptibly();
		try {
			while (this.heldBytes >= this.capacityBytes && !this.closed) {
				this.notFull.await();
			}
			if (this.closed) {
				return false;
			}
			long due = System.nanoTime() + delayNanos;
			if (this.lastDueNanos != Long.MIN_VALUE && due - this.lastDueNanos < 0) {
				due = this.lastDueNanos;
			}
			this.lastDueNanos = due;
			this.chunks.addLast(new Chunk(data, due));
			this.heldBytes += (data != null) ? data.length : 0;
			this.changed.signal();
			return true;
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Wait for the next chunk to be due and remove it.
	 * @return the chunk, or {@code null} if the line was closed
	 */
	@Nullable Chunk take() throws InterruptedException {
		this.lock.lockInterruptibly();
		try {
			while (!this.closed) {
				Chunk head = this.chunks.peekFirst();
				if (head == null) {
					this.changed.await();
					continue;
				}
				long wait = head.dueNanos() - System.nanoTime();
				if (wait > 0) {
					this.changed.await(wait, TimeUnit.NANOSECONDS);
					continue;
				}
				this.chunks.removeFirst();
				this.heldBytes -= (head.data() != null) ? head.data().length : 0;
				this.notFull.signal();
				return head;
			}
			return null;
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Drop everything held and wake both sides; later calls return at once.
	 */
	void close() {
		this.lock.lock();
		try {
			this.closed = true;
			this.chunks.clear();
			this.heldBytes = 0;
			this.notFull.signalAll();
			this.changed.signalAll();
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Bytes (or the end of the stream when {@code data} is {@code null}) and when they are due
	 * ({@link System#nanoTime()}).
	 */
	record Chunk(byte @Nullable [] data, long dueNanos) {

	}

}
