package dev.tandem.bench.mirror;

import java.nio.file.Path;
import java.util.List;

/**
 * What a contender mirrors in one run: from the source cluster (alias {@code sourceAlias}) topic
 * {@code topic} to {@code remoteTopic} on the target (both created by the bench beforehand with
 * the same partition count), and the source consumer groups whose offsets it translates.
 *
 * @param tag names this run's topics, groups and internal state: {@code r<round>-<contender>}
 * @param work a scratch directory for this run, deleted after the bench
 * @param logs a directory kept after the bench, for this run's configuration files and logs
 * @param replicationFactor the replication factor of the topics a contender creates
 * @param rttMs the round trip time between the contender and the source, in ms
 */
record MirrorRun(String tag, String sourceAlias, String targetAlias, String sourceBootstrapServers,
		String targetBootstrapServers, String topic, String remoteTopic, List<String> groups, int partitions, Path work,
		Path logs, short replicationFactor, int rttMs) {
}
