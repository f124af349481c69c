package dev.tandem.coordinator.client;

import java.util.concurrent.TimeUnit;

import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;
import org.apache.ratis.retry.ExponentialBackoffRetry;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Unit tests of {@link CoordinatorRetryPolicy}'s choice between a quick retry and the backoff
 * (pure logic: events are built here, no peers run).
 */
class CoordinatorRetryPolicyTests {

	private static final TimeDuration BASE = TimeDuration.valueOf(1, TimeUnit.SECONDS);

	private final CoordinatorRetryPolicy policy = new CoordinatorRetryPolicy(ExponentialBackoffRetry.newBuilder()
		.setBaseSleepTime(BASE)
		.setMaxSleepTime(TimeDuration.valueOf(2, TimeUnit.SECONDS))
		.setMaxAttempts(100)
		.build(), 100, 3);

	private static final RaftGroupMemberId MEMBER = RaftGroupMemberId.valueOf(RaftPeerId.valueOf("n1"),
			RaftGroupId.randomId());

	@Test
	void aNewLeaderNotYetReadyIsRetriedQuicklyAndThenWithTheBackoff() {
		LeaderNotReadyException notReady = new LeaderNotReadyException(MEMBER);
		for (int count = 1; count <= CoordinatorRetryPolicy.LEADER_CHANGE_RETRIES; count++) {
			RetryPolicy.Action action = this.policy.handleAttemptFailure(event(count, count, notReady));
			assertThat(action.shouldRetry()).isTrue();
			assertThat(action.getSleepTime().toLong(TimeUnit.MILLISECONDS))
				.isEqualTo(CoordinatorRetryPolicy.LEADER_CHANGE_PAUSE_MS);
		}
		int next = CoordinatorRetryPolicy.LEADER_CHANGE_RETRIES + 1;
		RetryPolicy.Action backoff = this.policy.handleAttemptFailure(event(next, next, notReady));
		assertThat(backoff.getSleepTime().toLong(TimeUnit.MILLISECONDS)).isGreaterThan(500);
		assertThat(this.policy.backoffRetries()).isOne();
	}

	@Test
	void anElectionWithoutAHintIsRetriedQuickly() {
		NotLeaderException noHint = new NotLeaderException(MEMBER, null, java.util.List.of());
		RetryPolicy.Action action = this.policy.handleAttemptFailure(event(1, 1, noHint));
		assertThat(action.getSleepTime().toLong(TimeUnit.MILLISECONDS))
			.isEqualTo(CoordinatorRetryPolicy.LEADER_CHANGE_PAUSE_MS);
		assertThat(this.policy.otherFailures()).isOne();
	}

	@Test
	void aClosedStreamIsRetriedAtOnceOncePerPeer() {
		AlreadyClosedException closed = new AlreadyClosedException("client->n1 is closed");
		for (int count = 1; count <= 3; count++) {
			assertThat(this.policy.handleAttemptFailure(event(count, count, closed))).isSameAs(
					RetryPolicy.RETRY_WITHOUT_SLEEP_ACTION);
		}
		assertThat(this.policy.handleAttemptFailure(event(4, 4, closed)).getSleepTime().toLong(TimeUnit.MILLISECONDS))
			.isGreaterThan(500);
	}

	@Test
	void aHintedRedirectIsCountedAndATimeoutWaitsForTheBackoff() {
		RaftPeer leader = RaftPeer.newBuilder().setId("n2").setAddress("127.0.0.1:1").build();
		this.policy.handleAttemptFailure(event(1, 1, new NotLeaderException(MEMBER, leader, java.util.List.of())));
		assertThat(this.policy.redirects()).isOne();
		RetryPolicy.Action action = this.policy.handleAttemptFailure(event(2, 1, new TimeoutIOException("slow")));
		assertThat(action.getSleepTime().toLong(TimeUnit.MILLISECONDS)).isGreaterThan(500);
		assertThat(this.policy.otherFailures()).isOne();
	}

	@Test
	void quickRetriesDoNotUseUpTheAttemptsOfTheBackoff() {
		CoordinatorRetryPolicy bounded = new CoordinatorRetryPolicy(
				ExponentialBackoffRetry.newBuilder().setBaseSleepTime(BASE).setMaxAttempts(3).build(), 3, 3);
		LeaderNotReadyException notReady = new LeaderNotReadyException(MEMBER);
		int quick = CoordinatorRetryPolicy.LEADER_CHANGE_RETRIES;
		assertThat(bounded.handleAttemptFailure(event(quick, quick, notReady)).getSleepTime()
			.toLong(TimeUnit.MILLISECONDS)).isEqualTo(CoordinatorRetryPolicy.LEADER_CHANGE_PAUSE_MS);
		// Past the quick retries, the backoff still grants its own attempts (2 more of 3)...
		assertThat(bounded.handleAttemptFailure(event(quick + 1, quick + 1, notReady)).shouldRetry()).isTrue();
		assertThat(bounded.handleAttemptFailure(event(quick + 2, quick + 2, notReady)).shouldRetry()).isTrue();
		// ...and no more
		assertThat(bounded.handleAttemptFailure(event(quick + 3, quick + 3, notReady)).shouldRetry()).isFalse();
		assertThat(bounded.backoffRetries()).isEqualTo(2);
	}

	private static RetryPolicy.Event event(int attempt, int causeCount, Throwable cause) {
		return new RetryPolicy.Event() {

			@Override
			public int getAttemptCount() {
				return attempt;
			}

			@Override
			public int getCauseCount() {
				return causeCount;
			}

			@Override
			public Throwable getCause() {
				return cause;
			}

		};
	}

}
