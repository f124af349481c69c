package dev.tandem.autoconfigure.transaction;

import java.util.List;

import dev.tandem.transaction.ProtocolHook;
import dev.tandem.transaction.ProtocolStep;

/**
 * Calls several {@link ProtocolHook}s in order (a test's fault injector and the observation's
 * step events); injects faults if any of them does.
 */
final class CompositeProtocolHook implements ProtocolHook {

	private final List<ProtocolHook> hooks;

	private final boolean injectsFaults;

	CompositeProtocolHook(List<ProtocolHook> hooks) {
		this.hooks = List.copyOf(hooks);
		this.injectsFaults = this.hooks.stream().anyMatch(ProtocolHook::injectsFaults);
	}

	@Override
	public void reached(String transactionId, ProtocolStep step) {
		for (ProtocolHook hook : this.hooks) {
			hook.reached(transactionId, step);
		}
	}

	@Override
	public boolean injectsFaults() {
		return this.injectsFaults;
	}

}
