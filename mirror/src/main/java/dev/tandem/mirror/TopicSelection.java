package dev.tandem.mirror;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/**
 * Which source topics a mirror copies: topics named in a list or matching a regular expression,
 * minus excludes. Never selected, whatever the includes say: Kafka's internal topics
 * ({@code __*}, {@code *.internal}, {@code *-internal}, {@code *.replica}, as MirrorMaker 2's
 * {@code DefaultTopicFilter} and {@code ReplicationPolicy.isInternalTopic} define them),
 * MirrorMaker 2's own topics ({@code mm2-*}, {@code heartbeats}), Tandem's control topics (the
 * marker and instance topics) and topics that are, by name, remote copies of a target cluster's
 * topics ({@code <target-alias><separator>*}, see active-active in {@link Mirror}).
 * Immutable (what it selects never changes) and thread-safe.
 *
 * @since 0.1.0
 */
public final class TopicSelection {

	/** Topics no mirror ever copies (regular expressions, full match). */
	public static final List<String> BUILT_IN_EXCLUDES = List.of("__.*", ".*[\\-.]internal", ".*\\.replica",
			"mm2-.*", "heartbeats", "tandem-markers", "tandem-instances");

	private static final int MAX_DECIDED = 10_000;

	private final List<String> topics;

	private final @Nullable Pattern include;

	private final List<Pattern> excludes;

	private final Pattern subscription;

	/** Answers of {@link #matches} so far (asked for every polled partition; bounded). */
	private final Map<String, Boolean> decided = new ConcurrentHashMap<>();

	/**
	 * Creates a selection.
	 * @param topics topic names to copy
	 * @param include a regular expression (full match) of further topics to copy, or {@code null}
	 * @param excludes regular expressions (full match) of topics never to copy, on top of the
	 *     built-in ones
	 * @param excludedPrefixes name prefixes of topics never to copy (the remote-topic prefixes of
	 *     the targets)
	 * @throws IllegalArgumentException if neither topics nor an include pattern is given, or a
	 *     pattern does not compile
	 */
	public TopicSelection(List<String> topics, @Nullable String include, List<String> excludes,
			List<String> excludedPrefixes) {
		this.topics = List.copyOf(topics);
		if (this.topics.isEmpty() && (include == null || include.isBlank())) {
			throw new IllegalArgumentException("No topics to mirror: give topic names, a topic pattern, or both");
		}
		this.include = (include == null || include.isBlank()) ? null : Pattern.compile(include);
		List<String> allExcludes = new ArrayList<>(BUILT_IN_EXCLUDES);
		allExcludes.addAll(excludes);
		excludedPrefixes.forEach((prefix) -> allExcludes.add(Pattern.quote(prefix) + ".*"));
		this.excludes = allExcludes.stream().map(Pattern::compile).toList();
		String includes = this.topics.stream().map(Pattern::quote).collect(Collectors.joining("|"));
		if (this.include != null) {
			includes = includes.isEmpty() ? this.include.pattern() : includes + "|" + this.include.pattern();
		}
		String negative = allExcludes.stream().map((ex) -> "(?:" + ex + ")").collect(Collectors.joining("|"));
		this.subscription = Pattern.compile("(?!(?:" + negative + ")$)(?:" + includes + ")");
	}

	/**
	 * Returns whether a topic is selected.
	 * @param topic a topic name
	 * @return whether the mirror copies it
	 */
	public boolean matches(String topic) {
		Objects.requireNonNull(topic, "topic");
		Boolean known = this.decided.get(topic);
		if (known != null) {
			return known;
		}
		boolean selected = decide(topic);
		if (this.decided.size() < MAX_DECIDED) {
			this.decided.put(topic, selected);
		}
		return selected;
	}

	private boolean decide(String topic) {
		for (Pattern exclude : this.excludes) {
			if (exclude.matcher(topic).matches()) {
				return false;
			}
		}
		return this.topics.contains(topic) || (this.include != null && this.include.matcher(topic).matches());
	}

	/**
	 * Returns one pattern, for {@code Consumer.subscribe(Pattern)}, that matches exactly the
	 * selected topics (excludes as a negative look-ahead).
	 * @return the subscription pattern
	 */
	public Pattern subscriptionPattern() {
		return this.subscription;
	}

	@Override
	public String toString() {
		return "topics " + this.topics + ((this.include != null) ? " and /" + this.include.pattern() + "/" : "")
				+ ", excluding " + this.excludes;
	}

}
