package dev.iwarp.verbs.internal;

import dev.iwarp.ddp.TaggedBuffer;
import dev.iwarp.ddp.TaggedBufferTable;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RdmaDevice;
import dev.iwarp.verbs.WcOpcode;
import dev.iwarp.verbs.WcStatus;

/**
 * Not API: the RDMA engine's one way to what {@link dev.iwarp.verbs} keeps from applications (a friend
 * accessor, as the JDK's {@code SharedSecrets}): making the {@link QueuePair} of an engine, adding
 * completions to a {@link CompletionQueue}, making {@link Completion}s, a region's tagged buffer and a
 * device's STag table. {@link dev.iwarp.verbs} installs the one instance when {@link QueuePair} is initialized, and {@link #get}
 * initializes it first, so the order classes load in does not matter. An engine class keeps the instance
 * in a {@code static final} field, where the JIT sees a constant: a call costs what the package-private
 * call it stands for did.
 */
public abstract class VerbsAccess {
    private static volatile VerbsAccess installed;

    /** Only {@link dev.iwarp.verbs} installs one ({@link #install} checks). */
    protected VerbsAccess() {
    }

    /** The instance {@link dev.iwarp.verbs} installed. */
    public static VerbsAccess get() {
        VerbsAccess a = installed;
        if (a == null) {
            try { // QueuePair's static initializer installs it
                Class.forName(QueuePair.class.getName(), true, QueuePair.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
            a = installed;
            if (a == null) {
                throw new IllegalStateException("dev.iwarp.verbs installed no VerbsAccess");
            }
        }
        return a;
    }

    /** Called once, by {@link dev.iwarp.verbs} itself. */
    public static synchronized void install(VerbsAccess access) {
        if (installed != null || !access.getClass().getPackageName().equals(QueuePair.class.getPackageName())) {
            throw new IllegalStateException("VerbsAccess is installed by dev.iwarp.verbs, once");
        }
        installed = access;
    }

    /** The queue pair applications use to reach {@code engine}. */
    public abstract QueuePair queuePair(QueuePairEngine engine);

    /** Hands {@code c} to the queue's listener or queues it (on the event loop). */
    public abstract void add(CompletionQueue cq, Completion c);

    /** A successful send-queue completion; no object for a reusing listener. */
    public abstract void addSuccess(CompletionQueue cq, long wrId, WcOpcode opcode, int byteLength,
                                    long immediateData);

    /** A successful completion; no object for a reusing listener. */
    public abstract void addSuccess(CompletionQueue cq, long wrId, WcOpcode opcode, int byteLength,
                                    boolean invalidated, int invalidatedStag, long immediateData, boolean solicited);

    /** A successful completion, to be added later (it waits for earlier ones). */
    public abstract Completion success(long wrId, WcOpcode opcode, int byteLength, boolean invalidated,
                                       int invalidatedStag, long immediateData, boolean solicited);

    /** A completion in error, with a detail for logs. */
    public abstract Completion error(long wrId, WcOpcode opcode, WcStatus status, String detail);

    /** The tagged buffer (ddp-codec) {@code region} is registered as. */
    public abstract TaggedBuffer taggedBuffer(MemoryRegion region);

    /** The STag table (ddp-codec) of {@code device}, shared by all its queue pairs. */
    public abstract TaggedBufferTable taggedBufferTable(RdmaDevice device);
}
