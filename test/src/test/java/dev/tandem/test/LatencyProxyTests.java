package dev.tandem.test;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link LatencyProxy} in front of a real TCP echo server on the loopback interface.
 * Timing assertions are lower bounds only (the proxy may never release bytes early; how late
 * it is depends on the machine's load).
 *
 * @author Tandem
 */
class LatencyProxyTests {

	private ServerSocket echoServer;

	private final List<Socket> accepted = new CopyOnWriteArrayList<>();

	private LatencyProxy proxy;

	@BeforeEach
	void startEchoServerAndProxy() throws IOException {
		this.echoServer = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		Thread acceptor = new Thread(this::echo, "echo-accept");
		acceptor.setDaemon(true);
		acceptor.start();
		this.proxy = LatencyProxy.start(new InetSocketAddress(InetAddress.getLoopbackAddress(),
				this.echoServer.getLocalPort()), 0);
	}

	@AfterEach
	void close() throws IOException {
		this.proxy.close();
		this.echoServer.close();
		for (Socket socket : this.accepted) {
			socket.close();
		}
	}

	@Test
	void roundTripTakesAtLeastTwiceTheOneWayDelay() throws Exception {
		this.proxy.delay(Duration.ofMillis(50), Duration.ofMillis(10));
		try (Socket socket = connect()) {
			for (int i = 0; i < 10; i++) {
				long started = System.nanoTime();
				socket.getOutputStream().write(i);
				assertThat(socket.getInputStream().read()).isEqualTo(i);
				assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(100));
			}
		}
		assertThat(this.proxy.oneWayDelay()).isEqualTo(Duration.ofMillis(50));
		assertThat(this.proxy.jitter()).isEqualTo(Duration.ofMillis(10));
		// counted just after each write, so possibly after the peer has read the byte
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(this.proxy.forwardedBytes()).isEqualTo(20));
	}

	@Test
	void aChangedDelayAppliesToLaterBytes() throws Exception {
		try (Socket socket = connect()) {
			socket.getOutputStream().write(1);
			assertThat(socket.getInputStream().read()).isEqualTo(1);
			this.proxy.delay(Duration.ofMillis(150));
			long started = System.nanoTime();
			socket.getOutputStream().write(2);
			assertThat(socket.getInputStream().read()).isEqualTo(2);
			assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
		}
	}

	@Test
	void jitterNeverReordersBytes() throws Exception {
		this.proxy.delay(Duration.ofMillis(1), Duration.ofMillis(20));
		int count = 2000;
		try (Socket socket = connect()) {
			CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
				try {
					DataOutputStream out = new DataOutputStream(socket.getOutputStream());
					for (int i = 0; i < count; i++) {
						out.writeInt(i);
						out.flush();
					}
				}
				catch (IOException ex) {
					throw new IllegalStateException(ex);
				}
			});
			DataInputStream in = new DataInputStream(socket.getInputStream());
			List<Integer> received = new ArrayList<>();
			for (int i = 0; i < count; i++) {
				received.add(in.readInt());
			}
			writer.get(30, TimeUnit.SECONDS);
			assertThat(received).isSorted().hasSize(count).doesNotHaveDuplicates();
		}
	}

	@Test
	void sustainsSixteenMebibytesEachWayIntactThroughADelay() throws Exception {
		this.proxy.delay(Duration.ofMillis(5), Duration.ofMillis(1));
		int total = 16 << 20;
		byte[] block = new byte[64 * 1024];
		for (int i = 0; i < block.length; i++) {
			block[i] = (byte) (i * 31 + 7);
		}
		try (Socket socket = connect()) {
			CRC32 sent = new CRC32();
			long started = System.nanoTime();
			CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
				try {
					OutputStream out = socket.getOutputStream();
					for (int written = 0; written < total; written += block.length) {
						out.write(block);
						sent.update(block);
					}
				}
				catch (IOException ex) {
					throw new IllegalStateException(ex);
				}
			});
			CRC32 received = new CRC32();
			InputStream in = socket.getInputStream();
			byte[] buffer = new byte[64 * 1024];
			long read = 0;
			while (read < total) {
				int n = in.read(buffer);
				assertThat(n).isPositive();
				received.update(buffer, 0, n);
				read += n;
			}
			writer.get(60, TimeUnit.SECONDS);
			double seconds = (System.nanoTime() - started) / 1e9;
			System.out.printf("LatencyProxy echoed %d MiB each way in %.2f s (%.1f MiB/s) with 5 ms one-way delay%n",
					total >> 20, seconds, (total >> 20) / seconds);
			assertThat(read).isEqualTo(total);
			assertThat(received.getValue()).isEqualTo(sent.getValue());
		}
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(this.proxy.forwardedBytes()).isEqualTo(2L * total));
	}

	@Test
	void droppedConnectionsAreResetOnBothSidesAndNewOnesWork() throws Exception {
		try (Socket socket = connect()) {
			socket.getOutputStream().write(1);
			assertThat(socket.getInputStream().read()).isEqualTo(1);
			assertThat(this.proxy.openConnections()).isEqualTo(1);
			assertThat(this.proxy.dropConnections()).isEqualTo(1);
			assertThatThrownBy(() -> {
				socket.getOutputStream().write(2);
				if (socket.getInputStream().read() < 0) {
					throw new IOException("end of stream");
				}
			}).isInstanceOf(IOException.class);
			await().atMost(Duration.ofSeconds(10)).until(() -> this.accepted.stream().allMatch(Socket::isClosed));
		}
		assertThat(this.proxy.openConnections()).isZero();
		try (Socket socket = connect()) {
			socket.getOutputStream().write(3);
			assertThat(socket.getInputStream().read()).isEqualTo(3);
		}
		assertThat(this.proxy.acceptedConnections()).isEqualTo(2);
	}

	@Test
	void aStalledProxyHoldsBytesUntilResumed() throws Exception {
		try (Socket socket = connect()) {
			AtomicLong received = new AtomicLong();
			Thread reader = new Thread(() -> {
				try {
					while (socket.getInputStream().read() >= 0) {
						received.incrementAndGet();
					}
				}
				catch (IOException ex) {
					// closed by the test
				}
			});
			reader.setDaemon(true);
			reader.start();
			this.proxy.stall();
			assertThat(this.proxy.isStalled()).isTrue();
			socket.getOutputStream().write(new byte[] { 1, 2, 3 });
			await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2)).until(() -> received.get() == 0);
			assertThat(socket.isClosed()).isFalse();
			this.proxy.resume();
			await().atMost(Duration.ofSeconds(10)).until(() -> received.get() == 3);
		}
	}

	@Test
	void aStalledProxyHidesAResetOfTheTargetUntilResumed() throws Exception {
		try (Socket socket = connect()) {
			socket.getOutputStream().write(1);
			assertThat(socket.getInputStream().read()).isEqualTo(1);
			this.proxy.stall();
			Socket target = this.accepted.get(0);
			target.setSoLinger(true, 0);
			target.close();
			socket.setSoTimeout(500);
			assertThatThrownBy(() -> socket.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
			assertThat(this.proxy.openConnections()).isEqualTo(1);
			this.proxy.resume();
			socket.setSoTimeout(10_000);
			assertThat(readOrReset(socket.getInputStream())).isEqualTo(-1);
		}
		await().atMost(Duration.ofSeconds(10)).until(() -> this.proxy.openConnections() == 0);
	}

	@Test
	void theNthResponseIsDroppedAndItsConnectionStaysSilent() throws Exception {
		this.proxy.dropResponse(2);
		assertThat(this.proxy.isResponseDropPending()).isTrue();
		try (Socket socket = connect()) {
			socket.setSoTimeout(500);
			DataOutputStream out = new DataOutputStream(socket.getOutputStream());
			DataInputStream in = new DataInputStream(socket.getInputStream());
			frame(out, "first");
			assertThat(readFrame(in)).isEqualTo("first");
			frame(out, "second");
			frame(out, "third");
			assertThatThrownBy(() -> readFrame(in)).isInstanceOf(SocketTimeoutException.class);
			assertThat(socket.isClosed()).isFalse();
		}
		assertThat(this.proxy.isResponseDropPending()).isFalse();
		try (Socket socket = connect()) {
			DataOutputStream out = new DataOutputStream(socket.getOutputStream());
			frame(out, "fourth");
			assertThat(readFrame(new DataInputStream(socket.getInputStream()))).isEqualTo("fourth");
		}
	}

	@Test
	void aConnectionToATargetThatRefusesIsClosedAtOnce() throws Exception {
		int closedPort;
		try (ServerSocket unused = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			closedPort = unused.getLocalPort();
		}
		try (LatencyProxy refused = LatencyProxy.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), closedPort),
				0); Socket socket = new Socket(InetAddress.getLoopbackAddress(), refused.port())) {
			socket.setSoTimeout(10_000);
			assertThat(readOrReset(socket.getInputStream())).isEqualTo(-1);
		}
	}

	@Test
	void badSettingsAreRejectedWithTheirName() throws IOException {
		assertThatIllegalArgumentException().isThrownBy(() -> this.proxy.delay(Duration.ofMillis(-1)))
			.withMessage("oneWay must be between 0 and 10000 ms but was -1 ms");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.proxy.delay(Duration.ZERO, Duration.ofSeconds(11)))
			.withMessage("jitter must be between 0 and 10000 ms but was 11000 ms");
		assertThatIllegalArgumentException().isThrownBy(() -> this.proxy.dropResponse(0))
			.withMessage("n must be at least 1 but was 0");
		InetSocketAddress target = this.proxy.target();
		assertThatIllegalArgumentException().isThrownBy(() -> LatencyProxy.start(target, 0, 100))
			.withMessage("bufferBytes must be at least 1024 but was 100");
		assertThatIllegalArgumentException().isThrownBy(() -> LatencyProxy.start(target, 70_000))
			.withMessage("port must be in [0, 65535] but was 70000");
	}

	private Socket connect() throws IOException {
		Socket socket = new Socket(InetAddress.getLoopbackAddress(), this.proxy.port());
		socket.setTcpNoDelay(true);
		return socket;
	}

	private static void frame(DataOutputStream out, String text) throws IOException {
		byte[] bytes = text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
		out.writeInt(bytes.length);
		out.write(bytes);
		out.flush();
	}

	private static String readFrame(DataInputStream in) throws IOException {
		byte[] bytes = new byte[in.readInt()];
		in.readFully(bytes);
		return new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
	}

	private static int readOrReset(InputStream in) {
		try {
			return in.read();
		}
		catch (IOException ex) {
			return -1;
		}
	}

	private void echo() {
		while (!this.echoServer.isClosed()) {
			try {
				Socket socket = this.echoServer.accept();
				this.accepted.add(socket);
				Thread thread = new Thread(() -> {
					try (socket) {
						socket.setTcpNoDelay(true);
						socket.getInputStream().transferTo(socket.getOutputStream());
					}
					catch (IOException ex) {
						// reset by the proxy
					}
				}, "echo");
				thread.setDaemon(true);
				thread.start();
			}
			catch (IOException ex) {
				return;
			}
		}
	}

}
