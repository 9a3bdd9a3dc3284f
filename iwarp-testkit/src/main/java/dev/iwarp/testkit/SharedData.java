package dev.iwarp.testkit;

import org.junit.jupiter.api.Assumptions;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Finds the {@code shared/} directory that sits next to the checkout (captures of real {@code siw}
 * traffic, specs, seeds).
 *
 * <p>Looked for, in order: the system property {@value #PROPERTY} (the parent pom's surefire
 * configuration sets it to {@code ../shared} of the reactor root), if it names an existing
 * directory; then {@code shared/} in the current directory or any ancestor, if it holds
 * {@code testdata/}.
 */
public final class SharedData {

    /** System property naming the shared directory. */
    public static final String PROPERTY = "iwarp.shared.dir";

    private static final Path DIR = locate();

    private SharedData() {
    }

    /** Whether the shared directory was found. */
    public static boolean available() {
        return DIR != null;
    }

    /**
     * Skips the calling test (JUnit assumption) when the shared directory is absent. Use only for
     * tests that cannot run without it; the CI always has it.
     */
    public static void assumeAvailable() {
        Assumptions.assumeTrue(available(), "no shared/ directory: set -D" + PROPERTY + " or check it out next to the repository");
    }

    /**
     * As {@link #assumeAvailable()}, the one-line reason naming what the test needs from the directory, e.g.
     * "skipped: needs the real siw captures (the shared data directory is absent: set -Diwarp.shared.dir=DIR or check
     * it out next to the repository)". Surefire keeps the line in target/surefire-reports (TEST-*.xml, "skipped").
     */
    public static void assumeAvailable(String needs) {
        Assumptions.assumeTrue(available(), () -> "skipped: needs " + needs + " (the shared data directory is absent: "
                + "set -D" + PROPERTY + "=DIR or check it out next to the repository)");
    }

    /**
     * The shared directory.
     *
     * @throws IllegalStateException if it was not found
     */
    public static Path dir() {
        if (DIR == null) {
            throw new IllegalStateException("no shared/ directory found (system property " + PROPERTY + "="
                    + System.getProperty(PROPERTY) + ", working directory " + Paths.get("").toAbsolutePath() + ")");
        }
        return DIR;
    }

    /** {@code shared/testdata/siw-pcap}: the siw captures with their tshark summaries. */
    public static Path siwPcapDir() {
        return dir().resolve("testdata").resolve("siw-pcap");
    }

    /** {@code shared/testdata/siw-pcap/<name>}, e.g. {@code siwPcap("rping-crc.pcap")}. */
    public static Path siwPcap(String name) {
        return siwPcapDir().resolve(name);
    }

    private static Path locate() {
        String property = System.getProperty(PROPERTY);
        if (property != null && !property.isBlank()) {
            Path p = Paths.get(property).toAbsolutePath().normalize();
            if (Files.isDirectory(p)) {
                return p;
            }
        }
        for (Path d = Paths.get("").toAbsolutePath(); d != null; d = d.getParent()) {
            Path candidate = d.resolve("shared");
            if (Files.isDirectory(candidate.resolve("testdata"))) {
                return candidate;
            }
        }
        return null;
    }
}
