package dev.tandem.mirror;

import org.jspecify.annotations.Nullable;

/**
 * A {@link MirrorSettings} value is out of range or inconsistent; thrown by
 * {@link MirrorSettings.Builder#build()}. Fatal: the mirror cannot be built until the setting is
 * changed. The setting at fault is a field ({@link #getSetting()}), so that a caller binding the
 * settings from its own configuration (the mirror app's {@code tandem.mirror.*}) names its own
 * property without reading the message.
 *
 * @since 0.1.0
 */
public class InvalidMirrorSettingException extends IllegalArgumentException {

	private static final long serialVersionUID = 1L;

	private final String setting;

	/**
	 * Creates an exception.
	 * @param setting the setting at fault, as the mirror app's properties name it below
	 *     {@code tandem.mirror.} (for example {@code max-records})
	 * @param message what is wrong and the fix; messages of {@link MirrorSettings.Builder} begin
	 *     with the setting's name, except the one for {@code topics}
	 * @param cause the cause, or {@code null}
	 */
	public InvalidMirrorSettingException(String setting, String message, @Nullable Throwable cause) {
		super(message, cause);
		this.setting = setting;
	}

	/**
	 * Returns the setting at fault.
	 * @return its name in dashed form, for example {@code max-records} or {@code topic-pattern}
	 */
	public String getSetting() {
		return this.setting;
	}

}
