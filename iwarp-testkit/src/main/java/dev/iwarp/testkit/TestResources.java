package dev.iwarp.testkit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.ArrayList;
import java.util.List;

/**
 * What a test over real channels opens and allocates, given back after each test: every closeable registered with
 * {@link #closeAfter}, in the reverse order, then every buffer. A test class holds it in an instance field with
 * {@code @RegisterExtension} (its {@code afterEach} then runs before the leak check's, which is registered
 * first); other holders call {@link #close()}. Not {@link AutoCloseable}: its close may be interrupted while it
 * waits for channels to close, which a try-with-resources would have to handle (javac's {@code [try]} lint).
 */
public final class TestResources implements AfterEachCallback {
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final List<ByteBuf> buffers = new ArrayList<>();

    /** Closes {@code closeable} after the test, before everything registered earlier; returns it. */
    public <T extends AutoCloseable> T closeAfter(T closeable) {
        closeables.add(closeable);
        return closeable;
    }

    /** Releases {@code buffer} after the test, once everything was closed; returns it. */
    public ByteBuf releaseAfter(ByteBuf buffer) {
        buffers.add(buffer);
        return buffer;
    }

    /**
     * A pooled direct buffer of exactly {@code size} octets, octet {@code i} being {@code i * step + seed}, released
     * after the test. Filled with one write: under the paranoid leak detector every buffer operation records a trace.
     */
    public ByteBuf buffer(int size, int step, int seed) {
        byte[] content = new byte[size];
        for (int i = 0; i < size; i++) {
            content[i] = (byte) (i * step + seed);
        }
        return releaseAfter(PooledByteBufAllocator.DEFAULT.directBuffer(size, size).writeBytes(content));
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        close();
    }

    /** Closes what was registered, last first, then releases the buffers; holds nothing after. */
    public void close() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        closeables.clear();
        buffers.forEach(ByteBuf::release);
        buffers.clear();
    }
}
