package dev.tandem.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionLog;
import dev.tandem.transaction.DecisionLogException;
import dev.tandem.transaction.DuplicateInstanceException;
import dev.tandem.transaction.ForwardingDecisionLog;
import dev.tandem.transaction.InstanceLease;
import dev.tandem.transaction.ProtocolHook;
import dev.tandem.transaction.TandemException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Trying to break failed start-ups (issue 26, {@code docs/architecture.md}, "Failed start-ups") on
 * one shared decision log (an embedded Ratis peer) and two real 3-broker clusters: a start-up that
 * fails after taking the lease elsewhere than recovery's read (the producers' start), whose caller
 * closes the manager, that fails with an {@link Error}, that is retried on the same manager; a
 * failed start-up after a clean close and during a survivor's takeover; two restarts racing for the
 * lease a failed start-up left to expire. What must hold: a dead run's undecided transaction is
 * aborted (the last stable offset moves on) well before the brokers' transaction timeout once a
 * later run of its instance or a survivor runs; a start-up that had nothing to fence releases the
 * lease so that its retry need not wait; nothing hangs; errors name the cause.
 */
class FailedStartBreakerTests extends LeaseTrials {

	@Override
	String topicPrefix() {
		return "f-";
	}

	private static final Duration QUICK = Duration.ofSeconds(5);

	/** A survivor instance of the app, then the records the readers must see once the dead run is fenced. */
	private CrossClusterTransactionManager survivorAndLaterRecords() {
		CrossClusterTransactionManager survivor = started(builder("survivor", ProtocolHook.NONE));
		commitAfter("east", "after-east");
		commitAfter("west", "after-west");
		return survivor;
	}

	/** Waits for the readers of both clusters to move on, and checks nothing of run A is open or visible. */
	private long assertDeadRunFencedWithin(Duration within, String runA, long sinceMs) throws Exception {
		await().atMost(within).until(() -> readersMovedOn("east") && readersMovedOn("west"));
		long tookMs = System.currentTimeMillis() - sinceMs;
		assertThat(openOf("east", runA)).isEmpty();
		assertThat(openOf("west", runA)).isEmpty();
		assertThat(committed("east", Duration.ofSeconds(3))).noneMatch((value) -> value.startsWith("A-"));
		assertThat(committed("west", Duration.ofSeconds(3))).noneMatch((value) -> value.startsWith("A-"));
		return tookMs;
	}

	/**
	 * Trial 1: the caller closes the manager whose start-up failed after the take (a
	 * try-with-resources around {@code start()}, or any code that closes what it built). Run A is
	 * killed with an undecided transaction open; its restart B fails after taking the lease from A
	 * (the decision log fails recovery's read) and is closed; the instance never comes back; a
	 * survivor runs. The failed start-up left the lease to expire; the close must not release it
	 * (a released lease is never claimed), so the survivor claims it and fences A. Found by this
	 * trial: the close released it (the survivor never fenced A; its transaction pinned the readers
	 * until the transaction timeout); since then a failed start-up is final and close() leaves the
	 * lease as the failure left it.
	 */
	@Test
	void aFailedStartUpItsCallerClosesStillLeavesTheDeadRunToASurvivor() throws Exception {
		String runA = runKilledAfterPrepare("closed", builder("closed", ProtocolHook.NONE), "A");
		CrossClusterTransactionManager failing = builder("closed", ProtocolHook.NONE)
			.decisionLog(recoveryFailing(() -> {
				throw new DecisionLogException("recovery's read failed (injected)");
			}))
			.build();
		try (failing) {
			assertThat(catchThrowable(failing::start)).isInstanceOf(DecisionLogException.class);
		}
		InstanceLease afterClose = lease("closed");
		System.out.printf("[brk26] closed: after the failed start-up and its close the lease is held by %s, released %s"
				+ " (A %s)%n", afterClose.incarnation(), afterClose.released(), runA);
		long startedMs = System.currentTimeMillis();
		survivorAndLaterRecords();
		long tookMs = assertDeadRunFencedWithin(RESUMES_WITHIN, runA, startedMs);
		System.out.printf("[brk26] closed: readers moved on %d ms after the survivor started%n", tookMs);
		assertThat(afterClose.released()).isFalse();
		assertThat(lease("closed").claimedBy()).isEqualTo(this.topic + ".survivor");
	}

	/**
	 * Trials 2 and 3: the producers' start fails after the take. Run A is killed with an undecided
	 * transaction open on both clusters; its restart B reaches west's brokers through its admin and
	 * consumer clients (the marker topics, the listing of open transactions) but not through its
	 * producers, so the pool's {@code initTransactions()} on west does not answer (a cluster that
	 * goes away between the marker topics and the producers' start, or refuses the producers). The
	 * start-up must fail naming west, leave the lease to expire, and a survivor must fence A on both
	 * clusters.
	 */
	private void producersThatCannotInitializeLeaveTheDeadRunToASurvivor(String instance, boolean requireAll)
			throws Exception {
		String runA = runKilledAfterPrepare(instance, builder(instance, ProtocolHook.NONE), "A");
		Map<String, Object> producerUnreachable = clientConfig("west");
		producerUnreachable.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:1");
		CrossClusterTransactionManager failing = builder(instance, ProtocolHook.NONE)
			.cluster("west", producerUnreachable, clientConfig("west"), clientConfig("west"))
			.commitTimeout(Duration.ofSeconds(3))
			.requireAllClustersAtStart(requireAll)
			.build();
		long failingMs = System.currentTimeMillis();
		Throwable thrown = catchThrowable(failing::start);
		long failedAfterMs = System.currentTimeMillis() - failingMs;
		InstanceLease kept = lease(instance);
		System.out.printf("[brk26] producers (requireAll %s): start-up threw after %d ms: %s; lease held by %s, released %s;"
				+ " A open east %s, west %s%n", requireAll, failedAfterMs, thrown, kept.incarnation(), kept.released(),
				openOf("east", runA), openOf("west", runA));
		long startedMs = System.currentTimeMillis();
		survivorAndLaterRecords();
		long tookMs = assertDeadRunFencedWithin(RESUMES_WITHIN, runA, startedMs);
		System.out.printf("[brk26] producers (requireAll %s): readers moved on %d ms after the survivor started; lease %s%n",
				requireAll, tookMs, lease(instance));
		assertThat(thrown).isInstanceOf(TandemException.class).hasMessageContaining("west");
		assertThat(kept.incarnation()).isNotEqualTo(runA);
		assertThat(kept.released()).isFalse();
	}

	@Test
	void aStartUpWhoseProducersCannotInitializeLeavesTheDeadRunToASurvivorWhenEveryClusterIsRequired()
			throws Exception {
		producersThatCannotInitializeLeaveTheDeadRunToASurvivor("all", true);
	}

	@Test
	void aStartUpWhoseProducersCannotInitializeLeavesTheDeadRunToASurvivorWhenClustersAreOptional() throws Exception {
		producersThatCannotInitializeLeaveTheDeadRunToASurvivor("some", false);
	}

	/**
	 * Trial 4: a failed start-up after a clean close. Run A closes cleanly (its lease released:
	 * nothing left to fence); run B fails after taking the lease. B must release it (it took it from
	 * nobody that died), so that the retry C starts without waiting a lease timeout.
	 */
	@Test
	void aFailedStartUpAfterACleanCloseReleasesTheLeaseSoThatItsRetryNeedNotWait() throws Exception {
		started(builder("clean", ProtocolHook.NONE)).close();
		assertThat(lease("clean").released()).isTrue();
		String runB = startUpFailingAfterTheTake("clean");
		InstanceLease afterB = lease("clean");
		long retryMs = System.currentTimeMillis();
		started(builder("clean", ProtocolHook.NONE));
		long tookMs = System.currentTimeMillis() - retryMs;
		System.out.printf("[brk26] clean: B %s left the lease released %s; the retry started in %d ms (lease %d ms)%n",
				runB, afterB.released(), tookMs, LEASE.toMillis());
		assertThat(afterB.incarnation()).isEqualTo(runB);
		assertThat(afterB.released()).isTrue();
		assertThat(tookMs).isLessThan(LEASE.toMillis());
	}

	/**
	 * Trial 5: a start-up that fails after the take with an {@link Error} (a JDBC driver's
	 * {@code NoClassDefFoundError} in the database branches' recovery, an {@code OutOfMemoryError}).
	 * The lease, renewed since the take, must stop being renewed: a lease renewed by a run that never
	 * started looks alive forever (no survivor claims it, every restart in the same JVM is refused
	 * as a duplicate). Found by this trial: start() caught RuntimeException only, and the lease was
	 * still renewed four lease timeouts after the failure; since then an Error fails the start-up
	 * as an exception does.
	 */
	@Test
	void aStartUpFailingWithAnErrorAfterTheTakeStopsRenewingTheLease() throws Exception {
		CrossClusterTransactionManager failing = builder("error", ProtocolHook.NONE)
			.decisionLog(recoveryFailing(() -> {
				throw new NoClassDefFoundError("org/postgresql/xa/PGXADataSource (injected)");
			}))
			.build();
		this.managers.add(failing);
		assertThat(catchThrowable(failing::start)).isInstanceOf(NoClassDefFoundError.class);
		long failedMs = System.currentTimeMillis();
		boolean stopped = stopsBeingRenewed("error", LEASE.multipliedBy(4));
		System.out.printf("[brk26] error: %d ms after the failed start-up the lease is %s; renewals stopped: %s%n",
				System.currentTimeMillis() - failedMs, lease("error"), stopped);
		assertThat(stopped).isTrue();
	}

	/** Whether the instance's lease expires unrenewed (or is released) within the given time. */
	private boolean stopsBeingRenewed(String instanceId, Duration within) {
		return holdsWithin(within, () -> {
			InstanceLease lease = lease(instanceId);
			return lease.released() || lease.expiresAtMs() < System.currentTimeMillis();
		});
	}

	/** Whether the condition comes true within the given time. */
	private static boolean holdsWithin(Duration within, java.util.concurrent.Callable<Boolean> condition) {
		try {
			await().atMost(within).until(condition);
			return true;
		}
		catch (org.awaitility.core.ConditionTimeoutException ex) {
			return false;
		}
	}

	/**
	 * Trial 6: the caller retries {@code start()} on the manager whose start-up failed after the
	 * take (recovery's read fails once, then works). Either the retry starts and fences the dead run
	 * A, or it is refused with an {@link IllegalStateException} that says why (a new manager is
	 * needed); never an error that names something else. Found by this trial: the retry took the
	 * lease again and threw RejectedExecutionException from the lease keeper's scheduler; since
	 * then the retry is refused before it touches the lease.
	 */
	@Test
	void retryingTheStartOfAManagerWhoseStartUpFailedAfterTheTakeStartsItOrSaysWhyNot() throws Exception {
		String runA = runKilledAfterPrepare("again", builder("again", ProtocolHook.NONE), "A");
		AtomicInteger reads = new AtomicInteger();
		DecisionLog failingOnce = new ForwardingDecisionLog(log()) {
			@Override
			public List<Decision> inDoubt(String owner, Duration timeout) {
				if (reads.getAndIncrement() == 0) {
					throw new DecisionLogException("recovery's read failed (injected, once)");
				}
				return super.inDoubt(owner, timeout);
			}

			@Override
			public void close() {
				// the shared log stays open
			}
		};
		CrossClusterTransactionManager manager = builder("again", ProtocolHook.NONE).decisionLog(failingOnce).build();
		this.managers.add(manager);
		assertThat(catchThrowable(manager::start)).isInstanceOf(DecisionLogException.class);
		Throwable retried = catchThrowable(manager::start);
		System.out.printf("[brk26] again: the retry on the same manager gave %s; lease %s%n", retried, lease("again"));
		if (retried == null) {
			commitAfter("east", "after-east");
			commitAfter("west", "after-west");
			assertDeadRunFencedWithin(RESUMES_WITHIN, runA, System.currentTimeMillis());
		}
		else {
			assertThat(retried).isInstanceOf(IllegalStateException.class).hasMessageContaining("start-up failed");
			assertThat(catchThrowable(manager::begin)).isInstanceOf(IllegalStateException.class)
				.hasMessageContaining("start-up failed");
		}
	}

	/**
	 * Trial 7: two restarts of the instance start at once after a failed start-up left the lease to
	 * expire (a duplicate instance id, or a supervisor that started the process twice). Exactly one
	 * starts; the other is refused, naming the duplicate; the one that starts fences the dead run A.
	 */
	@Test
	void twoRestartsRacingForALeaseLeftToExpireStartOneAndRefuseTheOther() throws Exception {
		String runA = runKilledAfterPrepare("twin", builder("twin", ProtocolHook.NONE), "A");
		startUpFailingAfterTheTake("twin");
		long startedMs = System.currentTimeMillis();
		List<CompletableFuture<Throwable>> twins = new ArrayList<>();
		for (int i = 0; i < 2; i++) {
			CrossClusterTransactionManager twin = builder("twin", ProtocolHook.NONE).build();
			this.managers.add(twin);
			twins.add(CompletableFuture.supplyAsync(() -> catchThrowable(twin::start)));
		}
		List<Throwable> outcomes = new ArrayList<>();
		for (CompletableFuture<Throwable> twin : twins) {
			outcomes.add(twin.get(LEASE.multipliedBy(4).plusSeconds(30).toMillis(), TimeUnit.MILLISECONDS));
		}
		System.out.printf("[brk26] twin: after %d ms the two restarts gave %s%n", System.currentTimeMillis() - startedMs,
				outcomes);
		commitAfter("east", "after-east");
		commitAfter("west", "after-west");
		assertDeadRunFencedWithin(RESUMES_WITHIN, runA, startedMs);
		assertThat(outcomes).filteredOn((outcome) -> outcome == null).hasSize(1);
		assertThat(outcomes).filteredOn((outcome) -> outcome != null)
			.singleElement()
			.isInstanceOf(DuplicateInstanceException.class);
	}

	/**
	 * Trial 8: the instance restarts while a survivor takes over the lease of its dead run A, and
	 * the restart's start-up fails after the take. The survivor's takeover is held (its "taken over"
	 * write waits) until the restart B is waiting for the claim; then it finishes, B takes the lease,
	 * taken over (nothing left to fence), and fails. B must release it, so that its retry C need
	 * not wait a lease timeout (nor a second takeover by the survivor); and A stays fenced.
	 */
	@Test
	@Disabled("bug (a wait, not a safety loss): the restart read the lease while the takeover was in progress "
			+ "(claimed, not yet taken over) and counted it as taken from a dead run (tookFromDeadRun is set by any "
			+ "read, never cleared); after it took the taken-over lease and failed it left it to expire instead of "
			+ "releasing it: its retry waited 1778 ms (lease 1500 ms) and a survivor may claim the lease again")
	void aRestartFailingAfterASurvivorsTakeoverReleasesTheTakenOverLease() throws Exception {
		String runA = runKilledAfterPrepare("raced", builder("raced", ProtocolHook.NONE), "A");
		String owner = this.topic + ".raced";
		CountDownLatch takeoverHeld = new CountDownLatch(1);
		DecisionLog heldTakeover = holdingTakeoverEnd(owner, takeoverHeld, Duration.ofSeconds(30));
		started(builder("survivor", ProtocolHook.NONE).decisionLog(heldTakeover));
		await().atMost(LEASE.multipliedBy(4).plusSeconds(5)).until(() -> lease("raced").isClaimed());
		AtomicInteger takes = new AtomicInteger();
		DecisionLog restart = new ForwardingDecisionLog(log()) {
			@Override
			public InstanceLease renewLease(String idPrefix, String instanceId, String incarnation, Duration duration,
					Duration timeout) {
				takes.incrementAndGet();
				return super.renewLease(idPrefix, instanceId, incarnation, duration, timeout);
			}

			@Override
			public List<Decision> inDoubt(String leaseOwner, Duration timeout) {
				throw new DecisionLogException("recovery's read failed (injected)");
			}

			@Override
			public void close() {
				// the shared log stays open
			}
		};
		CrossClusterTransactionManager failing = builder("raced", ProtocolHook.NONE).decisionLog(restart).build();
		CompletableFuture<Throwable> b = CompletableFuture.supplyAsync(() -> catchThrowable(failing::start));
		await().atMost(QUICK).until(() -> takes.get() >= 1);
		takeoverHeld.countDown();
		Throwable failed = b.get(LEASE.multipliedBy(4).plusSeconds(30).toMillis(), TimeUnit.MILLISECONDS);
		InstanceLease afterB = lease("raced");
		long retryMs = System.currentTimeMillis();
		started(builder("raced", ProtocolHook.NONE));
		long tookMs = System.currentTimeMillis() - retryMs;
		System.out.printf("[brk26] raced: B (%d takes) failed with %s; the lease after it: holder %s, released %s, claimed"
				+ " by %s; the retry started in %d ms (lease %d ms)%n", takes.get(), failed, afterB.incarnation(),
				afterB.released(), afterB.claimedBy(), tookMs, LEASE.toMillis());
		commitAfter("east", "after-east");
		commitAfter("west", "after-west");
		assertDeadRunFencedWithin(RESUMES_WITHIN, runA, retryMs);
		assertThat(failed).isInstanceOf(DecisionLogException.class);
		assertThat(afterB.released()).isTrue();
		assertThat(tookMs).isLessThan(LEASE.toMillis());
	}

	/**
	 * Trial 9: a crash loop at the shortest lease timeout (300 ms) against the count limit of the
	 * history ({@link InstanceLease#MAX_PAST_RUNS}). Run A is killed with an undecided transaction
	 * open; real start-ups then fail after taking the lease, each waiting for the previous one's
	 * lease to expire (measured: how fast such a loop adds runs to the history); then the rest of
	 * {@code MAX_PAST_RUNS} failed runs are added at the log level (takes of leases that expire at
	 * once, what those start-ups do to the log, without their waits), and the instance starts for
	 * good. A's transaction must still be aborted.
	 */
	@Test
	@Disabled("limitation (documented as lease timeouts below about 7 s): at a 300 ms lease real start-ups failing "
			+ "after the take came every 322 ms, so 512 of them fill the history in 2.7 min, well inside the "
			+ "default 15 min transaction timeout; A was pruned (512 past runs, A not among them) and its "
			+ "transaction pinned the readers past 21.5 s after the good start")
	void aCrashLoopAtTheShortestLeaseTimeoutStillLeavesTheDeadRunsTransactionToTheNextRun() throws Exception {
		Duration shortest = dev.tandem.transaction.CrossClusterTransactionManagerBuilder.MIN_LEASE_TIMEOUT;
		String runA = runKilledAfterPrepare("spin", builder("spin", ProtocolHook.NONE).leaseTimeout(shortest), "A");
		int real = 8;
		long loopMs = System.currentTimeMillis();
		for (int i = 0; i < real; i++) {
			CrossClusterTransactionManager failing = builder("spin", ProtocolHook.NONE).leaseTimeout(shortest)
				.decisionLog(recoveryFailing(() -> {
					throw new DecisionLogException("recovery's read failed (injected)");
				}))
				.build();
			assertThat(catchThrowable(failing::start)).isInstanceOf(DecisionLogException.class);
		}
		long cycleMs = (System.currentTimeMillis() - loopMs) / real;
		InstanceLease afterLoop = lease("spin");
		System.out.printf("[brk26] spin: %d real failed start-ups at a %d ms lease took %d ms each; %d past runs; "
				+ "MAX_PAST_RUNS %d fill in %.1f min at that pace (transaction timeout default %s)%n", real,
				shortest.toMillis(), cycleMs, afterLoop.pastRuns().size(), InstanceLease.MAX_PAST_RUNS,
				InstanceLease.MAX_PAST_RUNS * cycleMs / 60000.0,
				dev.tandem.transaction.CrossClusterTransactionManagerBuilder.DEFAULT_TRANSACTION_TIMEOUT);
		int fast = InstanceLease.MAX_PAST_RUNS - afterLoop.pastRuns().size() + 1;
		for (int i = 0; i < fast; i++) {
			takeAndDie("spin", Duration.ofMillis(1));
		}
		InstanceLease before = lease("spin");
		System.out.printf("[brk26] spin: before the good start %d past runs, A among them: %s%n",
				before.pastRuns().size(), before.runsToFence().contains(runA));
		long startedMs = System.currentTimeMillis();
		started(builder("spin", ProtocolHook.NONE).leaseTimeout(shortest));
		commitAfter("east", "after-east");
		commitAfter("west", "after-west");
		long tookMs = assertDeadRunFencedWithin(RESUMES_WITHIN, runA, startedMs);
		System.out.printf("[brk26] spin: readers moved on %d ms after the good start%n", tookMs);
	}

	/**
	 * Trial 10: the cost of full histories. Many instances of one app, each with a full history
	 * ({@link InstanceLease#MAX_PAST_RUNS} runs, what a crash loop leaves), and the leases read every
	 * instance makes every third of its lease timeout (takeover scan, claim checks, start-up). The
	 * read must come back whole (no message or reply limit hit) and in time. Six instances: writing
	 * the histories is the trial's cost (24 took 117 s of the build, for a 556 kB reply read in
	 * 8 ms); the printed line gives how many would fit the message limit.
	 */
	@Test
	void leaseReadsOfManyInstancesWithFullHistoriesComeBackWhole() throws Exception {
		int instances = 6;
		long fillMs = System.currentTimeMillis();
		List<CompletableFuture<Void>> fills = new ArrayList<>();
		for (int t = 0; t < 4; t++) {
			int thread = t;
			fills.add(CompletableFuture.runAsync(() -> {
				for (int n = thread; n < instances; n += 4) {
					for (int i = 0; i <= InstanceLease.MAX_PAST_RUNS; i++) {
						takeAndDie("full-" + n, Duration.ofMillis(1));
					}
				}
			}));
		}
		CompletableFuture.allOf(fills.toArray(CompletableFuture[]::new)).get(10, TimeUnit.MINUTES);
		fillMs = System.currentTimeMillis() - fillMs;
		List<Long> readMs = new ArrayList<>();
		List<InstanceLease> leases = List.of();
		for (int i = 0; i < 20; i++) {
			long readStart = System.nanoTime();
			leases = log().leases(this.topic, QUICK);
			readMs.add((System.nanoTime() - readStart) / 1_000_000);
		}
		int bytes = dev.tandem.coordinator.state.MessageCodec
			.encodeReply(new dev.tandem.coordinator.state.QueryReply.LeasesReply(leases, true)).length;
		List<Long> sorted = readMs.stream().sorted().toList();
		System.out.printf("[brk26] full: %d instances x %d past runs written in %d ms; a leases read: %d bytes, "
				+ "median %d ms, max %d ms; about %.0f such instances fit in the 64 MB gRPC message limit%n",
				instances, InstanceLease.MAX_PAST_RUNS, fillMs, bytes, sorted.get(sorted.size() / 2),
				sorted.get(sorted.size() - 1), (64.0 * 1024 * 1024) / (bytes / (double) instances));
		assertThat(leases).hasSize(instances);
		assertThat(leases).allSatisfy((lease) -> assertThat(lease.pastRuns()).hasSize(InstanceLease.MAX_PAST_RUNS));
		assertThat(sorted.get(sorted.size() / 2)).isLessThan(LEASE.dividedBy(3).toMillis());
	}

	/**
	 * Trial 11: the survivor's takeover while it cannot list west's transactions (its admin client
	 * cannot reach west: a partition between the survivor and one cluster, or no DESCRIBE permission
	 * on the transactional ids). Run A is killed with an undecided transaction open on both
	 * clusters; its restart fails after the take and leaves the lease to expire; the survivor claims
	 * it. The takeover must not be marked done while A's transaction on west is still open: once
	 * marked, nobody fences A there (the claim is over, and the instance may never return).
	 */
	@Test
	@Disabled("bug: ParticipantPool.fence skips a cluster whose open transactions it cannot list (a WARN) and the "
			+ "takeover is marked done anyway: 7.2 s after the survivor started the lease was taken over, A's west "
			+ "transaction still open and west readers pinned; nobody fences it afterwards (the claim is over)")
	void aTakeoverThatCannotListOneClustersTransactionsIsNotMarkedDoneWhileTheDeadRunsTransactionIsOpen()
			throws Exception {
		String runA = runKilledAfterPrepare("split", builder("split", ProtocolHook.NONE), "A");
		startUpFailingAfterTheTake("split");
		Map<String, Object> adminUnreachable = clientConfig("west");
		adminUnreachable.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:1");
		long startedMs = System.currentTimeMillis();
		started(builder("survivor", ProtocolHook.NONE)
			.cluster("west", clientConfig("west"), clientConfig("west"), adminUnreachable)
			.commitTimeout(Duration.ofSeconds(3)));
		await().atMost(RESUMES_WITHIN).until(() -> lease("split").isClaimed());
		commitAfter("east", "after-east");
		commitAfter("west", "after-west");
		await().atMost(RESUMES_WITHIN).until(() -> readersMovedOn("east"));
		boolean markedDone = holdsWithin(Duration.ofSeconds(15), () -> lease("split").takenOver());
		InstanceLease claimed = lease("split");
		boolean westMovedOn = readersMovedOn("west");
		System.out.printf("[brk26] split: %d ms after the survivor started the lease is claimed by %s, taken over %s; "
				+ "A open east %s, west %s; west readers moved on %s%n", System.currentTimeMillis() - startedMs,
				claimed.claimedBy(), claimed.takenOver(), openOf("east", runA), openOf("west", runA), westMovedOn);
		assertThat(openOf("east", runA)).isEmpty();
		if (markedDone) {
			assertThat(openOf("west", runA)).isEmpty();
		}
	}

	/**
	 * Trial 12: the instance restarts while a survivor's takeover of its dead run does not finish
	 * (the takeover's "taken over" write is held longer than the restart waits). The restart must
	 * neither hang nor take the claimed lease: it fails after at most two lease timeouts plus the
	 * decision timeout, naming the claimant; the lease stays claimed; once the takeover finishes a
	 * restart starts and A stays fenced. Seen before the message named the claim: the restart gave
	 * up after 8.1 s saying the lease "was not free within 3s", the claimant only inside the lease's
	 * string.
	 */
	@Test
	void aRestartWaitingOnATakeoverThatDoesNotFinishFailsNamingTheClaimantAndTheNextRestartStarts()
			throws Exception {
		String runA = runKilledAfterPrepare("held", builder("held", ProtocolHook.NONE), "A");
		String owner = this.topic + ".held";
		CountDownLatch takeoverHeld = new CountDownLatch(1);
		DecisionLog heldTakeover = holdingTakeoverEnd(owner, takeoverHeld, Duration.ofSeconds(60));
		try {
			started(builder("survivor", ProtocolHook.NONE).decisionLog(heldTakeover));
			await().atMost(LEASE.multipliedBy(4).plusSeconds(5)).until(() -> lease("held").isClaimed());
			CrossClusterTransactionManager restart = builder("held", ProtocolHook.NONE).build();
			this.managers.add(restart);
			long restartMs = System.currentTimeMillis();
			Throwable refused = catchThrowable(restart::start);
			long waitedMs = System.currentTimeMillis() - restartMs;
			long limitMs = LEASE.multipliedBy(2)
				.plus(dev.tandem.transaction.CrossClusterTransactionManagerBuilder.DEFAULT_DECISION_TIMEOUT)
				.toMillis();
			System.out.printf("[brk26] held: the restart gave up after %d ms (limit %d ms): %s%n", waitedMs, limitMs,
					refused);
			assertThat(refused).isInstanceOf(TandemException.class)
				.hasMessageContaining("claimed by " + this.topic + ".survivor")
				.hasMessageContaining("not free within " + dev.tandem.text.DurationText.of(Duration.ofMillis(limitMs)));
			assertThat(waitedMs).isLessThan(limitMs + LEASE.toMillis());
			assertThat(lease("held").isClaimed()).isTrue();
			assertThat(lease("held").takenOver()).isFalse();
		}
		finally {
			takeoverHeld.countDown();
		}
		await().atMost(QUICK).until(() -> lease("held").takenOver());
		long startedMs = System.currentTimeMillis();
		started(builder("held", ProtocolHook.NONE));
		System.out.printf("[brk26] held: once taken over the next restart started in %d ms%n",
				System.currentTimeMillis() - startedMs);
		commitAfter("east", "after-east");
		commitAfter("west", "after-west");
		assertDeadRunFencedWithin(RESUMES_WITHIN, runA, startedMs);
	}

	/**
	 * Trial 13: what a failed start-up leaves running. A fresh instance's start-up fails in the
	 * producers' start after the take (west's producers do not answer, every cluster required):
	 * slot 0's east producer is initialized, its west one is not. Once the failed manager is
	 * closed, no producer of that run may still be running (a network thread each, holding
	 * connections to the brokers). Found by this trial: slot 0's east producer still ran after the
	 * close (a slot joined the pool only once all its producers had opened, and close() closes the
	 * pool's slots); since then a slot joins before its producers open.
	 */
	@Test
	void aStartUpFailingInTheProducersStartLeavesNoProducerRunningOnceClosed() throws Exception {
		Map<String, Object> producerUnreachable = clientConfig("west");
		producerUnreachable.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:1");
		CrossClusterTransactionManager failing = builder("leak", ProtocolHook.NONE)
			.cluster("west", producerUnreachable, clientConfig("west"), clientConfig("west"))
			.commitTimeout(Duration.ofSeconds(3))
			.requireAllClustersAtStart(true)
			.build();
		assertThat(catchThrowable(failing::start)).isInstanceOf(TandemException.class).hasMessageContaining("west");
		String run = holder("leak");
		List<String> beforeClose = producerThreadsOf(run);
		failing.close();
		boolean stopped = holdsWithin(QUICK, () -> producerThreadsOf(run).isEmpty());
		System.out.printf("[brk26] leak: producer threads of the failed run before its close %s, %s after it%n",
				beforeClose, stopped ? "none" : producerThreadsOf(run));
		assertThat(stopped).isTrue();
	}

	/** The names of the live producer network threads of a run (their client id is the transactional id). */
	private static List<String> producerThreadsOf(String run) {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter(Thread::isAlive)
			.map(Thread::getName)
			.filter((name) -> name.startsWith("kafka-producer-network-thread") && name.endsWith("." + run))
			.toList();
	}

	/**
	 * The shared log, where a claimant's end of its takeover of {@code owner} (its release of the
	 * claimed lease) waits for {@code held} to open, at most {@code atMost}.
	 */
	private static DecisionLog holdingTakeoverEnd(String owner, CountDownLatch held, Duration atMost) {
		return new ForwardingDecisionLog(log()) {
			@Override
			public void releaseLease(String leaseOwner, String by, Duration timeout) {
				if (leaseOwner.equals(owner)) {
					try {
						held.await(atMost.toMillis(), TimeUnit.MILLISECONDS);
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
				}
				super.releaseLease(leaseOwner, by, timeout);
			}

			@Override
			public void close() {
				// the shared log stays open
			}
		};
	}

}
