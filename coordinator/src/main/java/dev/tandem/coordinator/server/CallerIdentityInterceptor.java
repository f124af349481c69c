package dev.tandem.coordinator.server;

import java.security.cert.Certificate;
import java.security.cert.X509Certificate;

import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

import dev.tandem.coordinator.security.AccessPolicy;
import dev.tandem.coordinator.state.MessageCodec;
import org.apache.ratis.client.impl.OrderedAsync;
import org.apache.ratis.proto.RaftProtos.ClientMessageEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftClientRequestProto;
import org.apache.ratis.proto.grpc.AdminProtocolServiceGrpc;
import org.apache.ratis.proto.grpc.RaftClientProtocolServiceGrpc;
import org.apache.ratis.proto.grpc.RaftServerProtocolServiceGrpc;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.thirdparty.io.grpc.ForwardingServerCallListener;
import org.apache.ratis.thirdparty.io.grpc.Grpc;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.ServerInterceptor;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place a peer learns who is calling: a gRPC interceptor on every Ratis service of the
 * peer, installed through Ratis' {@code GrpcServices.Customizer}. It reads the caller's
 * identity from the TLS session of the call (the common name of the verified client
 * certificate), then:
 * <ul>
 * <li>peer-to-peer service (append entries, votes, snapshots): only peers pass;</li>
 * <li>admin service (membership, snapshots, leadership): only admins and peers pass;</li>
 * <li>client service: every request's payload is wrapped in an envelope naming the identity
 * ({@link MessageCodec#encodeEnvelope}), so the state machine authorizes each command and
 * query against it. A client cannot forge the envelope: whatever it sends is wrapped
 * again (except Ratis' own {@code DUMMY} stream-opening message, which the peer answers
 * without the state machine);</li>
 * <li>any other service: refused unless the policy is open.</li>
 * </ul>
 * Thread-safe.
 */
final class CallerIdentityInterceptor implements ServerInterceptor {

	private static final Logger logger = LoggerFactory.getLogger(CallerIdentityInterceptor.class);

	private final String peerId;

	private final AccessPolicy policy;

	CallerIdentityInterceptor(String peerId, AccessPolicy policy) {
		this.peerId = peerId;
		this.policy = policy;
	}

	@Override
	public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
			ServerCallHandler<Q, R> next) {
		String service = call.getMethodDescriptor().getServiceName();
		String identity = identity(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION));
		if (RaftClientProtocolServiceGrpc.SERVICE_NAME.equals(service)) {
			return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(next.startCall(call, headers)) {

				@Override
				public void onMessage(Q message) {
					super.onMessage(stamp(message, identity));
				}

			};
		}
		boolean allowed;
		if (RaftServerProtocolServiceGrpc.SERVICE_NAME.equals(service)) {
			allowed = this.policy.isPeer(identity);
		}
		else if (AdminProtocolServiceGrpc.SERVICE_NAME.equals(service)) {
			allowed = this.policy.isAdmin(identity);
		}
		else {
			allowed = this.policy.isOpen();
		}
		if (allowed) {
			return next.startCall(call, headers);
		}
		String reason = "Coordinator peer '" + this.peerId + "' refused " + call.getMethodDescriptor().getFullMethodName()
				+ " to " + ((identity != null) ? "identity '" + identity + "'" : "an unauthenticated caller") + ": "
				+ (RaftServerProtocolServiceGrpc.SERVICE_NAME.equals(service) ? "only peers may call it"
						: "only admins and peers may call it");
		logger.warn(reason);
		call.close(Status.PERMISSION_DENIED.withDescription(reason), new Metadata());
		return new ServerCall.Listener<>() {
		};
	}

	@SuppressWarnings("unchecked")
	private static <Q> Q stamp(Q message, @Nullable String identity) {
		if (!(message instanceof RaftClientRequestProto request)
				|| OrderedAsync.DUMMY.getContent().equals(request.getMessage().getContent())) {
			// Ratis' client opens each stream with a DUMMY watch that the peer recognises by
			// its content; it never reaches the state machine
			return message;
		}
		byte[] envelope = MessageCodec.encodeEnvelope(identity, request.getMessage().getContent().toByteArray());
		return (Q) request.toBuilder()
			.setMessage(ClientMessageEntryProto.newBuilder().setContent(UnsafeByteOperations.unsafeWrap(envelope)))
			.build();
	}

	/**
	 * Returns the common name of the caller's verified certificate, or {@code null} without
	 * TLS or without a client certificate.
	 */
	static @Nullable String identity(@Nullable SSLSession session) {
		if (session == null) {
			return null;
		}
		try {
			Certificate[] chain = session.getPeerCertificates();
			if (chain.length == 0 || !(chain[0] instanceof X509Certificate leaf)) {
				return null;
			}
			return commonName(leaf);
		}
		catch (SSLPeerUnverifiedException ex) {
			return null;
		}
	}

	static @Nullable String commonName(X509Certificate certificate) {
		try {
			LdapName name = new LdapName(certificate.getSubjectX500Principal().getName());
			for (Rdn rdn : name.getRdns()) {
				if ("CN".equalsIgnoreCase(rdn.getType())) {
					return rdn.getValue().toString();
				}
			}
			return null;
		}
		catch (InvalidNameException ex) {
			return null;
		}
	}

}
