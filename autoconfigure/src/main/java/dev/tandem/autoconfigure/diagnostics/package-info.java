/**
 * Failure analyzers that turn Tandem start-up mistakes into messages naming the property and the fix.
 */
@NullMarked
package dev.tandem.autoconfigure.diagnostics;

import org.jspecify.annotations.NullMarked;
