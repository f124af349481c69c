/**
 * Auto-configuration of cross-cluster transactions: manager, template, @CrossClusterTransactional.
 */
@NullMarked
package dev.tandem.autoconfigure.transaction;

import org.jspecify.annotations.NullMarked;
