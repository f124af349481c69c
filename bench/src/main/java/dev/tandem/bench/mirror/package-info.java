/**
 * Benchmark of mirroring between clusters: MirrorMaker 2 in dedicated mode, exactly-once and
 * at-least-once, against Tandem's mirror, on the same clusters and records in one run, with
 * the records consumer groups re-read or skip when they move from the source to the target.
 */
@NullMarked
package dev.tandem.bench.mirror;

import org.jspecify.annotations.NullMarked;
