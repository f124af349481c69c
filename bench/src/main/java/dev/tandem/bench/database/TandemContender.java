package dev.tandem.bench.database;

import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.util.Map;

import javax.sql.XADataSource;

import org.apache.kafka.clients.producer.ProducerRecord;

import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.DecisionLog;

/**
 * Tandem: one cross-cluster transaction with the database as a participant (XA branch prepared in
 * phase one, the decision in the decision log, then the commits); one slot per worker.
 */
final class TandemContender implements Contender {

	static final String NAME = "tandem";

	private static final String DATABASE = "orders";

	private final CrossClusterTransactionManager manager;

	private final String insert;

	TandemContender(Map<String, Map<String, Object>> clusters, XADataSource dataSource, DecisionLog decisionLog,
			int workers) {
		var builder = CrossClusterTransactionManager.builder()
			.idPrefix("dbbench")
			.instanceId(NAME)
			.slots(workers)
			.decisionLog(decisionLog)
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
	public void close() {
		this.manager.close();
	}

}
