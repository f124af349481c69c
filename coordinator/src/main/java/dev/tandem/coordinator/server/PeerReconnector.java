package dev.tandem.coordinator.server;

import java.lang.reflect.Method;
import java.util.List;

import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerRpcWithProxy;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes a leaderless peer reconnect to the other peers at once instead of after gRPC's
 * reconnect backoff.
 * <p>
 * Ratis keeps one gRPC channel per peer. After a peer was unreachable, gRPC retries the
 * connection with an exponentially growing backoff (1 s, 1.6 s, 2.6 s, ... up to 2 minutes)
 * and fails RPCs at once in between. Ratis resets that backoff only in a leader's log
 * appender, so when a group lost its majority and a stopped peer returns, the survivors'
 * (pre-)vote requests to it keep failing until their backoff expires, which after a long outage
 * is minutes ({@code docs/benchmarks.md}, "Coordinator"). While this peer knows no leader, {@link #reconnect} resets the backoff
 * of its channels to every other peer ({@code resetConnectBackoff}, which does not disturb
 * calls in flight).
 * <p>
 * Ratis' channel class is package-private, so the method is called reflectively; if a Ratis
 * upgrade removes it, this logs once and does nothing (elections still work, only slower).
 * Thread-safe.
 */
final class PeerReconnector {

	private static final Logger logger = LoggerFactory.getLogger(PeerReconnector.class);

	private final String peerId;

	private final List<RaftPeerId> others;

	private volatile boolean unsupported;

	private volatile @Nullable Method resetConnectBackoff;

	PeerReconnector(String peerId, List<String> others) {
		this.peerId = peerId;
		this.others = others.stream().map(RaftPeerId::valueOf).toList();
	}

	/**
	 * Resets the reconnect backoff of this peer's channels to every other peer.
	 * @param server this peer's Ratis server
	 */
	void reconnect(RaftServer server) {
		if (this.unsupported || !(server.getServerRpc() instanceof RaftServerRpcWithProxy<?, ?> rpc)) {
			return;
		}
		for (RaftPeerId other : this.others) {
			try {
				Object proxy = rpc.getProxies().getProxy(other);
				Method method = method(proxy.getClass());
				if (method != null) {
					method.invoke(proxy);
				}
			}
			catch (ReflectiveOperationException | RuntimeException ex) {
				this.unsupported = true;
				logger.warn("Coordinator peer '{}' cannot reset gRPC reconnect backoff ({}); elections after an outage "
						+ "may wait for it", this.peerId, ex.toString());
				return;
			}
			catch (Exception ex) {
				logger.debug("Coordinator peer '{}' has no channel to '{}' yet: {}", this.peerId, other, ex.toString());
			}
		}
	}

	private @Nullable Method method(Class<?> proxyClass) throws NoSuchMethodException {
		Method method = this.resetConnectBackoff;
		if (method == null || method.getDeclaringClass() != proxyClass) {
			method = proxyClass.getMethod("resetConnectBackoff");
			method.setAccessible(true);
			this.resetConnectBackoff = method;
		}
		return method;
	}

}
