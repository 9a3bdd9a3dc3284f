package dev.iwarp.vitcp;

/**
 * One option of the CE Header option list: 2-octet Type, 2-octet Length (of the whole option, so 4 when there
 * is no data), then Length-4 octets of data. draft-dicecco-vitcp-01 §3.3 "Options".
 * End of Option List (type 0) has no length and no data and is not represented by this class.
 *
 * @param type   the option type
 * @param length the option length as on the wire
 */
public record ViCeOption(int type, int length) {
    /** Option type that ends the option list. */
    public static final int END_OF_OPTION_LIST = 0;
    /** Option type of the CRC option (draft §3.6). */
    public static final int CRC = 1;
    /** Option type of the Urgent Marker option. */
    public static final int URGENT_MARKER = 2;

    /** The CRC option as sent. */
    public static final ViCeOption CRC_OPTION = new ViCeOption(CRC, 4);
    /** The Urgent Marker option as sent. */
    public static final ViCeOption URGENT_MARKER_OPTION = new ViCeOption(URGENT_MARKER, 4);
}
