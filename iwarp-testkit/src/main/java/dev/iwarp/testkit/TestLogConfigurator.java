package dev.iwarp.testkit;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.core.spi.ContextAwareBase;

/**
 * Logback's configuration for every module's tests, in one place (found through
 * {@code META-INF/services}, ahead of any {@code logback.xml}; there is no {@code logback-test.xml}).
 * Events go to {@link TestLog}, which keeps them for the test that is running and prints them only
 * when that test fails: a passing run prints no log line. Levels: {@code dev.iwarp} at INFO
 * ({@code -Diwarp.test.log.level=DEBUG} for more), Netty and the rest at WARN.
 * {@code -Diwarp.test.log.echo=true} also prints every event as it happens.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_TOP_PRIORITY)
public final class TestLogConfigurator extends ContextAwareBase implements Configurator {
    @Override
    public ExecutionStatus configure(LoggerContext context) {
        TestLog appender = new TestLog();
        appender.setContext(context);
        appender.setName(TestLog.NAME);
        appender.start();
        ch.qos.logback.classic.Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.WARN);
        root.addAppender(appender);
        context.getLogger("io.netty").setLevel(Level.WARN);
        context.getLogger("dev.iwarp").setLevel(Level.toLevel(System.getProperty("iwarp.test.log.level"), Level.INFO));
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }
}
