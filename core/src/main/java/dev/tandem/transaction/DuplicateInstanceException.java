package dev.tandem.transaction;

/**
 * Another running instance holds this instance's id: its lease in the decision log was renewed
 * while this one waited for it to expire. Two running instances with one id fence each other's
 * producers and leave transactions visible on some clusters only, so the second one is refused at
 * start-up. Fatal: give every running instance its own instance id
 * ({@code tandem.transaction.instance-id} with the Spring Boot starter).
 *
 * @since 0.1.0
 */
public class DuplicateInstanceException extends TandemException {

	private static final long serialVersionUID = 1L;

	private final String owner;

	public DuplicateInstanceException(String owner, String message) {
		super(message);
		this.owner = owner;
	}

	/**
	 * Returns the owner id in use, {@code <id-prefix>.<instance-id>}.
	 * @return the owner id
	 */
	public String getOwner() {
		return this.owner;
	}

}
