package dev.iwarp.verbs;

/** Called for each completion added to a {@link CompletionQueue}, on the connection's event loop. */
@FunctionalInterface
public interface CompletionListener {
    /** Called on the connection's event loop for each completion; must not block. */
    void onCompletion(Completion completion);
}
