package dev.tandem.autoconfigure.jdbc;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class DataSourceFactoryNamesTests {

	@Test
	void beanPropertyNamesTurnIntoTheKebabCaseKeysUsersWrite() {
		assertThat(DataSourceFactory.kebabCase("socketTimeout")).isEqualTo("socket-timeout");
		assertThat(DataSourceFactory.kebabCase("maximumPoolSize")).isEqualTo("maximum-pool-size");
		assertThat(DataSourceFactory.kebabCase("URL")).isEqualTo("url");
		assertThat(DataSourceFactory.kebabCase(DataSourceFactory.camelCase("connect-timeout"))).isEqualTo("connect-timeout");
	}

}
