package dev.tandem.coordinator.server;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicLong;

import dev.tandem.coordinator.state.DecisionCodecException;
import dev.tandem.coordinator.state.DecisionTable;
import dev.tandem.coordinator.state.SnapshotCodec;
import org.apache.ratis.io.MD5Hash;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.util.MD5FileUtil;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The snapshot files of one {@link DecisionStateMachine}: one {@link SnapshotCodec} file per
 * term-index in a {@link SimpleStateMachineStorage}, written to a temporary file, forced to disk
 * and moved into place, with the MD5 file Ratis checks when it installs a snapshot on a follower.
 * <p>
 * Knows files, not the table's lock: the state machine holds its read lock while a snapshot is
 * written and its write lock while a read one replaces the table.
 * <p>
 * Thread-safe: {@link #write} runs on Ratis' state machine updater thread, the other methods
 * may run on any thread.
 *
 * @since 0.1.0
 */
final class DecisionSnapshots {

	private static final Logger logger = LoggerFactory.getLogger(DecisionSnapshots.class);

	private static final int BUFFER_BYTES = 64 * 1024;

	private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();

	/**
	 * The latest snapshot, kept here because {@link SimpleStateMachineStorage} lists its
	 * directory on every call while there is none, and Ratis asks on every append to every
	 * follower.
	 */
	private volatile @Nullable SingleFileSnapshotInfo latest;

	private volatile long loadedIndex = RaftLog.INVALID_LOG_INDEX;

	private volatile int loadedRecords;

	private final AtomicLong failures = new AtomicLong();

	/**
	 * Opens the snapshot directory of a Raft storage and finds its latest snapshot.
	 * @param raftStorage the peer's storage
	 * @throws IOException if the directory cannot be read
	 */
	void init(RaftStorage raftStorage) throws IOException {
		this.storage.init(raftStorage);
		this.latest = this.storage.getLatestSnapshot();
	}

	/**
	 * Lists the snapshot directory again (a snapshot was installed from the leader).
	 * @throws IOException if the directory cannot be read
	 */
	void rescan() throws IOException {
		this.latest = this.storage.loadLatestSnapshot();
	}

	/**
	 * Returns the latest snapshot, or {@code null} when there is none.
	 * @return the snapshot
	 */
	@Nullable SnapshotInfo latest() {
		return this.latest;
	}

	/**
	 * Returns the storage Ratis installs snapshots into.
	 * @return the storage
	 */
	StateMachineStorage storage() {
		return this.storage;
	}

	/**
	 * Writes a snapshot of a table as of a log position and makes it the latest one.
	 * @param table the table, which must not change meanwhile (the caller holds its read lock)
	 * @param last the term-index of the last entry applied to the table
	 * @throws IOException if writing fails; any other failure is counted ({@link #failures()})
	 *     and thrown as an {@link IOException}, the only kind Ratis' updater does not retry at once
	 */
	void write(DecisionTable table, TermIndex last) throws IOException {
		try {
			File snapshotFile = this.storage.getSnapshotFile(last.getTerm(), last.getIndex());
			Path target = snapshotFile.toPath();
			Path temporary = target.resolveSibling(target.getFileName() + ".writing");
			try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(temporary), BUFFER_BYTES)) {
				SnapshotCodec.writeSnapshot(table.records(), table.leases(), out);
			}
			forceToDisk(temporary);
			Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
			MD5Hash md5 = MD5FileUtil.computeAndSaveMd5ForFile(snapshotFile);
			SingleFileSnapshotInfo taken = new SingleFileSnapshotInfo(new FileInfo(target, md5), last);
			this.storage.updateLatestSnapshot(taken);
			this.latest = taken;
			logger.info("Took snapshot {} with {} records at {}", target.getFileName(), table.counts().total(), last);
		}
		catch (RuntimeException ex) {
			// Ratis' updater loops on anything but an IOException here (it retries the snapshot)
			this.failures.incrementAndGet();
			throw new IOException("Snapshot of the decision table failed: " + ex, ex);
		}
	}

	/**
	 * Reads the latest snapshot, checking its MD5 file when there is one.
	 * @return its content and position, or {@code null} when there is no snapshot
	 * @throws IOException if the file is missing, unreadable or corrupt
	 */
	@Nullable Loaded readLatest() throws IOException {
		SingleFileSnapshotInfo snapshot = this.latest;
		if (snapshot == null) {
			logger.debug("No snapshot to load: starting from an empty decision table");
			return null;
		}
		Path path = snapshot.getFile().getPath();
		if (!Files.exists(path)) {
			throw new IOException("Snapshot file " + path + " of " + snapshot.getTermIndex() + " is missing");
		}
		MD5Hash md5 = snapshot.getFile().getFileDigest();
		if (md5 != null) {
			MD5FileUtil.verifySavedMD5(path.toFile(), md5);
		}
		TermIndex last = SimpleStateMachineStorage.getTermIndexFromSnapshotFile(path.toFile());
		try (InputStream in = new BufferedInputStream(Files.newInputStream(path), BUFFER_BYTES)) {
			return new Loaded(path, last, SnapshotCodec.readFullSnapshot(in));
		}
		catch (DecisionCodecException ex) {
			throw new IOException("Corrupt snapshot " + path + ": " + ex.getMessage(), ex);
		}
	}

	/**
	 * Records that a snapshot read by {@link #readLatest()} now is the table's content.
	 * @param loaded the snapshot
	 */
	void loaded(Loaded loaded) {
		this.loadedIndex = loaded.last().getIndex();
		this.loadedRecords = loaded.content().records().size();
		logger.info("Loaded snapshot {} with {} records and {} leases", loaded.path().getFileName(),
				loaded.content().records().size(), loaded.content().leases().size());
	}

	/**
	 * Returns the log index of the snapshot last loaded, or {@code -1} if none was.
	 * @return the log index, or {@code -1}
	 */
	long loadedIndex() {
		return this.loadedIndex;
	}

	/**
	 * Returns the number of records in the snapshot last loaded, or 0.
	 * @return the count, zero or more
	 */
	int loadedRecords() {
		return this.loadedRecords;
	}

	/**
	 * Returns the number of snapshots that failed to be written.
	 * @return the count, zero or more
	 */
	long failures() {
		return this.failures.get();
	}

	private static void forceToDisk(Path file) throws IOException {
		try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
			channel.force(true);
		}
	}

	/**
	 * A snapshot read from disk.
	 *
	 * @param path its file
	 * @param last the term-index of the last entry it holds
	 * @param content its records and leases
	 */
	record Loaded(Path path, TermIndex last, SnapshotCodec.Snapshot content) {

	}

}
