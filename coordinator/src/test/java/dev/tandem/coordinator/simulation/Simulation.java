package dev.tandem.coordinator.simulation;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.jspecify.annotations.Nullable;

import dev.tandem.coordinator.simulation.SimulatedRun.Phase;
import dev.tandem.coordinator.state.DecisionTable;

/**
 * A deterministic simulation of Tandem's two-phase commit with leases and takeover (issue 26 item 5):
 * runs of an app's instances, the real {@link DecisionTable} as the decision log, Kafka transactions as
 * their broker-visible states ({@link SimulatedCluster}), one clock for the log and the brokers and a
 * skewed one per run. Each step is one action the scheduler picks among those enabled: an environment
 * action (advance time, crash, pause, resume, skew a clock, restart an instance) or one step of a run,
 * cut where the code makes one call (renew, claim, read, resume a participant, re-check, list, fence,
 * release, begin, send, prepare, decide, commit, abort). The invariants are checked after every step;
 * after the random steps the world settles (everyone resumes, crashed instances restart, time goes on)
 * and the final invariants are checked. The same seed gives the same schedule. Not thread-safe.
 */
final class Simulation {

	private static final long[] ADVANCES = { 100, 500, 1000, 2000, 4000 };

	private static final int MAX_RUNS_PER_INSTANCE = 4;

	private static final int SETTLE_STEPS = 3000;

	/** One enabled action: its label (the trace, and the key of an explicit schedule) and weight. */
	record Action(String label, int weight, Runnable effect) {
	}

	/**
	 * The result of one schedule.
	 * @param seed the seed
	 * @param settings the world
	 * @param violation the first invariant broken, null if none
	 * @param trace the labels of every step taken
	 */
	record Result(long seed, SimulationSettings settings, @Nullable String violation, List<String> trace) {

		boolean ok() {
			return this.violation == null;
		}

		String describe() {
			return "seed " + this.seed + " " + this.settings + "\nviolation: " + this.violation + "\nsteps:\n  "
					+ String.join("\n  ", this.trace);
		}

	}

	private final SimulationSettings settings;

	private final long seed;

	private final Random random;

	private final SimulatedWorld world;

	private final RunSteps steps;

	private final List<String> instanceIds = new ArrayList<>();

	private final List<SimulatedRun> runs = new ArrayList<>();

	private final Map<String, Integer> runCounts = new LinkedHashMap<>();

	private final List<String> trace = new ArrayList<>();

	private @Nullable String violation;

	Simulation(SimulationSettings settings, long seed) {
		this.settings = settings;
		this.seed = seed;
		this.random = new Random(seed);
		this.world = new SimulatedWorld(settings);
		this.steps = new RunSteps(this.world);
		for (int i = 0; i < settings.instances(); i++) {
			String instance = String.valueOf((char) ('a' + i));
			this.instanceIds.add(instance);
			start(instance);
		}
	}

	/** Runs a random schedule of {@code settings.steps()} steps, then settles. */
	Result run() {
		for (int i = 0; i < this.settings.steps() && this.violation == null; i++) {
			take(pick(actions(false)));
		}
		settleAndCheck();
		return result();
	}

	/**
	 * Replays an explicit schedule (step labels as in a trace), then settles.
	 * @param strict whether a step that is not enabled is a failure (otherwise it is skipped)
	 */
	Result replay(List<String> steps, boolean strict) {
		for (String label : steps) {
			if (this.violation != null) {
				break;
			}
			Action action = actions(false).stream().filter((a) -> a.label().equals(label)).findFirst().orElse(null);
			if (action == null) {
				if (strict) {
					this.violation = "step not enabled: " + label;
				}
				continue;
			}
			take(action);
		}
		settleAndCheck();
		return result();
	}

	private Result result() {
		return new Result(this.seed, this.settings, this.violation, List.copyOf(this.trace));
	}

	private void take(Action action) {
		this.trace.add(action.label());
		this.world.step++;
		action.effect().run();
		if (this.violation == null) {
			this.violation = this.world.check();
		}
	}

	private Action pick(List<Action> actions) {
		int total = 0;
		for (Action action : actions) {
			total += action.weight();
		}
		int chosen = this.random.nextInt(total);
		for (Action action : actions) {
			chosen -= action.weight();
			if (chosen < 0) {
				return action;
			}
		}
		throw new IllegalStateException("no action");
	}

	private SimulatedRun start(String instance) {
		int number = this.runCounts.merge(instance, 1, Integer::sum);
		SimulatedRun run = new SimulatedRun(SimulatedWorld.PREFIX, instance, instance + number, this.settings.slots());
		run.acquireDeadlineMs = run.localNow(this.world.now) + 2 * this.settings.leaseTimeoutMs();
		this.runs.add(run);
		return run;
	}

	private List<Action> actions(boolean settling) {
		List<Action> actions = new ArrayList<>();
		if (settling) {
			long interval = this.world.renewInterval();
			actions.add(new Action("advance " + interval, 4, () -> this.world.advance(interval)));
		}
		else {
			for (long delta : ADVANCES) {
				actions.add(new Action("advance " + delta, 3, () -> this.world.advance(delta)));
			}
			long beyond = this.settings.transactionTimeoutMs() + 1;
			actions.add(new Action("advance " + beyond, 1, () -> this.world.advance(beyond)));
			for (SimulatedRun run : this.runs) {
				if (!run.alive()) {
					continue;
				}
				actions.add(new Action("crash " + run, 1, () -> crash(run)));
				if (run.paused) {
					actions.add(new Action("resume " + run, 6, () -> run.paused = false));
				}
				else {
					actions.add(new Action("pause " + run, 3, () -> run.paused = true));
				}
				actions.add(new Action("skew " + run + " +1500", 1, () -> run.clockOffsetMs += 1500));
				actions.add(new Action("skew " + run + " -1500", 1, () -> run.clockOffsetMs -= 1500));
			}
			for (String instance : this.instanceIds) {
				if (this.runCounts.get(instance) >= MAX_RUNS_PER_INSTANCE) {
					continue;
				}
				SimulatedRun latest = latest(instance);
				if (!latest.alive() || latest.paused) {
					// a paused latest run is a zombie: its restart races it
					actions.add(new Action("restart " + instance, latest.alive() ? 1 : 5, () -> start(instance)));
				}
			}
		}
		for (SimulatedRun run : this.runs) {
			if (run.canStep()) {
				this.steps.actions(run, actions, settling);
			}
		}
		return actions;
	}

	private SimulatedRun latest(String instance) {
		SimulatedRun latest = null;
		for (SimulatedRun run : this.runs) {
			if (run.instanceId.equals(instance)) {
				latest = run;
			}
		}
		if (latest == null) {
			throw new IllegalStateException("no run of " + instance);
		}
		return latest;
	}

	private void crash(SimulatedRun run) {
		run.phase = Phase.CRASHED;
		this.world.down.put(run.incarnation, this.world.step);
		run.producers.clear();
		run.takeover = null;
		Arrays.fill(run.slots, null);
	}

	/** Resumes every run, restarts what is down, lets time run until nothing is pending; then the final invariants. */
	private void settleAndCheck() {
		if (this.violation != null) {
			return;
		}
		for (SimulatedRun run : this.runs) {
			run.paused = false;
		}
		this.trace.add("-- settle");
		for (int step = 0; step < SETTLE_STEPS && this.violation == null; step++) {
			for (String instance : this.instanceIds) {
				restartIfDown(instance);
			}
			if (settled()) {
				this.violation = this.world.finalCheck();
				return;
			}
			take(pick(actions(true)));
		}
		if (this.violation == null) {
			this.violation = "did not settle within " + SETTLE_STEPS + " steps (decided and not completed: "
					+ this.world.table.counts().decided() + ")";
		}
	}

	/** An operator restarts an instance whose runs are all down or lost their lease (killing the latter). */
	private void restartIfDown(String instance) {
		boolean healthy = false;
		for (SimulatedRun run : this.runs) {
			if (run.instanceId.equals(instance) && run.alive()) {
				if (run.lostTo != null && !run.busy()) {
					crash(run);
				}
				else {
					healthy = true;
				}
			}
		}
		if (!healthy) {
			this.trace.add("restart " + instance);
			start(instance);
		}
	}

	private boolean settled() {
		if (this.world.table.counts().decided() > 0) {
			return false;
		}
		for (SimulatedRun run : this.runs) {
			if (run.alive() && (run.busy() || run.phase == Phase.ACQUIRING)) {
				return false;
			}
		}
		return true;
	}

}
