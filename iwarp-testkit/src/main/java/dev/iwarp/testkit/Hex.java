package dev.iwarp.testkit;

import java.io.ByteArrayOutputStream;

/**
 * Hex strings for test vectors: parsing annotated hex, and dumps for assertion messages.
 *
 * <p>{@link #parse} reads back what {@link #dump} writes.
 */
public final class Hex {

    private static final char[] DIGITS = "0123456789abcdef".toCharArray();

    private Hex() {
    }

    /**
     * Parses hex digits (either case), ignoring whitespace, newlines, colons, and comments that run
     * from {@code //} or {@code #} to the end of the line. Example:
     * <pre>
     * 4d50 4120 4944 2052 6571 2046 7261 6d65  // "MPA ID Req Frame"
     * 50 02 00 04                              # flags, rev, PD_Length
     * </pre>
     *
     * @throws IllegalArgumentException on any other character, or an odd number of digits
     */
    public static byte[] parse(String text) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int high = -1; // pending high nibble
        int line = 1;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '#' || (c == '/' && i + 1 < text.length() && text.charAt(i + 1) == '/')) {
                while (i + 1 < text.length() && text.charAt(i + 1) != '\n') {
                    i++;
                }
                continue;
            }
            if (c == '\n') {
                line++;
            }
            if (Character.isWhitespace(c) || c == ':') {
                continue;
            }
            int v = Character.digit(c, 16);
            if (v < 0) {
                throw new IllegalArgumentException("not a hex digit: '" + c + "' at line " + line);
            }
            if (high < 0) {
                high = v;
            } else {
                out.write(high << 4 | v);
                high = -1;
            }
        }
        if (high >= 0) {
            throw new IllegalArgumentException("odd number of hex digits");
        }
        return out.toByteArray();
    }

    /** Lower-case hex digits, no separators: {@code "4d504120"}. */
    public static String toHex(byte[] bytes) {
        StringBuilder sb = new StringBuilder(bytes.length * 2);
        for (byte b : bytes) {
            sb.append(DIGITS[(b >> 4) & 0xF]).append(DIGITS[b & 0xF]);
        }
        return sb.toString();
    }

    /**
     * A multi-line dump, 16 bytes a line, offset and printable ASCII in a trailing comment:
     * <pre>
     * 4d 50 41 20 49 44 20 52  65 71 20 46 72 61 6d 65  // 0000 MPA ID Req Frame
     * 50 02 00 04 00 01 00 01                           // 0010 P.......
     * </pre>
     * Empty input gives an empty string.
     */
    public static String dump(byte[] bytes) {
        StringBuilder sb = new StringBuilder();
        for (int line = 0; line < bytes.length; line += 16) {
            StringBuilder ascii = new StringBuilder();
            for (int i = line; i < line + 16; i++) {
                if (i == line + 8) {
                    sb.append(' ');
                }
                if (i < bytes.length) {
                    int b = bytes[i] & 0xFF;
                    sb.append(DIGITS[b >> 4]).append(DIGITS[b & 0xF]).append(' ');
                    ascii.append(b >= 0x20 && b < 0x7F ? (char) b : '.');
                } else {
                    sb.append("   ");
                }
            }
            sb.append(" // ").append(String.format("%04x", line)).append(' ').append(ascii).append('\n');
        }
        return sb.toString();
    }
}
