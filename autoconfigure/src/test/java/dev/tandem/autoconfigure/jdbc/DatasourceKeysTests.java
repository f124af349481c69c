package dev.tandem.autoconfigure.jdbc;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;

import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;

import static org.assertj.core.api.Assertions.assertThat;

class DatasourceKeysTests {

	@Test
	void aMisspeltKeyOfAnEntryNamesThePropertyItMeant() {
		assertThat(DatasourceKeys.didYouMean("usrename")).isEqualTo("username");
		assertThat(DatasourceKeys.didYouMean("primay")).isEqualTo("primary");
		assertThat(DatasourceKeys.didYouMean("xa-datasource-class-name")).isEqualTo("xa-data-source-class-name");
		// a misspelt map keeps the key under it
		assertThat(DatasourceKeys.didYouMean("xa-propertis.socket-timeout")).isEqualTo("xa-properties.socket-timeout");
		assertThat(DatasourceKeys.didYouMean("pol.maximum-pool-size")).isEqualTo("pool.maximum-pool-size");
		assertThat(DatasourceKeys.didYouMean("schema")).isNull();
	}

	@Test
	void theFailureNamesTheFirstKeyAndEveryRename() {
		TandemConfigurationException failure = DatasourceKeys.unknownKeys(List.of(
				ConfigurationPropertyName.of("tandem.datasources.orders.schema"),
				ConfigurationPropertyName.of("tandem.datasources.orders.pasword")));
		assertThat(failure.getProperty()).isEqualTo("tandem.datasources.orders.pasword");
		assertThat(failure.getAction()).contains("Remove or correct tandem.datasources.orders.pasword, "
				+ "tandem.datasources.orders.schema (did you mean tandem.datasources.orders.pasword -> "
				+ "tandem.datasources.orders.password?)");
	}

}
