package dev.tandem.coordinator.client;

import java.util.Map;

import org.apache.ratis.protocol.RaftGroup;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link CoordinatorGroup}.
 */
class CoordinatorGroupTests {

	@Test
	void parseKeepsThePeerOrder() {
		CoordinatorGroup group = CoordinatorGroup.parse("n3=c-2:9872, n1=c-0:9872,n2=c-1:9872");
		assertThat(group.peers()).containsExactly(Map.entry("n3", "c-2:9872"), Map.entry("n1", "c-0:9872"),
				Map.entry("n2", "c-1:9872"));
		assertThat(group.groupId()).isEqualTo(CoordinatorGroup.DEFAULT_GROUP_ID);
		RaftGroup raftGroup = group.toRaftGroup();
		assertThat(raftGroup.getPeers()).hasSize(3);
		assertThat(raftGroup.getPeer(org.apache.ratis.protocol.RaftPeerId.valueOf("n1")).getAddress())
			.isEqualTo("c-0:9872");
	}

	@Test
	void parseRejectsMalformedPeers() {
		assertThatIllegalArgumentException().isThrownBy(() -> CoordinatorGroup.parse("n1"));
		assertThatIllegalArgumentException().isThrownBy(() -> CoordinatorGroup.parse("n1=host"));
		assertThatIllegalArgumentException().isThrownBy(() -> CoordinatorGroup.parse("n1=h:1,n1=h:2"))
			.withMessageContaining("repeats");
	}

	@Test
	void groupsWithTheSameIdAndPeersAreEqual() {
		assertThat(CoordinatorGroup.parse("a=h:1,b=h:2")).isEqualTo(CoordinatorGroup.of(Map.of("a", "h:1", "b", "h:2")));
	}

}
