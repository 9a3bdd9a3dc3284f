package dev.iwarp.verbs;

import dev.iwarp.ddp.TaggedBuffer;
import dev.iwarp.ddp.TaggedBufferTable;
import dev.iwarp.verbs.internal.QueuePairEngine;
import dev.iwarp.verbs.internal.VerbsAccess;

/** What the RDMA engine may do with this package's package-private members; installed by {@link QueuePair}. */
final class EngineAccess extends VerbsAccess {
    @Override
    public QueuePair queuePair(QueuePairEngine engine) {
        return new QueuePair(engine);
    }

    @Override
    public void add(CompletionQueue cq, Completion c) {
        cq.add(c);
    }

    @Override
    public void addSuccess(CompletionQueue cq, long wrId, WcOpcode opcode, int byteLength, long immediateData) {
        cq.addSuccess(wrId, opcode, byteLength, immediateData);
    }

    @Override
    public void addSuccess(CompletionQueue cq, long wrId, WcOpcode opcode, int byteLength, boolean invalidated,
                           int invalidatedStag, long immediateData, boolean solicited) {
        cq.addSuccess(wrId, opcode, byteLength, invalidated, invalidatedStag, immediateData, solicited);
    }

    @Override
    public Completion success(long wrId, WcOpcode opcode, int byteLength, boolean invalidated, int invalidatedStag,
                              long immediateData, boolean solicited) {
        return Completion.success(wrId, opcode, byteLength, invalidated, invalidatedStag, immediateData, solicited);
    }

    @Override
    public Completion error(long wrId, WcOpcode opcode, WcStatus status, String detail) {
        return Completion.error(wrId, opcode, status, detail);
    }

    @Override
    public TaggedBuffer taggedBuffer(MemoryRegion region) {
        return region.tagged();
    }

    @Override
    public TaggedBufferTable taggedBufferTable(RdmaDevice device) {
        return device.table();
    }
}
