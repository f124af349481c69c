package dev.tandem.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A TCP proxy on the loopback interface that delays every byte by a configurable one-way
 * delay plus jitter, in both directions, for tests and benchmarks that need real network
 * latency on one host (where no kernel delay queue such as {@code tc netem} is available).
 * {@link KafkaProcessCluster.Builder#latencyProxies(boolean)} puts one in front of each broker's
 * client listener, so clients pay the delay while brokers replicate directly.
 * <pre class="code">
 * try (LatencyProxy proxy = LatencyProxy.start(new InetSocketAddress("localhost", 9092), 0)) {
 * 	proxy.delay(Duration.ofMillis(20), Duration.ofMillis(2)); // 40 ms round trip, up to 4 ms jitter
 * 	... connect clients to "localhost:" + proxy.port() ...
 * }
 * </pre>
 * <p>
 * <b>Delay.</b> Each chunk of bytes read from one side is written to the other side no earlier
 * than {@code delay + U[0, jitter)} after it was read ({@link System#nanoTime()}), and never
 * before the chunk read just before it: bytes stay in order per connection and direction, so a
 * round trip through the proxy takes at least {@code 2 * delay} plus the peers' own time. A
 * change of the delay applies to bytes read after the call; bytes already held keep their due
 * time. The TCP handshake is not delayed (the proxy accepts at once), so a new connection costs
 * one round trip less than on a real network; the first request on it pays the delay as usual.
 * <p>
 * <b>Memory and threads.</b> Each connection holds at most about
 * {@link #DEFAULT_BUFFER_BYTES} (plus one read of 16 KiB) per direction: when that much waits
 * for its due time, the proxy stops reading, and TCP flow control slows the sender. Sustained
 * throughput per direction is therefore bounded by {@code bufferBytes / delay} (1 MiB / 20 ms =
 * 50 MiB/s). Each connection uses four daemon threads (a reader and a writer per direction),
 * all blocking, none polling, plus one acceptor thread per proxy.
 * <p>
 * <b>Faults</b> for tests: {@link #dropConnections()} resets every open connection (both peers
 * see a connection reset, as after a crash of the path); {@link #stall()} holds every byte,
 * on open and new connections, until {@link #resume()} (a peer that went silent without
 * closing: a frozen process or a network partition, which also hides a peer's close or crash); {@link #dropResponse(int)} discards one
 * Kafka response frame and silences that connection's responses from then on (a lost reply on
 * a hung connection: the client's {@code request.timeout.ms} path). A connection accepted while
 * the target refuses connections is closed at once, so the client sees a disconnect right after
 * connecting rather than a refused connection.
 * <p>
 * Instances are thread-safe.
 *
 * @author Tandem
 * @since 0.1.0
 * @see KafkaProcessCluster
 */
public final class LatencyProxy implements AutoCloseable {

	/**
	 * Default bound of the bytes held per connection and direction: 1 MiB.
	 * @since 0.1.0
	 */
	public static final int DEFAULT_BUFFER_BYTES = 1 << 20;

	/**
	 * Longest delay or jitter accepted: 10 seconds.
	 * @since 0.1.0
	 */
	public static final Duration MAX_DELAY = Duration.ofSeconds(10);

	private static final int READ_BYTES = 16 * 1024;

	private static final long THREAD_STACK_BYTES = 256 * 1024;

	private static final int CONNECT_TIMEOUT_MS = 10_000;

	private static final Logger logger = LoggerFactory.getLogger(LatencyProxy.class);

	private final InetSocketAddress target;

	private final ServerSocket server;

	private final int bufferBytes;

	private final Thread acceptor;

	private final Set<Connection> connections = ConcurrentHashMap.newKeySet();

	private final Object stallMonitor = new Object();

	private final AtomicInteger responsesUntilDrop = new AtomicInteger();

	private final AtomicLong acceptedConnections = new AtomicLong();

	private final AtomicLong forwardedBytes = new AtomicLong();

	private final AtomicInteger threadNumber = new AtomicInteger();

	private volatile long delayNanos;

	private volatile long jitterNanos;

	private volatile boolean stalled;

	private volatile boolean closed;

	private LatencyProxy(InetSocketAddress target, ServerSocket server, int bufferBytes) {
		this.target = target;
		this.server = server;
		this.bufferBytes = bufferBytes;
		this.acceptor = newThread(this::accept, "accept");
		this.acceptor.start();
	}

	/**
	 * Start a proxy with no delay on {@code localhost}, with the default buffer bound.
	 * @param target the address to forward each accepted connection to
	 * @param port the local port to listen on, or {@code 0} for any free port
	 * @return the running proxy
	 * @throws IOException if the port cannot be bound
	 * @since 0.1.0
	 */
	public static LatencyProxy start(InetSocketAddress target, int port) throws IOException {
		return start(target, port, DEFAULT_BUFFER_BYTES);
	}

	/**
	 * Start a proxy with no delay on {@code localhost}.
	 * @param target the address to forward each accepted connection to
	 * @param port the local port to listen on, or {@code 0} for any free port
	 * @param bufferBytes the most bytes held per connection and direction before the proxy
	 * stops reading, at least 1024
	 * @return the running proxy
	 * @throws IOException if the port cannot be bound
	 * @throws IllegalArgumentException if {@code port} is outside {@code [0, 65535]} or
	 * {@code bufferBytes < 1024}
	 * @since 0.1.0
	 */
	public static LatencyProxy start(InetSocketAddress target, int port, int bufferBytes) throws IOException {
		Objects.requireNonNull(target, "target must not be null");
		if (port < 0 || port > 65535) {
			throw new IllegalArgumentException("port must be in [0, 65535] but was " + port);
		}
		if (bufferBytes < 1024) {
			throw new IllegalArgumentException("bufferBytes must be at least 1024 but was " + bufferBytes);
		}
		ServerSocket server = new ServerSocket();
		try {
			server.setReuseAddress(true);
			server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 128);
		}
		catch (IOException ex) {
			server.close();
			throw ex;
		}
		return new LatencyProxy(target, server, bufferBytes);
	}

	/**
	 * Return the local port this proxy listens on.
	 * @return the port on the loopback interface
	 * @since 0.1.0
	 */
	public int port() {
		return this.server.getLocalPort();
	}

	/**
	 * Return the address this proxy forwards to.
	 * @return the target
	 * @since 0.1.0
	 */
	public InetSocketAddress target() {
		return this.target;
	}

	/**
	 * Set the one-way delay without jitter; see {@link #delay(Duration, Duration)}.
	 * @param oneWay the delay added in each direction, {@code 0} to {@link #MAX_DELAY}
	 * @throws IllegalArgumentException if the delay is negative or above {@link #MAX_DELAY}
	 * @since 0.1.0
	 */
	public void delay(Duration oneWay) {
		delay(oneWay, Duration.ZERO);
	}

	/**
	 * Set the one-way delay and jitter for bytes read from now on, in both directions. A round
	 * trip through the proxy takes at least {@code 2 * oneWay}.
	 * @param oneWay the delay added in each direction, {@code 0} to {@link #MAX_DELAY}
	 * (nanosecond precision; the writer wakes within the JVM's timer resolution after it)
	 * @param jitter the upper bound (exclusive) of a uniformly distributed extra delay per
	 * chunk, {@code 0} to {@link #MAX_DELAY}; it never reorders bytes
	 * @throws IllegalArgumentException if either is negative or above {@link #MAX_DELAY}
	 * @since 0.1.0
	 */
	public void delay(Duration oneWay, Duration jitter) {
		checkDelay("oneWay", oneWay);
		checkDelay("jitter", jitter);
		this.jitterNanos = jitter.toNanos();
		this.delayNanos = oneWay.toNanos();
	}

	private static void checkDelay(String name, Duration value) {
		Objects.requireNonNull(value, name + " must not be null");
		if (value.isNegative() || value.compareTo(MAX_DELAY) > 0) {
			throw new IllegalArgumentException(name + " must be between 0 and " + MAX_DELAY.toMillis()
					+ " ms but was " + value.toMillis() + " ms");
		}
	}

	/**
	 * Return the current one-way delay.
	 * @return the delay, zero by default
	 * @since 0.1.0
	 */
	public Duration oneWayDelay() {
		return Duration.ofNanos(this.delayNanos);
	}

	/**
	 * Return the current jitter bound.
	 * @return the jitter, zero by default
	 * @since 0.1.0
	 */
	public Duration jitter() {
		return Duration.ofNanos(this.jitterNanos);
	}

	/**
	 * Reset every open connection: both peers see a reset (RST), bytes held are lost. New
	 * connections are accepted as before.
	 * @return how many connections were dropped
	 * @since 0.1.0
	 */
	public int dropConnections() {
		int dropped = abortAll();
		logger.info("Dropped {} connection(s) of the proxy on port {} to {}", dropped, port(), this.target);
		return dropped;
	}

	private int abortAll() {
		List<Connection> open = List.copyOf(this.connections);
		open.forEach(Connection::abort);
		return open.size();
	}

	/**
	 * Hold every byte, in both directions, on open connections and on connections accepted
	 * from now on, until {@link #resume()}; connections stay open. Bytes keep being read until
	 * the buffer bound is reached, then TCP flow control stops the senders. The end of a stream
	 * and a reset by either peer are held too (a partitioned path carries no news): the other
	 * peer learns of them on {@link #resume()}. Only {@link #dropConnections()} and
	 * {@link #close()} reset connections while stalled.
	 * @since 0.1.0
	 */
	public void stall() {
		this.stalled = true;
	}

	/**
	 * End a {@link #stall()}: held bytes whose due time has passed are written at once, in
	 * order.
	 * @since 0.1.0
	 */
	public void resume() {
		synchronized (this.stallMonitor) {
			this.stalled = false;
			this.stallMonitor.notifyAll();
		}
	}

	/**
	 * Return whether the proxy is stalled.
	 * @return {@code true} between {@link #stall()} and {@link #resume()}
	 * @since 0.1.0
	 */
	public boolean isStalled() {
		return this.stalled;
	}

	/**
	 * Discard the {@code n}-th response, counted from this call over all connections, and
	 * every byte the target sends on that connection afterwards (the connection stays open,
	 * requests still reach the target, and the end of the stream still passes when the target
	 * closes). Responses are the frames of the Kafka protocol: a
	 * 4-byte big-endian size, then that many bytes. A later call replaces an armed one.
	 * @param n 1 for the next response, 2 for the one after it, ...
	 * @throws IllegalArgumentException if {@code n < 1}
	 * @since 0.1.0
	 */
	public void dropResponse(int n) {
		if (n < 1) {
			throw new IllegalArgumentException("n must be at least 1 but was " + n);
		}
		this.responsesUntilDrop.set(n);
	}

	/**
	 * Return whether a {@link #dropResponse(int)} is armed and its response not seen yet.
	 * @return {@code true} while a drop is pending
	 * @since 0.1.0
	 */
	public boolean isResponseDropPending() {
		return this.responsesUntilDrop.get() > 0;
	}

	/**
	 * Return the number of connections open now.
	 * @return open connections
	 * @since 0.1.0
	 */
	public int openConnections() {
		return this.connections.size();
	}

	/**
	 * Return the number of connections accepted since start.
	 * @return accepted connections
	 * @since 0.1.0
	 */
	public long acceptedConnections() {
		return this.acceptedConnections.get();
	}

	/**
	 * Return the number of bytes written to either side since start.
	 * @return forwarded bytes, both directions
	 * @since 0.1.0
	 */
	public long forwardedBytes() {
		return this.forwardedBytes.get();
	}

	/**
	 * Stop listening and reset every open connection. Idempotent.
	 * @since 0.1.0
	 */
	@Override
	public void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		try {
			this.server.close();
		}
		catch (IOException ex) {
			// closing anyway
		}
		abortAll();
		resume();
		try {
			this.acceptor.join(TimeUnit.SECONDS.toMillis(5));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public String toString() {
		return "LatencyProxy localhost:" + port() + " -> " + this.target + " (one-way " + oneWayDelay().toMillis()
				+ " ms, jitter " + jitter().toMillis() + " ms" + (this.stalled ? ", stalled" : "") + ")";
	}

	private void accept() {
		while (!this.closed) {
			Socket client;
			try {
				client = this.server.accept();
			}
			catch (IOException ex) {
				if (!this.closed) {
					logger.warn("Proxy on port {} stopped accepting connections", port(), ex);
				}
				return;
			}
			this.acceptedConnections.incrementAndGet();
			Connection connection = new Connection(client);
			this.connections.add(connection);
			if (this.closed) {
				connection.abort();
				return;
			}
			newThread(connection::open, "connect").start();
		}
	}

	private Thread newThread(Runnable task, String role) {
		Thread thread = new Thread(null, task,
				"latency-proxy-" + port() + "-" + this.threadNumber.incrementAndGet() + "-" + role, THREAD_STACK_BYTES);
		thread.setDaemon(true);
		return thread;
	}

	private long nextDelayNanos() {
		long jitter = this.jitterNanos;
		return this.delayNanos + ((jitter > 0) ? ThreadLocalRandom.current().nextLong(jitter) : 0);
	}

	/**
	 * Wait while the proxy is stalled.
	 * @return {@code false} if the connection was closed meanwhile
	 */
	private boolean awaitNotStalled(Connection connection) throws InterruptedException {
		if (!this.stalled) {
			return true;
		}
		synchronized (this.stallMonitor) {
			while (this.stalled && !connection.closed) {
				this.stallMonitor.wait();
			}
		}
		return !connection.closed;
	}

	/**
	 * Whether a frame starting now is the one {@link #dropResponse(int)} asked for.
	 */
	private boolean isResponseToDrop() {
		while (true) {
			int remaining = this.responsesUntilDrop.get();
			if (remaining <= 0) {
				return false;
			}
			if (this.responsesUntilDrop.compareAndSet(remaining, remaining - 1)) {
				return remaining == 1;
			}
		}
	}

	/**
	 * One proxied connection: the client's socket, the target's socket and a delay line per
	 * direction.
	 */
	private final class Connection {

		private final Socket client;

		private final Socket upstream = new Socket();

		private final DelayLine requests;

		private final DelayLine responses;

		private final AtomicInteger openDirections = new AtomicInteger(2);

		private volatile boolean closed;

		Connection(Socket client) {
			this.client = client;
			this.requests = new DelayLine(LatencyProxy.this.bufferBytes);
			this.responses = new DelayLine(LatencyProxy.this.bufferBytes);
		}

		void open() {
			try {
				this.client.setTcpNoDelay(true);
				this.upstream.setTcpNoDelay(true);
				this.upstream.connect(LatencyProxy.this.target, CONNECT_TIMEOUT_MS);
			}
			catch (IOException ex) {
				logger.debug("Proxy on port {} could not connect to {}: {}", port(), LatencyProxy.this.target,
						ex.toString());
				abort();
				return;
			}
			if (this.closed) {
				abort();
				return;
			}
			newThread(() -> read(this.client, this.requests, false), "request-read").start();
			newThread(() -> write(this.requests, this.upstream), "request-write").start();
			newThread(() -> read(this.upstream, this.responses, true), "response-read").start();
			newThread(() -> write(this.responses, this.client), "response-write").start();
		}

		private void read(Socket from, DelayLine line, boolean responses) {
			FrameTracker frames = responses ? new FrameTracker() : null;
			byte[] buffer = new byte[READ_BYTES];
			try {
				InputStream in = from.getInputStream();
				boolean silenced = false;
				while (true) {
					int read = in.read(buffer);
					if (read < 0) {
						// the end of the stream is passed on even after a dropped response
						line.put(null, nextDelayNanos());
						return;
					}
					int forward = read;
					if (frames != null && !silenced) {
						int dropAt = frames.dropOffset(buffer, read);
						if (dropAt >= 0) {
							forward = dropAt;
							silenced = true;
							logger.info("Proxy on port {} dropped a response from {} and silenced that connection",
									port(), LatencyProxy.this.target);
						}
					}
					else if (silenced) {
						forward = 0;
					}
					if (forward > 0 && !line.put(Arrays.copyOf(buffer, forward), nextDelayNanos())) {
						return;
					}
				}
			}
			catch (IOException ex) {
				// a reset is news from the peer too: a stalled path delivers it only on resume
				try {
					awaitNotStalled(this);
				}
				catch (InterruptedException interrupted) {
					Thread.currentThread().interrupt();
				}
				abort();
			}
			catch (InterruptedException ex) {
				abort();
			}
		}

		private void write(DelayLine line, Socket to) {
			try {
				OutputStream out = to.getOutputStream();
				while (true) {
					DelayLine.Chunk chunk = line.take();
					if (chunk == null || !awaitNotStalled(this)) {
						return;
					}
					byte[] data = chunk.data();
					if (data == null) {
						to.shutdownOutput();
						if (this.openDirections.decrementAndGet() == 0) {
							closeQuietly();
						}
						return;
					}
					out.write(data);
					out.flush();
					LatencyProxy.this.forwardedBytes.addAndGet(data.length);
				}
			}
			catch (IOException | InterruptedException ex) {
				abort();
			}
		}

		/**
		 * Reset both sockets (SO_LINGER 0, so the peers see RST) and drop what is held.
		 */
		void abort() {
			for (Socket socket : List.of(this.client, this.upstream)) {
				try {
					if (!socket.isClosed()) {
						socket.setSoLinger(true, 0);
					}
				}
				catch (SocketException ex) {
					// not connected: closing is enough
				}
			}
			closeQuietly();
		}

		private void closeQuietly() {
			this.closed = true;
			LatencyProxy.this.connections.remove(this);
			this.requests.close();
			this.responses.close();
			for (Socket socket : List.of(this.client, this.upstream)) {
				try {
					socket.close();
				}
				catch (IOException ex) {
					// closing anyway
				}
			}
			synchronized (LatencyProxy.this.stallMonitor) {
				LatencyProxy.this.stallMonitor.notifyAll();
			}
		}

	}

	/**
	 * Follows Kafka's framing (4-byte big-endian size, then the frame) across reads, to find
	 * where the frame that {@link #dropResponse(int)} asked for starts.
	 */
	private final class FrameTracker {

		private int headerBytesSeen;

		private int size;

		private long bodyRemaining;

		/**
		 * Return the offset in {@code buffer[0, length)} where the frame to drop starts, or
		 * {@code -1}.
		 */
		int dropOffset(byte[] buffer, int length) {
			int position = 0;
			while (position < length) {
				if (this.bodyRemaining > 0) {
					long skip = Math.min(this.bodyRemaining, length - position);
					position += (int) skip;
					this.bodyRemaining -= skip;
					continue;
				}
				if (this.headerBytesSeen == 0 && isResponseToDrop()) {
					return position;
				}
				this.size = (this.size << 8) | (buffer[position] & 0xff);
				this.headerBytesSeen++;
				position++;
				if (this.headerBytesSeen == 4) {
					this.bodyRemaining = Integer.toUnsignedLong(this.size);
					this.headerBytesSeen = 0;
					this.size = 0;
				}
			}
			return -1;
		}

	}

}
