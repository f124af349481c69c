/**
 * JPA in cross-cluster transactions: one Hibernate session per transaction on the database's
 * enlisted XA-branch connection, bound where Spring's shared {@code EntityManager} looks, flushed
 * before phase one; and the Spring transaction manager that lets {@code @Transactional} JPA code
 * and Spring Data JPA repositories work inside and outside cross-cluster transactions.
 */
@NullMarked
package dev.tandem.autoconfigure.jpa;

import org.jspecify.annotations.NullMarked;
