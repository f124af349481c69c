package dev.tandem.bench.mirror;

import org.jspecify.annotations.Nullable;

/**
 * Tandem's mirror (module {@code mirror}). Not wired in yet: the mirror library is built on its
 * own branch, and this contender fails every run with a message saying so until it is merged.
 */
final class TandemMirrorContender implements Contender {

	@Override
	public String id() {
		return "tandem";
	}

	@Override
	public String settings() {
		return "Tandem's mirror: not available in this build";
	}

	@Override
	public void start(MirrorRun run) {
		throw new UnsupportedOperationException(
				"Tandem's mirror (module mirror, dev.tandem.mirror) is not part of this build yet: merge the mirror branch "
						+ "and wire TandemMirrorContender to it, or leave tandem out of --contenders");
	}

	@Override
	public @Nullable String failure() {
		return null;
	}

	@Override
	public void stop() {
	}

}
