package dev.tandem.sample;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import dev.tandem.coordinator.client.CoordinatorGroup;
import dev.tandem.coordinator.server.CoordinatorServer;
import dev.tandem.coordinator.server.PeerStatus;

/**
 * One coordinator peer ({@link CoordinatorServer}, Apache Ratis over gRPC) in its own JVM, for
 * the chaos suite: {@code CoordinatorHost <peer-id> <peers> <data-dir>} with peers as
 * {@code id=host:port,...} (the form of {@code tandem.coordinator.peers}). Prints {@code ready}
 * once the peer runs, then obeys commands on standard input, one a line: {@code status} answers
 * {@code ok <role> <leader-id or -> <term> <applied-index>}, {@code quit} stops the peer
 * gracefully. A {@code kill -9} of the process is the fault the suite injects; a new host on the
 * same data directory recovers the peer's log.
 */
public final class CoordinatorHost {

	private CoordinatorHost() {
	}

	public static void main(String[] args) throws Exception {
		CoordinatorServer.useCommonPoolForAsyncTasks();
		PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
		try (CoordinatorServer server = CoordinatorServer.builder(args[0], CoordinatorGroup.parse(args[1]), Path.of(args[2]))
			.build()) {
			server.start();
			out.println("ready");
			BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			String line;
			while ((line = in.readLine()) != null) {
				switch (line.trim()) {
					case "status" -> {
						PeerStatus status = server.status();
						out.println("ok " + status.role() + " " + ((status.leaderId() != null) ? status.leaderId() : "-")
								+ " " + status.term() + " " + status.appliedIndex());
					}
					case "quit" -> {
						out.println("ok");
						return;
					}
					default -> out.println("error unknown command " + line);
				}
			}
		}
	}

}
