package dev.iwarp.server.wire;

/**
 * What a registered region allows. iWARP: the verbs {@code Access} flags. VI: {@code REMOTE_READ}/
 * {@code REMOTE_WRITE} are the VIA memory attributes EnableRdmaRead/EnableRdmaWrite; VI has no local-write flag
 * (every registered region may be written locally), so {@code LOCAL_WRITE} means nothing there.
 */
public enum WireAccess {
    LOCAL_WRITE,
    REMOTE_READ,
    REMOTE_WRITE
}
