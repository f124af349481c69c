package dev.tandem.transaction;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.UUID;

import javax.transaction.xa.Xid;

import org.jspecify.annotations.Nullable;

/**
 * The XA transaction id of one database branch of a Tandem transaction, built so that recovery
 * finds the branches of an owner among everything {@code XAResource.recover()} lists, and knows
 * their transaction id without any other record:
 * <ul>
 * <li>format id {@link #FORMAT_ID} ({@code 0x54414E44}, "TAND"): every other Xid is left alone;</li>
 * <li>global transaction id: the 16 bytes of the UUID that ends the Tandem transaction id
 * ({@code <owner>-<uuid>}, {@link TransactionIds});</li>
 * <li>branch qualifier: the first 16 bytes of SHA-256 over {@code <owner>\n<database name>}: the
 * owner and the database, in a fixed size whatever their length (XA allows 64 bytes to each
 * part, an owner id may be longer). Recovery of an owner compares it with the hash of that
 * owner and the database it scans; the transaction id is then {@code <owner>-<uuid>}.</li>
 * </ul>
 * Text form (in decisions): {@code <format id>:<global id in hex>:<branch qualifier in hex>}.
 * Immutable and thread-safe.
 */
final class DatabaseXid implements Xid {

	/** Tandem's XA format id, "TAND" in ASCII. */
	static final int FORMAT_ID = 0x54414E44;

	private static final int UUID_BYTES = 16;

	private static final int QUALIFIER_BYTES = 16;

	private static final int UUID_TEXT = 36;

	private final byte[] globalId;

	private final byte[] qualifier;

	private DatabaseXid(byte[] globalId, byte[] qualifier) {
		this.globalId = globalId;
		this.qualifier = qualifier;
	}

	/**
	 * Returns the Xid of one database's branch of a transaction.
	 * @param transactionId a transaction id of {@link TransactionIds#newId}
	 * @param database the database's configured name
	 * @throws IllegalArgumentException if the transaction id does not end with a UUID
	 */
	static DatabaseXid of(String transactionId, String database) {
		String owner = TransactionIds.ownerOf(transactionId);
		if (owner == null) {
			throw new IllegalArgumentException("Transaction id " + transactionId + " does not end with a UUID");
		}
		UUID uuid = UUID.fromString(transactionId.substring(transactionId.length() - UUID_TEXT));
		ByteBuffer global = ByteBuffer.allocate(UUID_BYTES);
		global.putLong(uuid.getMostSignificantBits()).putLong(uuid.getLeastSignificantBits());
		return new DatabaseXid(global.array(), qualifier(owner, database));
	}

	/**
	 * Returns the transaction id of a listed Xid if it is a branch of this owner on this database.
	 * @param xid an Xid listed by {@code XAResource.recover()}
	 * @return {@code <owner>-<uuid>}, or null for any other Xid
	 */
	static @Nullable String transactionIdIfOf(Xid xid, String owner, String database) {
		if (xid.getFormatId() != FORMAT_ID || xid.getGlobalTransactionId().length != UUID_BYTES
				|| !Arrays.equals(xid.getBranchQualifier(), qualifier(owner, database))) {
			return null;
		}
		ByteBuffer global = ByteBuffer.wrap(xid.getGlobalTransactionId());
		return owner + "-" + new UUID(global.getLong(), global.getLong());
	}

	/**
	 * Parses the text form.
	 * @throws IllegalArgumentException if the text is not a Tandem Xid
	 */
	static DatabaseXid parse(String text) {
		String[] parts = text.split(":", -1);
		if (parts.length != 3 || !Integer.toString(FORMAT_ID).equals(parts[0])) {
			throw new IllegalArgumentException("Not a Tandem XA id: " + text);
		}
		return new DatabaseXid(HexFormat.of().parseHex(parts[1]), HexFormat.of().parseHex(parts[2]));
	}

	private static byte[] qualifier(String owner, String database) {
		try {
			byte[] hash = MessageDigest.getInstance("SHA-256")
				.digest((owner + "\n" + database).getBytes(StandardCharsets.UTF_8));
			return Arrays.copyOf(hash, QUALIFIER_BYTES);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("Every Java platform has SHA-256", ex);
		}
	}

	@Override
	public int getFormatId() {
		return FORMAT_ID;
	}

	@Override
	public byte[] getGlobalTransactionId() {
		return this.globalId.clone();
	}

	@Override
	public byte[] getBranchQualifier() {
		return this.qualifier.clone();
	}

	/** Whether another Xid (a driver's own class, listed by recover) names the same branch. */
	boolean sameAs(Xid other) {
		return other.getFormatId() == FORMAT_ID && Arrays.equals(other.getGlobalTransactionId(), this.globalId)
				&& Arrays.equals(other.getBranchQualifier(), this.qualifier);
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof DatabaseXid xid && sameAs(xid);
	}

	@Override
	public int hashCode() {
		return Arrays.hashCode(this.globalId) * 31 + Arrays.hashCode(this.qualifier);
	}

	/** Returns the text form, {@code <format id>:<global id in hex>:<branch qualifier in hex>}. */
	@Override
	public String toString() {
		return FORMAT_ID + ":" + HexFormat.of().formatHex(this.globalId) + ":" + HexFormat.of().formatHex(this.qualifier);
	}

}
