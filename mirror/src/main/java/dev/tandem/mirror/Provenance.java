package dev.tandem.mirror;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.jspecify.annotations.Nullable;

/**
 * Where a mirrored record comes from, carried in headers of every record the mirror writes:
 * {@value #ORIGIN_HEADER} (the alias of the cluster the record was first produced to, kept across
 * hops, so that a mirror never copies a record back to its origin), {@value #SOURCE_HEADER}
 * ({@code <source-alias>/<topic>/<partition>/<offset>} of this hop, from which a restarted mirror
 * rebuilds its source-to-target offset mapping) and {@value #TOPIC_ID_HEADER} (the source topic's
 * Kafka topic id, its incarnation: a topic deleted and created again under the same name gets a new
 * id and restarts its offsets at 0, so only copies of the same incarnation may map its offsets).
 * Topic names cannot contain {@code /}.
 * <p>
 * Records mirrored before the topic id was written carry no {@value #TOPIC_ID_HEADER}: their
 * {@link #topicId()} is null, an unknown incarnation, and translation never uses them
 * ({@code MappingRebuild}).
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

	/** Header with the source topic's id ({@link Uuid#toString()}). */
	public static final String TOPIC_ID_HEADER = "tandem-mirror-source-topic-id";

	/** Header with the origin cluster's alias. */
	public static final String ORIGIN_HEADER = "tandem-mirror-origin";

	/** Header with {@code <source-alias>/<topic>/<partition>/<offset>}. */
	public static final String SOURCE_HEADER = "tandem-mirror-source";

	/**
	 * Returns the origin alias in a record's headers.
	 * @param headers the record's headers
	 * @return the alias, or {@code null} if the record was not mirrored
	 */
	public static @Nullable String origin(Headers headers) {
		Header header = headers.lastHeader(ORIGIN_HEADER);
		return (header != null && header.value() != null) ? new String(header.value(), StandardCharsets.UTF_8) : null;
	}

	/**
	 * Reads the provenance of a mirrored record.
	 * @param headers the record's headers
	 * @return the provenance, or {@code null} if the headers carry none or a malformed one
	 */
	public static @Nullable Provenance read(Headers headers) {
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
					topicId(headers));
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

	/** The topic id header's value, or null if absent or malformed (an unknown incarnation). */
	private static @Nullable Uuid topicId(Headers headers) {
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
	 * Replaces the provenance headers of a record being copied: the origin is kept if the record
	 * already has one (it was mirrored before), else it is the source cluster.
	 * @param headers the copy's headers (mutable)
	 */
	public void writeTo(Headers headers) {
		headers.remove(ORIGIN_HEADER);
		headers.remove(SOURCE_HEADER);
		headers.remove(TOPIC_ID_HEADER);
		headers.add(ORIGIN_HEADER, this.origin.getBytes(StandardCharsets.UTF_8));
		headers.add(SOURCE_HEADER, sourceValue(sourcePrefix(this.sourceCluster, this.topic, this.partition), this.offset));
		Header topicId = topicIdHeader(this.topicId);
		if (topicId != null) {
			headers.add(topicId);
		}
	}

	/**
	 * Returns the topic id header of the copies of one source topic incarnation.
	 * @param topicId the source topic's id, or null if unknown
	 * @return the header (its value is shared: never change it), or null for an unknown id
	 */
	static @Nullable Header topicIdHeader(@Nullable Uuid topicId) {
		return (topicId != null) ? new RecordHeader(TOPIC_ID_HEADER, topicId.toString().getBytes(StandardCharsets.UTF_8))
				: null;
	}

	/**
	 * Returns the origin header of a record first produced to a cluster.
	 * @param origin the cluster's alias
	 * @return the header (its value is shared: never change it)
	 */
	static Header originHeader(String origin) {
		return new RecordHeader(ORIGIN_HEADER, origin.getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * Returns the start of the {@value #SOURCE_HEADER} value of every record of one source
	 * partition, {@code <source-alias>/<topic>/<partition>/}, as UTF-8.
	 */
	static byte[] sourcePrefix(String sourceCluster, String topic, int partition) {
		return (sourceCluster + "/" + topic + "/" + partition + "/").getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * Returns the headers of a copy, what {@link #writeTo} makes of the record's own headers:
	 * them without any provenance header, in their order, then the origin, then the source header
	 * (its value the partition's {@link #sourcePrefix} and the offset), then the topic id. Built
	 * per copied record, so in one array of the exact size (the record's headers are counted, then
	 * copied): no list grows and nothing is copied again before the producer's record takes them
	 * ({@code new ProducerRecord(..., Arrays.asList(headers))} adds them to its own headers once).
	 * @param original the source record's headers (not changed)
	 * @param origin the origin header to write (the record's own, or the source cluster's)
	 * @param sourcePrefix the partition's {@link #sourcePrefix}
	 * @param offset the record's source offset
	 * @param topicId the {@link #topicIdHeader} of the source topic, or null if its id is unknown
	 * @return a new array, owned by the caller
	 */
	static Header[] forCopy(Headers original, Header origin, byte[] sourcePrefix, long offset, @Nullable Header topicId) {
		int own = 0;
		for (Header header : original) {
			if (!isProvenance(header)) {
				own++;
			}
		}
		Header[] copy = new Header[own + ((topicId != null) ? 3 : 2)];
		int next = 0;
		if (own > 0) {
			for (Header header : original) {
				if (!isProvenance(header)) {
					copy[next++] = header;
				}
			}
		}
		copy[next++] = origin;
		copy[next++] = new RecordHeader(SOURCE_HEADER, sourceValue(sourcePrefix, offset));
		if (topicId != null) {
			copy[next] = topicId;
		}
		return copy;
	}

	private static boolean isProvenance(Header header) {
		String key = header.key();
		return key.equals(ORIGIN_HEADER) || key.equals(SOURCE_HEADER) || key.equals(TOPIC_ID_HEADER);
	}

	/**
	 * Returns the prefix followed by the offset's decimal digits (as {@link Long#toString(long)}
	 * writes them), in one array: built per copied record, so the digits are written in place
	 * rather than through a string and a second array.
	 */
	static byte[] sourceValue(byte[] prefix, long offset) {
		if (offset < 0) {
			byte[] digits = Long.toString(offset).getBytes(StandardCharsets.US_ASCII);
			byte[] value = Arrays.copyOf(prefix, prefix.length + digits.length);
			System.arraycopy(digits, 0, value, prefix.length, digits.length);
			return value;
		}
		int length = 1;
		for (long rest = offset / 10; rest > 0; rest /= 10) {
			length++;
		}
		byte[] value = Arrays.copyOf(prefix, prefix.length + length);
		long rest = offset;
		for (int i = value.length - 1; i >= prefix.length; i--) {
			value[i] = (byte) ('0' + (rest % 10));
			rest /= 10;
		}
		return value;
	}

}
