package dev.tandem.mirror.app;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

import dev.tandem.mirror.Mirror;
import dev.tandem.mirror.MirrorStatus;

/**
 * {@code /actuator/kafkamirror}: per source partition the source end offset, the mirrored offset
 * and the lag in records and milliseconds; per selected group and target the source offset, the
 * translated offset and the last sync time ({@link MirrorStatus}).
 *
 * @since 0.1.0
 */
@Endpoint(id = "kafkamirror")
public class KafkaMirrorEndpoint {

	private final Mirror mirror;

	/**
	 * Creates the endpoint.
	 * @param mirror the mirror
	 */
	public KafkaMirrorEndpoint(Mirror mirror) {
		this.mirror = mirror;
	}

	/**
	 * Returns the mirror's status.
	 * @return the status
	 */
	@ReadOperation
	public MirrorStatus status() {
		return this.mirror.status();
	}

}
