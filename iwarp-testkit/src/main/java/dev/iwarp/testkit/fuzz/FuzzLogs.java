package dev.iwarp.testkit.fuzz;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A fuzz target class's logging: {@code @ExtendWith(FuzzLogs.class)} sends the project's WARN and ERROR records
 * to {@link FuzzChecks}' capture before the class's first input ({@link FuzzChecks#captureLogs()}) and puts
 * logging back after its last ({@link FuzzChecks#restoreLogs()}).
 */
public final class FuzzLogs implements BeforeAllCallback, AfterAllCallback {
    @Override
    public void beforeAll(ExtensionContext context) {
        FuzzChecks.captureLogs();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        FuzzChecks.restoreLogs();
    }
}
