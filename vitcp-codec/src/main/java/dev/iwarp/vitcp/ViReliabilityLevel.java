package dev.iwarp.vitcp;

/** VI reliability levels [VIAR] as Calling Attributes bits 0..2. draft-dicecco-vitcp-01 §3.3. */
public enum ViReliabilityLevel {
    UNRELIABLE(ViCallingAttributes.UNRELIABLE),
    RELIABLE_DELIVERY(ViCallingAttributes.RELIABLE_DELIVERY),
    RELIABLE_RECEPTION(ViCallingAttributes.RELIABLE_RECEPTION);

    private final int bit;

    ViReliabilityLevel(int bit) {
        this.bit = bit;
    }

    public int bit() {
        return bit;
    }

    /** The level whose bit alone is set in {@code attributes}, or {@code null} when none or several are. */
    public static ViReliabilityLevel fromAttributes(int attributes) {
        int bits = attributes & 0x7;
        for (ViReliabilityLevel l : values()) {
            if (bits == l.bit) {
                return l;
            }
        }
        return null;
    }
}
