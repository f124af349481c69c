/**
 * Database benchmark (issue 28): a row inserted and a record sent to two clusters as one unit of
 * work, by Tandem's two-phase commit with a database participant, by Spring's chained
 * transaction managers (best-effort one-phase) and by a transactional outbox with a polling
 * relay, in interleaved rounds of one run.
 */
@NullMarked
package dev.tandem.bench.database;

import org.jspecify.annotations.NullMarked;
