package dev.tandem.bench.database;

import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import javax.sql.XADataSource;

import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.producer.ProducerRecord;

import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.DecisionLog;
import dev.tandem.transaction.ProtocolHook;
import dev.tandem.transaction.ProtocolStep;

/**
 * Tandem: one cross-cluster transaction with the database as a participant (XA branch prepared in
 * phase one, the decision in the decision log, then the commits), {@code slots} slots. An
 * observing {@link ProtocolHook} (it injects no faults, so the participants commit in parallel as
 * in production) times the phases of each commit: prepare (both clusters flushed on the manager's
 * executor while the database's marker row and XA prepare run on the worker), decision, commits
 * (both clusters in parallel, the database's XA commit on the worker meanwhile).
 */
final class TandemContender implements Contender {

	static final String NAME = "tandem";

	private static final String DATABASE = "orders";

	private final CrossClusterTransactionManager manager;

	private final String insert;

	private final Map<String, Histogram> phases = new LinkedHashMap<>();

	/** Per transaction id: when it reached BEFORE_PREPARE, AFTER_PREPARE and AFTER_DECISION. */
	private final Map<String, long[]> steps = new ConcurrentHashMap<>();

	TandemContender(Map<String, Map<String, Object>> clusters, XADataSource dataSource, DecisionLog decisionLog,
			int slots) {
		for (String phase : new String[] { "prepare", "decision", "commits" }) {
			this.phases.put(phase, new Histogram(3));
		}
		var builder = CrossClusterTransactionManager.builder()
			.idPrefix("dbbench")
			.instanceId(NAME)
			.slots(slots)
			.decisionLog(decisionLog)
			.protocolHook(new StepTimer())
			.database(DATABASE, dataSource);
		clusters.forEach(builder::cluster);
		this.manager = builder.build();
		this.manager.start();
		this.insert = "INSERT INTO " + table() + " (id, payload) VALUES (?, ?)";
	}

	@Override
	public String name() {
		return NAME;
	}

	@Override
	public void execute(int worker, String id, byte[] payload, Runnable committing) throws Exception {
		byte[] key = id.getBytes(StandardCharsets.UTF_8);
		try (CrossClusterTransaction txn = this.manager.begin()) {
			try (PreparedStatement statement = txn.database(DATABASE).prepareStatement(this.insert)) {
				statement.setString(1, id);
				statement.setBytes(2, payload);
				statement.executeUpdate();
			}
			txn.send(DatabaseBench.EAST, new ProducerRecord<>(topic(), key, payload));
			txn.send(DatabaseBench.WEST, new ProducerRecord<>(topic(), key, payload));
			committing.run();
			txn.commit();
		}
	}

	@Override
	public Map<String, Histogram> phases() {
		return this.phases;
	}

	@Override
	public void close() {
		this.manager.close();
	}

	private final class StepTimer implements ProtocolHook {

		@Override
		public void reached(String transactionId, ProtocolStep step) {
			long now = System.nanoTime();
			switch (step) {
				case BEFORE_PREPARE -> TandemContender.this.steps.put(transactionId, new long[] { now, 0, 0 });
				case AFTER_PREPARE -> at(transactionId, 1, now);
				case AFTER_DECISION -> at(transactionId, 2, now);
				case AFTER_COMMIT -> {
					long[] times = TandemContender.this.steps.remove(transactionId);
					if (times != null && times[1] > 0 && times[2] > 0) {
						synchronized (TandemContender.this.phases) {
							TandemContender.this.phases.get("prepare").recordValue((times[1] - times[0]) / 1000);
							TandemContender.this.phases.get("decision").recordValue((times[2] - times[1]) / 1000);
							TandemContender.this.phases.get("commits").recordValue((now - times[2]) / 1000);
						}
					}
				}
				default -> {
				}
			}
		}

		private void at(String transactionId, int index, long now) {
			long[] times = TandemContender.this.steps.get(transactionId);
			if (times != null) {
				times[index] = now;
			}
		}

		@Override
		public boolean injectsFaults() {
			return false;
		}

	}

}
