/**
 * Database participants in a Spring Boot application: {@code tandem.datasources.*} properties
 * that build {@code CrossClusterDataSource} beans, and the Spring transaction manager that lets
 * {@code @Transactional} code and Spring Data JDBC repositories work inside cross-cluster
 * transactions.
 */
@NullMarked
package dev.tandem.autoconfigure.jdbc;

import org.jspecify.annotations.NullMarked;
