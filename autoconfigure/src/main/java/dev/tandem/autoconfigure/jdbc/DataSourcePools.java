package dev.tandem.autoconfigure.jdbc;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import javax.sql.DataSource;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;

/**
 * The pools that {@code tandem.datasources.*} built for work outside cross-cluster transactions;
 * closed when the context closes (after the data source beans, which depend on this bean).
 * Thread-safe.
 */
final class DataSourcePools implements DisposableBean {

	private static final Logger logger = LoggerFactory.getLogger(DataSourcePools.class);

	private final List<DataSource> pools = new CopyOnWriteArrayList<>();

	void add(DataSource pool) {
		this.pools.add(pool);
	}

	@Override
	public void destroy() {
		for (DataSource pool : this.pools) {
			if (pool instanceof AutoCloseable closeable) {
				try {
					closeable.close();
				}
				catch (Exception ex) {
					logger.debug("Closing connection pool {}: {}", pool, ex.toString());
				}
			}
		}
		this.pools.clear();
	}

}
