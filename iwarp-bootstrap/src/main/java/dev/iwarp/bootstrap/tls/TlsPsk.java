package dev.iwarp.bootstrap.tls;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * An external pre-shared key for TLS 1.3 (RFC 8446 §2.2, §4.2.11): an identity both sides know and a
 * secret of at least 16 octets. Read it from a file or an environment variable, never from a command
 * line (which other users of the machine can see). The text form is {@code IDENTITY:HEXKEY} on one
 * line, e.g. {@code node1:00112233445566778899aabbccddeeff}. Immutable.
 */
public final class TlsPsk {
    /** The environment variable {@link #fromEnvironment()} reads. */
    public static final String ENVIRONMENT_VARIABLE = "IWARP_TLS_PSK";
    /** Smallest key accepted (128 bits). */
    public static final int MIN_KEY_LENGTH = 16;

    private final byte[] identity;
    private final byte[] key;

    private TlsPsk(byte[] identity, byte[] key) {
        if (identity.length == 0 || identity.length > 0xFFFF) {
            throw new IllegalArgumentException("PSK identity must be 1..65535 octets");
        }
        if (key.length < MIN_KEY_LENGTH) {
            throw new IllegalArgumentException("PSK key must be at least " + MIN_KEY_LENGTH + " octets, was " + key.length);
        }
        this.identity = identity;
        this.key = key;
    }

    public static TlsPsk of(byte[] identity, byte[] key) {
        return new TlsPsk(identity.clone(), key.clone());
    }

    /** Parses {@code IDENTITY:HEXKEY} (surrounding white space ignored). */
    public static TlsPsk parse(String text) {
        String t = text.strip();
        int colon = t.lastIndexOf(':');
        if (colon <= 0 || colon == t.length() - 1) {
            throw new IllegalArgumentException("a PSK is written IDENTITY:HEXKEY (e.g. node1:00112233445566778899aabbccddeeff)");
        }
        byte[] key;
        try {
            key = HexFormat.of().parseHex(t.substring(colon + 1));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("the PSK key after the colon must be hex digits (an even number of them)");
        }
        return new TlsPsk(t.substring(0, colon).getBytes(StandardCharsets.UTF_8), key);
    }

    /** Reads {@code IDENTITY:HEXKEY} from the first non-empty line of {@code file}. */
    public static TlsPsk fromFile(Path file) throws IOException {
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (!line.isBlank() && !line.startsWith("#")) {
                try {
                    return parse(line);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(file + ": " + e.getMessage());
                }
            }
        }
        throw new IllegalArgumentException(file + ": no PSK line (IDENTITY:HEXKEY)");
    }

    /** Reads {@code IDENTITY:HEXKEY} from {@value #ENVIRONMENT_VARIABLE}, or {@code null} when unset. */
    public static TlsPsk fromEnvironment() {
        String v = System.getenv(ENVIRONMENT_VARIABLE);
        return v == null || v.isBlank() ? null : parse(v);
    }

    public byte[] identity() {
        return identity.clone();
    }

    public String identityString() {
        return new String(identity, StandardCharsets.UTF_8);
    }

    byte[] key() {
        return key.clone();
    }

    boolean sameIdentity(byte[] other) {
        return Arrays.equals(identity, other);
    }

    /** The identity only: the key never appears in logs. */
    @Override
    public String toString() {
        return "PSK " + identityString();
    }
}
