package dev.tandem.bench.database;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.HdrHistogram.Histogram;

import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.transaction.KafkaTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.DefaultTransactionDefinition;

/**
 * Best-effort one-phase commit, what Spring users write today: a {@link KafkaTransactionManager}
 * per cluster and a {@link DataSourceTransactionManager}, begun in that order and committed in the
 * reverse one (as Spring Data's deprecated {@code ChainedTransactionManager} does): the database
 * first, then west, then east. A crash between two commits leaves one without the other. Each
 * worker owns one database connection (as each Tandem slot owns one), the Kafka producers are the
 * factories' pooled transactional producers.
 */
final class BestEffortContender implements Contender {

	static final String NAME = "best-effort";

	private final List<DefaultKafkaProducerFactory<byte[], byte[]>> factories = new ArrayList<>();

	private final KafkaTransactionManager<byte[], byte[]> east;

	private final KafkaTransactionManager<byte[], byte[]> west;

	private final KafkaTemplate<byte[], byte[]> eastTemplate;

	private final KafkaTemplate<byte[], byte[]> westTemplate;

	private final List<SingleConnectionDataSource> dataSources = new ArrayList<>();

	private final List<DataSourceTransactionManager> databases = new ArrayList<>();

	private final List<JdbcTemplate> jdbc = new ArrayList<>();

	private final String insert;

	private final Map<String, Histogram> phases = new LinkedHashMap<>();

	BestEffortContender(Map<String, Map<String, Object>> clusters, String jdbcUrl, int workers) {
		DefaultKafkaProducerFactory<byte[], byte[]> eastFactory = factory(clusters.get(DatabaseBench.EAST), "east");
		DefaultKafkaProducerFactory<byte[], byte[]> westFactory = factory(clusters.get(DatabaseBench.WEST), "west");
		this.east = new KafkaTransactionManager<>(eastFactory);
		this.west = new KafkaTransactionManager<>(westFactory);
		this.eastTemplate = new KafkaTemplate<>(eastFactory);
		this.westTemplate = new KafkaTemplate<>(westFactory);
		for (int worker = 0; worker < workers; worker++) {
			SingleConnectionDataSource dataSource = new SingleConnectionDataSource();
			dataSource.setUrl(jdbcUrl);
			dataSource.setSuppressClose(true);
			dataSource.setAutoCommit(true);
			this.dataSources.add(dataSource);
			this.databases.add(new DataSourceTransactionManager(dataSource));
			this.jdbc.add(new JdbcTemplate(dataSource));
		}
		this.insert = "INSERT INTO " + table() + " (id, payload) VALUES (?, ?)";
		for (String phase : new String[] { "database commit", "west commit", "east commit" }) {
			this.phases.put(phase, new Histogram(3));
		}
	}

	private DefaultKafkaProducerFactory<byte[], byte[]> factory(Map<String, Object> config, String cluster) {
		DefaultKafkaProducerFactory<byte[], byte[]> factory = new DefaultKafkaProducerFactory<>(new HashMap<>(config),
				new ByteArraySerializer(), new ByteArraySerializer());
		factory.setTransactionIdPrefix("dbbench-best-effort-" + cluster + "-");
		this.factories.add(factory);
		return factory;
	}

	@Override
	public String name() {
		return NAME;
	}

	@Override
	public void execute(int worker, String id, byte[] payload, Runnable committing) {
		DefaultTransactionDefinition definition = new DefaultTransactionDefinition();
		PlatformTransactionManager database = this.databases.get(worker);
		byte[] key = id.getBytes(StandardCharsets.UTF_8);
		TransactionStatus eastStatus = this.east.getTransaction(definition);
		TransactionStatus westStatus = this.west.getTransaction(definition);
		TransactionStatus databaseStatus = database.getTransaction(definition);
		try {
			this.jdbc.get(worker).update(this.insert, id, payload);
			this.eastTemplate.send(topic(), key, payload);
			this.westTemplate.send(topic(), key, payload);
		}
		catch (RuntimeException ex) {
			database.rollback(databaseStatus);
			this.west.rollback(westStatus);
			this.east.rollback(eastStatus);
			throw ex;
		}
		committing.run();
		long start = System.nanoTime();
		try {
			database.commit(databaseStatus);
		}
		catch (RuntimeException ex) {
			this.west.rollback(westStatus);
			this.east.rollback(eastStatus);
			throw ex;
		}
		long databaseCommitted = System.nanoTime();
		try {
			this.west.commit(westStatus);
		}
		catch (RuntimeException ex) {
			this.east.rollback(eastStatus);
			throw ex;
		}
		long westCommitted = System.nanoTime();
		this.east.commit(eastStatus);
		long end = System.nanoTime();
		synchronized (this.phases) {
			this.phases.get("database commit").recordValue((databaseCommitted - start) / 1000);
			this.phases.get("west commit").recordValue((westCommitted - databaseCommitted) / 1000);
			this.phases.get("east commit").recordValue((end - westCommitted) / 1000);
		}
	}

	@Override
	public Map<String, Histogram> phases() {
		return this.phases;
	}

	@Override
	public void close() {
		this.factories.forEach(DefaultKafkaProducerFactory::destroy);
		this.dataSources.forEach(SingleConnectionDataSource::destroy);
	}

}
