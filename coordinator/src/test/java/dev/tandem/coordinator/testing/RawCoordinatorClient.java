package dev.tandem.coordinator.testing;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.tandem.coordinator.client.CoordinatorGroup;
import dev.tandem.coordinator.state.Command;
import dev.tandem.coordinator.state.MessageCodec;
import dev.tandem.coordinator.state.Operation;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.TimeDuration;
import org.jspecify.annotations.Nullable;

/**
 * A Ratis client that sends commands as they are, without Tandem's client (no batching, no
 * result decoding, any time and any bytes): the requests a hostile or careless caller would send.
 */
public final class RawCoordinatorClient implements AutoCloseable {

	private final RaftClient client;

	/**
	 * Creates a client of a group.
	 * @param group the group
	 * @param tls the client's TLS, or null for plain text
	 */
	public RawCoordinatorClient(CoordinatorGroup group, @Nullable GrpcTlsConfig tls) {
		RaftProperties properties = new RaftProperties();
		RaftConfigKeys.Rpc.setType(properties, SupportedRpcType.GRPC);
		RaftClientConfigKeys.Rpc.setRequestTimeout(properties, TimeDuration.valueOf(2, TimeUnit.SECONDS));
		Parameters parameters = new Parameters();
		if (tls != null) {
			GrpcConfigKeys.TLS.setConf(parameters, tls);
		}
		this.client = RaftClient.newBuilder()
			.setRaftGroup(group.toRaftGroup())
			.setProperties(properties)
			.setParameters(parameters)
			.setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(6,
					TimeDuration.valueOf(100, TimeUnit.MILLISECONDS)))
			.build();
	}

	/**
	 * Returns the Ratis client.
	 * @return the client
	 */
	public RaftClient client() {
		return this.client;
	}

	/**
	 * Sends operations as one command stamped with this machine's clock.
	 * @param operations the operations
	 * @return the reply
	 * @throws IOException if the call fails
	 */
	public RaftClientReply send(Operation... operations) throws IOException {
		return sendAt(System.currentTimeMillis(), operations);
	}

	/**
	 * Sends operations as one command stamped with any time (a skewed or lying clock).
	 * @param atMs the command's time, epoch milliseconds
	 * @param operations the operations
	 * @return the reply
	 * @throws IOException if the call fails
	 */
	public RaftClientReply sendAt(long atMs, Operation... operations) throws IOException {
		return sendBytes(MessageCodec.encodeCommand(new Command(atMs, List.of(operations))));
	}

	/**
	 * Sends any bytes as a command.
	 * @param bytes the bytes
	 * @return the reply
	 * @throws IOException if the call fails
	 */
	public RaftClientReply sendBytes(byte[] bytes) throws IOException {
		return this.client.io().send(Message.valueOf(UnsafeByteOperations.unsafeWrap(bytes)));
	}

	/**
	 * Sends and returns the failure's text, or "applied".
	 * @param operations the operations
	 * @return the text
	 */
	public String refusal(Operation... operations) {
		try {
			return outcome(send(operations));
		}
		catch (IOException ex) {
			return causes(ex);
		}
	}

	/**
	 * Sends bytes and returns the failure's text, or "applied".
	 * @param bytes the bytes
	 * @return the text
	 */
	public String refusalOfBytes(byte[] bytes) {
		try {
			return outcome(sendBytes(bytes));
		}
		catch (IOException ex) {
			return causes(ex);
		}
	}

	private static String outcome(RaftClientReply reply) {
		return reply.isSuccess() ? "applied" : String.valueOf(reply.getException());
	}

	/**
	 * Returns a failure and its causes as one line.
	 * @param failure the failure
	 * @return the text
	 */
	public static String causes(Throwable failure) {
		StringBuilder text = new StringBuilder();
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			text.append(cause).append(" | ");
		}
		return text.toString();
	}

	@Override
	public void close() throws IOException {
		this.client.close();
	}

}
