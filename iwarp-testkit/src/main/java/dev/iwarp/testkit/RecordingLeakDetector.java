package dev.iwarp.testkit;

import io.netty.util.ResourceLeakDetector;

import java.util.ArrayList;
import java.util.List;

/**
 * Netty's leak detector with its leak listener ({@link ResourceLeakDetector#setLeakListener}) recording every
 * leak for {@link LeakDetectionExtension}, instead of logging it. Netty creates it through
 * {@code -Dio.netty.customResourceLeakDetector=dev.iwarp.testkit.RecordingLeakDetector} (the build's surefire
 * argLine; the extension sets it too, for runs outside Maven).
 *
 * @param <T> the type of resource tracked
 */
public final class RecordingLeakDetector<T> extends ResourceLeakDetector<T> {
    private static final List<String> LEAKS = new ArrayList<>();
    private static volatile boolean created;

    /**
     * Called by Netty's leak detector factory.
     *
     * @param resourceType     the class of the resources tracked
     * @param samplingInterval Netty's sampling interval (unused at paranoid level)
     */
    public RecordingLeakDetector(Class<?> resourceType, int samplingInterval) {
        super(resourceType, samplingInterval);
        created = true;
        setLeakListener((type, records) -> {
            synchronized (LEAKS) {
                LEAKS.add("LEAK: " + type + ".release() was not called before it was garbage-collected."
                        + (records.isEmpty() ? "" : " Recent access records:" + records));
            }
        });
    }

    /**
     * Called by Netty's leak detector factory (the older constructor shape).
     *
     * @param resourceType     the class of the resources tracked
     * @param samplingInterval Netty's sampling interval
     * @param maxActive        ignored, as Netty does
     */
    public RecordingLeakDetector(Class<?> resourceType, int samplingInterval, long maxActive) {
        this(resourceType, samplingInterval);
    }

    /** Whether Netty created at least one detector of this class (the leak hook is in place). */
    static boolean inUse() {
        return created;
    }

    /** Returns and forgets the leaks recorded so far. */
    static List<String> drain() {
        synchronized (LEAKS) {
            List<String> out = new ArrayList<>(LEAKS);
            LEAKS.clear();
            return out;
        }
    }

    @Override
    protected boolean needReport() {
        return true; // report to the listener whatever the logger's level
    }

    @Override
    protected void reportTracedLeak(String resourceType, String records) {
        // the listener records it; nothing is logged
    }

    @Override
    protected void reportUntracedLeak(String resourceType) {
        // the listener records it; nothing is logged
    }
}
