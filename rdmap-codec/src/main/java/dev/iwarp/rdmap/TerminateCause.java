package dev.iwarp.rdmap;

import dev.iwarp.ddp.DdpError;

/**
 * What a Terminate reports (RFC 5040 §4.7): the layer that detected the error, its error type
 * (EType) and error code. Values of all three registries (RFC 6580 registries, RFC 5041 §7.2) and anything a
 * peer sends are representable; {@link #registered()} tells the difference.
 *
 * @param layer     0 RDMAP, 1 DDP, 2 LLP (4 bits)
 * @param errorType EType within the layer (4 bits)
 * @param errorCode Error Code within the type (8 bits)
 */
public record TerminateCause(int layer, int errorType, int errorCode) {
    public static final int LAYER_RDMAP = RdmapError.LAYER;
    public static final int LAYER_DDP = DdpError.LAYER;
    /** The lower layer protocol: MPA for iWARP over TCP. */
    public static final int LAYER_LLP = 2;
    /** The only LLP EType of MPA (RFC 5044 §8). */
    public static final int ETYPE_MPA = 0;

    /** MPA codes 1-7 (RFC 5044 §8, RFC 6581 §6), index = code. */
    private static final String[] MPA_CODES = {null,
            "TCP connection closed, terminated or lost",
            "MPA CRC error",
            "MPA marker and ULPDU_Length disagree",
            "invalid MPA Request or Reply frame",
            "local catastrophic error",
            "insufficient IRD resources",
            "no matching RTR option"};

    public TerminateCause {
        if ((layer & ~0xF) != 0 || (errorType & ~0xF) != 0 || (errorCode & ~0xFF) != 0) {
            throw new IllegalArgumentException(String.format(
                    "Layer and EType are 4 bits, Error Code 8 bits: %d/%d/%d", layer, errorType, errorCode));
        }
    }

    public static TerminateCause of(RdmapError error) {
        return new TerminateCause(LAYER_RDMAP, error.errorType(), error.errorCode());
    }

    public static TerminateCause of(DdpError error) {
        return new TerminateCause(LAYER_DDP, error.errorType(), error.errorCode());
    }

    /** An LLP error reported by MPA: Layer 2, EType 0, the MPA error code (RFC 6580 registries). */
    public static TerminateCause ofMpa(int mpaErrorCode) {
        return new TerminateCause(LAYER_LLP, ETYPE_MPA, mpaErrorCode);
    }

    /** The RDMAP error, or {@code null} when this is not a registered Layer-0 cause. */
    public RdmapError rdmapError() {
        return layer == LAYER_RDMAP ? RdmapError.find(errorType, errorCode) : null;
    }

    /** The DDP error, or {@code null} when this is not a registered Layer-1 cause. */
    public DdpError ddpError() {
        if (layer != LAYER_DDP) {
            return null;
        }
        for (DdpError e : DdpError.values()) {
            if (e.errorType() == errorType && (e.errorCode() == errorCode || errorType == 0)) {
                return e;
            }
        }
        return null;
    }

    /** Whether the registries define this Layer/EType/Code. */
    public boolean registered() {
        return description() != null;
    }

    /** EType 0 of any layer: a local catastrophic error. */
    public boolean localCatastrophic() {
        return errorType == 0 && (layer == LAYER_RDMAP || layer == LAYER_DDP);
    }

    /**
     * Whether a Terminate for this cause carries the offending segment's length and DDP header
     * (M=1, D=1), per the table of RFC 5040 §4.7: not for LLP errors (the header cannot be trusted),
     * local catastrophic errors, DDP version errors and RDMAP version or OpCode errors (the header's
     * layout is unknown), nor for unregistered causes.
     */
    public boolean carriesDdpHeader() {
        if (!registered() || localCatastrophic() || layer == LAYER_LLP) {
            return false;
        }
        if (layer == LAYER_DDP) {
            return ddpError().carriesDdpHeader();
        }
        RdmapError e = rdmapError();
        return e != RdmapError.INVALID_RDMAP_VERSION && e != RdmapError.UNEXPECTED_OPCODE;
    }

    /**
     * Whether a Terminate for this cause may carry the Terminated RDMA Header (R=1): only RDMAP
     * Remote Protection errors on an RDMA Read Request (RFC 5040 §4.7).
     */
    public boolean mayCarryRdmaHeader() {
        return layer == LAYER_RDMAP && errorType == RdmapError.ETYPE_REMOTE_PROTECTION && registered();
    }

    /** The registry's wording for this cause, or {@code null} when unregistered. */
    public String description() {
        switch (layer) {
            case LAYER_RDMAP: {
                RdmapError e = rdmapError();
                return e == null ? null : e.description();
            }
            case LAYER_DDP: {
                DdpError e = ddpError();
                return e == null ? null : e.description();
            }
            case LAYER_LLP:
                return errorType == ETYPE_MPA && errorCode < MPA_CODES.length ? MPA_CODES[errorCode] : null;
            default:
                return null;
        }
    }

    /** The layer's name. */
    public String layerName() {
        switch (layer) {
            case LAYER_RDMAP:
                return "RDMAP";
            case LAYER_DDP:
                return "DDP";
            case LAYER_LLP:
                return "LLP";
            default:
                return "reserved layer";
        }
    }

    /** The EType's name within its layer (RFC 5040 §4.7, RFC 5041 §7.2, RFC 5044 §8). */
    public String errorTypeName() {
        if (localCatastrophic()) {
            return "local catastrophic error";
        }
        switch (layer * 16 + errorType) {
            case LAYER_RDMAP * 16 + RdmapError.ETYPE_REMOTE_PROTECTION:
                return "remote protection error";
            case LAYER_RDMAP * 16 + RdmapError.ETYPE_REMOTE_OPERATION:
                return "remote operation error";
            case LAYER_DDP * 16 + 1:
                return "tagged buffer error";
            case LAYER_DDP * 16 + 2:
                return "untagged buffer error";
            case LAYER_LLP * 16 + ETYPE_MPA:
                return "MPA error";
            default:
                return "reserved error type";
        }
    }

    /**
     * One line for logs, e.g. {@code "LLP 2/0/0x02 MPA error: MPA CRC error"}; unregistered causes
     * end in {@code "(unregistered)"}.
     */
    public String describe() {
        String d = description();
        return String.format("%s %d/%d/0x%02x %s: %s", layerName(), layer, errorType, errorCode, errorTypeName(),
                d == null ? "(unregistered)" : d);
    }

    @Override
    public String toString() {
        return String.format("%d/%d/0x%02x", layer, errorType, errorCode);
    }
}
