package dev.tandem.bench;

/**
 * One disturbance of {@link FailoverBench}; times are wall clock ms.
 *
 * @param setting the broker setting ({@code tuned} or {@code stock})
 * @param rttMs the round trip time the latency proxies added for clients
 * @param scenario {@code move}, {@code shutdown} or {@code kill}
 * @param trial the trial number, from 1 (with {@code .2}, {@code .3}... for repeated moves)
 * @param baselineStartMs start of the undisturbed window before the disturbance
 * @param startMs start of the disturbance
 * @param eventEndMs when the disturbing operation returned
 * @param endMs end of the observation window
 * @param newConnections client connections the proxies accepted during the observation window
 * (-1 without proxies)
 * @author Tandem
 * @since 0.1.0
 */
record FailoverEvent(String setting, int rttMs, String scenario, String trial, long baselineStartMs, long startMs,
		long eventEndMs, long endMs, long newConnections) {

}
