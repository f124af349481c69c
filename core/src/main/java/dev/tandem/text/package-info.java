/**
 * Text written into log lines and error messages the way people write it in configuration
 * ({@code 5s}, not {@code PT5S}). Imports nothing outside the JDK.
 */
@NullMarked
package dev.tandem.text;

import org.jspecify.annotations.NullMarked;
