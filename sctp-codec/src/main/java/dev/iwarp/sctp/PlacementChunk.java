package dev.iwarp.sctp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;

import java.util.Objects;

/**
 * One shim message: the fields of its header extension and its data (the octets after the extension),
 * plus the SCTP stream, PPID and U flag it travelled with. Immutable apart from the
 * reference count of its data.
 *
 * <p>Outbound, {@link #aws()} is ignored: {@link SctpPlacementCodec} stamps the next AWS, and stream,
 * PPID and U are always 0, 0 and 1 (our choice, see
 * SctpPlacementCodec). Inbound, {@link #aws()} is the received value, or
 * {@link #NO_AWS} when the peer's indication uses the 16-octet extension.
 */
public final class PlacementChunk extends DefaultByteBufHolder {
    /** {@link #aws()} of a chunk without an AWS field. */
    public static final long NO_AWS = -1;

    private final PlacementMode mode;
    private final int flags;
    private final int tag;
    private final long offset;
    private final long aws;
    private final int stream;
    private final int ppid;
    private final boolean unordered;

    public PlacementChunk(PlacementMode mode, int flags, int tag, long offset, long aws, int stream, int ppid,
                          boolean unordered, ByteBuf data) {
        super(data);
        this.mode = Objects.requireNonNull(mode, "mode");
        if ((flags & ~0xFF) != 0) {
            throw new IllegalArgumentException("Flags are 8 bits: " + flags);
        }
        if (aws < NO_AWS || aws > 0xFFFFFFFFL) {
            throw new IllegalArgumentException("AWS is 32 bits unsigned: " + aws);
        }
        this.flags = flags;
        this.tag = tag;
        this.offset = offset;
        this.aws = aws;
        this.stream = stream;
        this.ppid = ppid;
        this.unordered = unordered;
    }

    /** An outbound chunk (stream 0, PPID 0, unordered; AWS stamped by the codec). */
    public static PlacementChunk outbound(PlacementMode mode, int flags, int tag, long offset, ByteBuf data) {
        return new PlacementChunk(mode, flags, tag, offset, NO_AWS, 0, 0, true, data);
    }

    public PlacementMode mode() {
        return mode;
    }

    /** The 8 flag bits as received or to send ({@link PlacementFlags}). */
    public int flags() {
        return flags;
    }

    public boolean hasFlag(int mask) {
        return (flags & mask) != 0;
    }

    /** Placement Tag (32 bits). */
    public int tag() {
        return tag;
    }

    /** Placement Offset (64 bits, unsigned). */
    public long offset() {
        return offset;
    }

    /** Association Wide Sequence (unsigned 32 bits), or {@link #NO_AWS}. */
    public long aws() {
        return aws;
    }

    public int stream() {
        return stream;
    }

    public int ppid() {
        return ppid;
    }

    public boolean isUnordered() {
        return unordered;
    }

    /** The same header fields with {@code data}. */
    @Override
    public PlacementChunk replace(ByteBuf data) {
        return new PlacementChunk(mode, flags, tag, offset, aws, stream, ppid, unordered, data);
    }

    @Override
    public PlacementChunk retain() {
        super.retain();
        return this;
    }

    @Override
    public PlacementChunk touch(Object hint) {
        super.touch(hint);
        return this;
    }

    @Override
    public String toString() {
        return "PlacementChunk(" + mode + ", flags " + PlacementFlags.describe(flags)
                + String.format(", tag 0x%08x, offset 0x%016x", tag, offset)
                + (aws == NO_AWS ? "" : ", AWS " + aws) + ", stream " + stream + ", PPID " + ppid
                + (unordered ? ", U" : ", ordered") + ", " + content().readableBytes() + " octets)";
    }
}
