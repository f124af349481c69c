package dev.tandem.mirror;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.utils.ByteUtils;
import org.jspecify.annotations.Nullable;

/**
 * Where a mirrored record comes from, carried in one binary header, {@value #HEADER}, of every
 * record the mirror writes: the alias of the cluster the record was first produced to (the
 * origin, kept across hops, so that a mirror never copies a record back to its origin), the
 * source cluster, topic, partition and offset of this hop (from which a restarted mirror rebuilds
 * its source-to-target offset mapping) and the source topic's Kafka topic id, its incarnation (a
 * topic deleted and created again under the same name gets a new id and restarts its offsets at
 * 0, so only copies of the same incarnation may map its offsets).
 * <p>
 * The header's value, version 1: one byte {@code 1}; one byte of flags (bit 0: a topic id
 * follows the partition; bit 1: the origin is the source cluster and is not written again); the
 * origin unless bit 1, the source cluster and the topic, each as a zig-zag varint length and that
 * many bytes of UTF-8; the partition as a zig-zag varint; the topic id's 16 bytes (most
 * significant half first) if bit 0; the offset as a zig-zag varlong (the varints of Kafka's
 * record format, {@link ByteUtils}). About 40 bytes for short aliases and topic names, against
 * about 120 for the three string headers earlier snapshots wrote.
 * <p>
 * Those three headers, {@value #ORIGIN_HEADER}, {@value #SOURCE_HEADER}
 * ({@code <source-alias>/<topic>/<partition>/<offset>}) and {@value #TOPIC_ID_HEADER}, are still
 * read, so that a mirror rebuilds its mapping from copies an earlier snapshot wrote and keeps their
 * origin; they are no longer written, and a copy of a copy carries only {@value #HEADER}. Records
 * mirrored before the topic id was written carry no topic id: their {@link #topicId()} is null,
 * an unknown incarnation, and translation never uses them ({@code MappingRebuild}).
 * <p>
 * Thread-safety: immutable; the static methods keep no state.
 *
 * @param origin alias of the cluster the record was first produced to
 * @param sourceCluster alias of the cluster this copy was read from
 * @param topic source topic
 * @param partition source partition, 0 or more
 * @param offset source offset, 0 or more
 * @param topicId the source topic's id when the record was copied, or null if unknown (a record
 *     mirrored before the id was written)
 * @since 0.1.0
 */
public record Provenance(String origin, String sourceCluster, String topic, int partition, long offset,
		@Nullable Uuid topicId) {

	/**
	 * Creates a provenance of an unknown incarnation (no topic id), as records mirrored before the
	 * topic id was written carry.
	 * @param origin alias of the cluster the record was first produced to
	 * @param sourceCluster alias of the cluster this copy was read from
	 * @param topic source topic
	 * @param partition source partition, 0 or more
	 * @param offset source offset, 0 or more
	 */
	public Provenance(String origin, String sourceCluster, String topic, int partition, long offset) {
		this(origin, sourceCluster, topic, partition, offset, null);
	}

	/**
	 * The header every copy carries, its value the binary provenance described above.
	 * @since 0.1.0
	 */
	public static final String HEADER = "tandem-mirror";

	/** Header with the source topic's id ({@link Uuid#toString()}), written by earlier snapshots: read, not written. */
	public static final String TOPIC_ID_HEADER = "tandem-mirror-source-topic-id";

	/** Header with the origin cluster's alias, written by earlier snapshots: read, not written. */
	public static final String ORIGIN_HEADER = "tandem-mirror-origin";

	/** Header with {@code <source-alias>/<topic>/<partition>/<offset>}, written by earlier snapshots: read, not written. */
	public static final String SOURCE_HEADER = "tandem-mirror-source";

	private static final byte VERSION = 1;

	private static final int HAS_TOPIC_ID = 1;

	private static final int ORIGIN_IS_SOURCE = 2;

	/**
	 * Returns the origin alias in a record's headers.
	 * @param headers the record's headers
	 * @return the alias, or {@code null} if the record was not mirrored (or its provenance is
	 *     malformed)
	 */
	public static @Nullable String origin(Headers headers) {
		Header header = headers.lastHeader(HEADER);
		if (header != null) {
			Provenance provenance = decode(header.value());
			return (provenance != null) ? provenance.origin() : null;
		}
		Header legacy = headers.lastHeader(ORIGIN_HEADER);
		return (legacy != null && legacy.value() != null) ? new String(legacy.value(), StandardCharsets.UTF_8) : null;
	}

	/**
	 * Reads the provenance of a mirrored record, from {@value #HEADER} or, on a copy an earlier
	 * version wrote, from the three string headers.
	 * @param headers the record's headers
	 * @return the provenance, or {@code null} if the headers carry none or a malformed one
	 */
	public static @Nullable Provenance read(Headers headers) {
		Header header = headers.lastHeader(HEADER);
		return (header != null) ? decode(header.value()) : readLegacy(headers);
	}

	/** The value of a {@value #HEADER}, or null if it is not a version 1 value. */
	private static @Nullable Provenance decode(byte @Nullable [] value) {
		if (value == null || value.length < 2 || value[0] != VERSION) {
			return null;
		}
		try {
			ByteBuffer buffer = ByteBuffer.wrap(value);
			buffer.get();
			int flags = buffer.get();
			String origin = ((flags & ORIGIN_IS_SOURCE) != 0) ? null : readString(buffer);
			String sourceCluster = readString(buffer);
			String topic = readString(buffer);
			int partition = ByteUtils.readVarint(buffer);
			Uuid topicId = ((flags & HAS_TOPIC_ID) != 0) ? new Uuid(buffer.getLong(), buffer.getLong()) : null;
			long offset = ByteUtils.readVarlong(buffer);
			if (buffer.hasRemaining() || partition < 0 || offset < 0) {
				return null;
			}
			return new Provenance((origin != null) ? origin : sourceCluster, sourceCluster, topic, partition, offset,
					topicId);
		}
		catch (BufferUnderflowException | IllegalArgumentException ex) {
			return null;
		}
	}

	private static String readString(ByteBuffer buffer) {
		int length = ByteUtils.readVarint(buffer);
		if (length < 0 || length > buffer.remaining()) {
			throw new BufferUnderflowException();
		}
		String value = new String(buffer.array(), buffer.position(), length, StandardCharsets.UTF_8);
		buffer.position(buffer.position() + length);
		return value;
	}

	private static @Nullable Provenance readLegacy(Headers headers) {
		Header source = headers.lastHeader(SOURCE_HEADER);
		String origin = origin(headers);
		if (source == null || source.value() == null || origin == null) {
			return null;
		}
		String[] parts = new String(source.value(), StandardCharsets.UTF_8).split("/");
		if (parts.length != 4) {
			return null;
		}
		try {
			return new Provenance(origin, parts[0], parts[1], Integer.parseInt(parts[2]), Long.parseLong(parts[3]),
					legacyTopicId(headers));
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

	/** The legacy topic id header's value, or null if absent or malformed (an unknown incarnation). */
	private static @Nullable Uuid legacyTopicId(Headers headers) {
		Header header = headers.lastHeader(TOPIC_ID_HEADER);
		if (header == null || header.value() == null) {
			return null;
		}
		try {
			return Uuid.fromString(new String(header.value(), StandardCharsets.UTF_8));
		}
		catch (IllegalArgumentException ex) {
			return null;
		}
	}

	/**
	 * Replaces the provenance headers of a record being copied (the legacy ones included) by this
	 * provenance's {@value #HEADER}.
	 * @param headers the copy's headers (mutable)
	 */
	public void writeTo(Headers headers) {
		headers.remove(HEADER);
		headers.remove(ORIGIN_HEADER);
		headers.remove(SOURCE_HEADER);
		headers.remove(TOPIC_ID_HEADER);
		headers.add(HEADER, value(prefix(this.origin, this.sourceCluster, this.topic, this.partition, this.topicId),
				this.offset));
	}

	/**
	 * Returns the start of the {@value #HEADER} value of every copy of one source partition and
	 * origin: everything but the offset.
	 * @param origin the origin to write (the record's own, or the source cluster)
	 * @param sourceCluster the source cluster's alias
	 * @param topic the source topic
	 * @param partition the source partition
	 * @param topicId the source topic's id, or null if unknown
	 * @return a new array; shared by the copies of the partition, never changed
	 */
	static byte[] prefix(String origin, String sourceCluster, String topic, int partition, @Nullable Uuid topicId) {
		boolean originIsSource = origin.equals(sourceCluster);
		byte[] originBytes = originIsSource ? new byte[0] : origin.getBytes(StandardCharsets.UTF_8);
		byte[] sourceBytes = sourceCluster.getBytes(StandardCharsets.UTF_8);
		byte[] topicBytes = topic.getBytes(StandardCharsets.UTF_8);
		int size = 2 + (originIsSource ? 0 : ByteUtils.sizeOfVarint(originBytes.length) + originBytes.length)
				+ ByteUtils.sizeOfVarint(sourceBytes.length) + sourceBytes.length
				+ ByteUtils.sizeOfVarint(topicBytes.length) + topicBytes.length + ByteUtils.sizeOfVarint(partition)
				+ ((topicId != null) ? 16 : 0);
		ByteBuffer buffer = ByteBuffer.allocate(size);
		buffer.put(VERSION);
		buffer.put((byte) (((topicId != null) ? HAS_TOPIC_ID : 0) | (originIsSource ? ORIGIN_IS_SOURCE : 0)));
		if (!originIsSource) {
			writeString(originBytes, buffer);
		}
		writeString(sourceBytes, buffer);
		writeString(topicBytes, buffer);
		ByteUtils.writeVarint(partition, buffer);
		if (topicId != null) {
			buffer.putLong(topicId.getMostSignificantBits());
			buffer.putLong(topicId.getLeastSignificantBits());
		}
		return buffer.array();
	}

	private static void writeString(byte[] value, ByteBuffer buffer) {
		ByteUtils.writeVarint(value.length, buffer);
		buffer.put(value);
	}

	/**
	 * Returns the {@value #HEADER} value of one copy: the partition's {@link #prefix} and the
	 * offset, in one array of the exact size.
	 */
	static byte[] value(byte[] prefix, long offset) {
		byte[] value = Arrays.copyOf(prefix, prefix.length + ByteUtils.sizeOfVarlong(offset));
		ByteUtils.writeVarlong(offset, ByteBuffer.wrap(value, prefix.length, value.length - prefix.length));
		return value;
	}

	/**
	 * Returns the headers of a copy, what {@link #writeTo} makes of the record's own headers:
	 * them without any provenance header (legacy ones included), in their order, then
	 * {@value #HEADER}. Built per copied record, so in one array of the exact size (the record's
	 * headers are counted, then copied): no list grows and nothing is copied again before the
	 * producer's record takes them ({@code new ProducerRecord(..., Arrays.asList(headers))} adds
	 * them to its own headers once).
	 * @param original the source record's headers (not changed)
	 * @param prefix the {@link #prefix} of the record's partition and origin
	 * @param offset the record's source offset
	 * @return a new array, owned by the caller
	 */
	static Header[] forCopy(Headers original, byte[] prefix, long offset) {
		int own = 0;
		for (Header header : original) {
			if (!isProvenance(header)) {
				own++;
			}
		}
		Header[] copy = new Header[own + 1];
		int next = 0;
		if (own > 0) {
			for (Header header : original) {
				if (!isProvenance(header)) {
					copy[next++] = header;
				}
			}
		}
		copy[next] = new RecordHeader(HEADER, value(prefix, offset));
		return copy;
	}

	private static boolean isProvenance(Header header) {
		String key = header.key();
		return key.equals(HEADER) || key.equals(ORIGIN_HEADER) || key.equals(SOURCE_HEADER)
				|| key.equals(TOPIC_ID_HEADER);
	}

}
