package dev.iwarp.server.perftest;

import java.nio.charset.StandardCharsets;

/**
 * The version string perftest announces in its first control Send: ASCII "MAJOR.MINOR" padded with NULs to 16
 * octets. Compared as (major, minor) numbers, as perftest does ("5.70" > "5.60", "6.06" < "6.28").
 */
public record PerftestVersion(int major, int minor, String text) implements Comparable<PerftestVersion> {
    /** Octets of the version message. */
    public static final int LENGTH = 16;
    /** What we announce: the version of Debian 12's perftest; any value in [5.70, 6.28) behaves the same. */
    public static final PerftestVersion OURS = parse("6.06");
    /** Oldest peer accepted: older ones run a different control flow and newer perftest refuses them too. */
    public static final PerftestVersion FLOOR = parse("5.70");
    /** The one version that negotiates parameters unconditionally after the MTU message. */
    public static final PerftestVersion NEGOTIATES_ALWAYS = parse("6.28");
    /** From here on a peer sends and expects 64-octet destination structs. */
    public static final PerftestVersion WIDE_DEST = parse("6.29");

    /** Parses "6.06"; throws {@link IllegalArgumentException} for anything else. */
    public static PerftestVersion parse(String text) {
        int dot = text.indexOf('.');
        if (dot <= 0 || dot == text.length() - 1) {
            throw new IllegalArgumentException("not a perftest version: \"" + printable(text) + "\"");
        }
        try {
            return new PerftestVersion(Integer.parseInt(text.substring(0, dot)), Integer.parseInt(text.substring(dot + 1)), text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a perftest version: \"" + printable(text) + "\"");
        }
    }

    /** Decodes the received message: the text up to the first NUL (or all of it). */
    public static PerftestVersion decode(byte[] message, int length) {
        int end = 0;
        while (end < Math.min(length, LENGTH) && message[end] != 0) {
            end++;
        }
        return parse(new String(message, 0, end, StandardCharsets.US_ASCII));
    }

    /** The 16-octet message. */
    public byte[] encode() {
        byte[] m = new byte[LENGTH];
        byte[] t = text.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(t, 0, m, 0, Math.min(t.length, LENGTH - 1));
        return m;
    }

    public boolean isBefore(PerftestVersion other) {
        return compareTo(other) < 0;
    }

    @Override
    public int compareTo(PerftestVersion o) {
        return major != o.major ? Integer.compare(major, o.major) : Integer.compare(minor, o.minor);
    }

    @Override
    public String toString() {
        return text;
    }

    private static String printable(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            b.append(c >= 0x20 && c < 0x7f ? String.valueOf(c) : String.format("\\x%02x", (int) c));
        }
        return b.toString();
    }
}
