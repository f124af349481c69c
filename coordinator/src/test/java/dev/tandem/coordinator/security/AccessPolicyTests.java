package dev.tandem.coordinator.security;

import java.util.List;

import dev.tandem.coordinator.state.Grant;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The rules of {@link AccessPolicy} itself: who gets which grant, and which policies are refused.
 */
class AccessPolicyTests {

	@Test
	void anIdPrefixUnderAnotherAppsPrefixIsRefusedNamingBothApps() {
		AccessPolicy.Builder builder = AccessPolicy.builder()
			.app("orders-app", List.of("orders"))
			.app("eu-app", List.of("orders.eu"));
		assertThatIllegalArgumentException().isThrownBy(builder::build)
			.withMessageContaining("Id prefix 'orders.eu' of app identity 'eu-app' lies under id prefix 'orders' of app "
					+ "identity 'orders-app'")
			.withMessageContaining("tandem.coordinator.server.authorization.apps");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> AccessPolicy.builder().app("a", List.of("shared")).app("b", List.of("shared")).build())
			.withMessageContaining("'shared' of app identity 'b' is id prefix 'shared' of app identity 'a'");
	}

	@Test
	void prefixesThatOnlyShareTheirFirstLettersAreDistinctApps() {
		AccessPolicy policy = AccessPolicy.builder()
			.app("orders-app", List.of("orders", "orders.replay"))
			.app("orders-eu-app", List.of("orders-eu"))
			.app("ordersx-app", List.of("ordersx"))
			.build();
		Grant orders = policy.grantFor("orders-app");
		assertThat(orders.coversOwner("orders.replay.i1")).isTrue();
		assertThat(orders.coversOwner("orders-eu.i1")).isFalse();
		assertThat(policy.grantFor("orders-eu-app").coversOwner("orders.i1")).isFalse();
		assertThat(policy.grantFor("stranger").ownerPrefixes()).isEmpty();
	}

}
