package dev.tandem.test;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;

import org.jspecify.annotations.Nullable;

/**
 * Deletes the temporary directories of test clusters, and the work directories tests keep
 * between runs (a chaos lot's run directory kept from an earlier lot).
 * <p>
 * Thread-safe (no state).
 *
 * @author Tandem
 * @since 0.1.0
 */
public final class Directories {

	private Directories() {
	}

	/**
	 * Deletes a directory and everything below it; nothing if it does not exist.
	 * @param directory the directory
	 * @throws IOException if a file or directory below it cannot be deleted
	 */
	public static void deleteRecursively(Path directory) throws IOException {
		if (!Files.exists(directory)) {
			return;
		}
		Files.walkFileTree(directory, new SimpleFileVisitor<>() {

			@Override
			public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) throws IOException {
				Files.deleteIfExists(file);
				return FileVisitResult.CONTINUE;
			}

			@Override
			public FileVisitResult postVisitDirectory(Path dir, @Nullable IOException ex) throws IOException {
				if (ex != null) {
					throw ex;
				}
				Files.deleteIfExists(dir);
				return FileVisitResult.CONTINUE;
			}

		});
	}

}
