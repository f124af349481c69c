package dev.tandem.mirror;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class TopicSelectionTests {

	private final TopicSelection selection = new TopicSelection(List.of("orders"), "pay.*", List.of("pay-secret.*"),
			List.of("west."));

	@Test
	void listedAndMatchingTopicsAreSelectedExceptExcludedOnes() {
		assertThat(this.selection.matches("orders")).isTrue();
		assertThat(this.selection.matches("payments")).isTrue();
		assertThat(this.selection.matches("pay-secret-1")).isFalse();
		assertThat(this.selection.matches("shipments")).isFalse();
	}

	@Test
	void internalMirrorMakerAndTandemTopicsAndRemoteCopiesOfTheTargetAreNeverSelected() {
		TopicSelection all = new TopicSelection(List.of(), ".*", List.of(), List.of("west."));
		assertThat(List.of("__consumer_offsets", "__transaction_state", "connect-offsets.internal", "x-internal",
				"a.replica", "mm2-offset-syncs.west.internal", "heartbeats", "tandem-markers", "tandem-instances",
				"west.orders")).noneMatch(all::matches);
		assertThat(all.matches("east.orders")).isTrue();
	}

	@Test
	void subscriptionPatternSelectsTheSameTopics() {
		for (String topic : List.of("orders", "payments", "pay-secret-1", "shipments", "west.payments", "__consumer_offsets")) {
			assertThat(this.selection.subscriptionPattern().matcher(topic).matches()).as(topic)
				.isEqualTo(this.selection.matches(topic));
		}
	}

	@Test
	void noTopicsAtAllIsRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> new TopicSelection(List.of(), null, List.of(), List.of()))
			.withMessageContaining("No topics to mirror");
	}

	@Test
	void remoteNamesFollowMirrorMakerTwosDefaultPolicyOrIdentity() {
		assertThat(RemoteTopicNaming.prefixed(".").remoteTopic("east", "orders")).isEqualTo("east.orders");
		assertThat(RemoteTopicNaming.prefixed("_").remoteTopic("east", "orders")).isEqualTo("east_orders");
		assertThat(RemoteTopicNaming.identity().remoteTopic("east", "orders")).isEqualTo("orders");
		assertThatIllegalArgumentException().isThrownBy(() -> RemoteTopicNaming.prefixed("/"));
	}

}
