package dev.tandem.autoconfigure.diagnostics;

/**
 * A Tandem property is missing or wrong; thrown at start-up and turned into a failure analysis
 * that names the property and the fix by {@link TandemConfigurationFailureAnalyzer}. Fatal.
 *
 * @since 0.1.0
 */
public class TandemConfigurationException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final String property;

	private final String action;

	/**
	 * Creates an exception.
	 * @param property the property at fault, for example {@code tandem.transaction.instance-id}
	 * @param description what is wrong
	 * @param action what to do
	 */
	public TandemConfigurationException(String property, String description, String action) {
		super(description);
		this.property = property;
		this.action = action;
	}

	/**
	 * Returns the property at fault.
	 * @return the property name
	 */
	public String getProperty() {
		return this.property;
	}

	/**
	 * Returns what to do.
	 * @return the fix
	 */
	public String getAction() {
		return this.action;
	}

}
