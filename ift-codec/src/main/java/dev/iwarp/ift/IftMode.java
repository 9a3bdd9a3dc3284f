package dev.iwarp.ift;

/** What runs over IFT, fixed by the R bits of both indications (IFT draft §4.2 R). */
public enum IftMode {
    /** Both R bits set: RDMAP over DDP over IFT. */
    RDMA,
    /** Both R bits clear: a DDP ULP without RDMAP. */
    DDP
}
