package dev.iwarp.server.perftest;

/** A run that cannot go on: the message is the one line the user sees. */
public final class PerftestException extends Exception {
    public PerftestException(String message) {
        super(message);
    }
}
