package dev.tandem.coordinator.client;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;

/**
 * The coordinator's Raft group: its id and its peers (peer id to {@code host:port} of the gRPC
 * endpoint). Servers and clients of one coordinator must use equal groups.
 * <p>
 * Immutable and thread-safe.
 *
 * @since 0.1.0
 */
public final class CoordinatorGroup {

	/**
	 * Group id used unless one is given: derived from the name {@code tandem-coordinator}.
	 */
	public static final UUID DEFAULT_GROUP_ID = UUID
		.nameUUIDFromBytes("tandem-coordinator".getBytes(StandardCharsets.UTF_8));

	private final UUID groupId;

	private final Map<String, String> peers;

	private CoordinatorGroup(UUID groupId, Map<String, String> peers) {
		this.groupId = Objects.requireNonNull(groupId, "groupId");
		if (peers.isEmpty()) {
			throw new IllegalArgumentException("A coordinator group needs at least one peer");
		}
		Map<String, String> copy = new LinkedHashMap<>();
		peers.forEach((id, address) -> {
			if (id.isBlank()) {
				throw new IllegalArgumentException("Blank peer id in " + peers);
			}
			int colon = address.lastIndexOf(':');
			if (colon <= 0 || colon == address.length() - 1) {
				throw new IllegalArgumentException("Peer '" + id + "' address '" + address + "' is not host:port");
			}
			copy.put(id, address);
		});
		this.peers = Collections.unmodifiableMap(copy);
	}

	/**
	 * Creates a group with the {@link #DEFAULT_GROUP_ID default id}.
	 * @param peers peer id to {@code host:port}, in a stable order (use a
	 *     {@link LinkedHashMap}); at least one
	 * @return the group
	 * @throws IllegalArgumentException if there is no peer or an address is not
	 *     {@code host:port}
	 */
	public static CoordinatorGroup of(Map<String, String> peers) {
		return new CoordinatorGroup(DEFAULT_GROUP_ID, peers);
	}

	/**
	 * Creates a group.
	 * @param groupId the group id
	 * @param peers peer id to {@code host:port}; at least one
	 * @return the group
	 * @throws IllegalArgumentException if there is no peer or an address is not
	 *     {@code host:port}
	 */
	public static CoordinatorGroup of(UUID groupId, Map<String, String> peers) {
		return new CoordinatorGroup(groupId, peers);
	}

	/**
	 * Parses a peer list such as {@code n1=coord-0:9872,n2=coord-1:9872,n3=coord-2:9872} (the
	 * form of {@code tandem.coordinator.peers}), with the default group id.
	 * @param peers comma-separated {@code id=host:port} items
	 * @return the group
	 * @throws IllegalArgumentException if an item is not {@code id=host:port} or an id repeats
	 */
	public static CoordinatorGroup parse(String peers) {
		Map<String, String> map = new LinkedHashMap<>();
		for (String item : peers.split(",")) {
			String trimmed = item.trim();
			int equals = trimmed.indexOf('=');
			if (equals <= 0) {
				throw new IllegalArgumentException("Peer '" + trimmed + "' is not id=host:port in '" + peers + "'");
			}
			String id = trimmed.substring(0, equals).trim();
			if (map.put(id, trimmed.substring(equals + 1).trim()) != null) {
				throw new IllegalArgumentException("Peer id '" + id + "' repeats in '" + peers + "'");
			}
		}
		return of(map);
	}

	/**
	 * Returns the group id.
	 * @return the group id
	 */
	public UUID groupId() {
		return this.groupId;
	}

	/**
	 * Returns the peers.
	 * @return an unmodifiable map of peer id to {@code host:port}, in the order given
	 */
	public Map<String, String> peers() {
		return this.peers;
	}

	/**
	 * Returns this group as a Ratis group.
	 * @return the Ratis group
	 */
	public RaftGroup toRaftGroup() {
		List<RaftPeer> raftPeers = new ArrayList<>(this.peers.size());
		this.peers.forEach((id, address) -> raftPeers.add(RaftPeer.newBuilder().setId(id).setAddress(address).build()));
		return RaftGroup.valueOf(RaftGroupId.valueOf(this.groupId), raftPeers);
	}

	@Override
	public boolean equals(Object obj) {
		return (this == obj) || (obj instanceof CoordinatorGroup other && this.groupId.equals(other.groupId)
				&& this.peers.equals(other.peers));
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.groupId, this.peers);
	}

	@Override
	public String toString() {
		return "CoordinatorGroup[" + this.groupId + " " + this.peers + "]";
	}

}
