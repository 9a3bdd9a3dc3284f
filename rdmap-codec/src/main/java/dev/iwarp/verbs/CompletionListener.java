package dev.iwarp.verbs;

/** Called for each completion added to a {@link CompletionQueue}, on the connection's event loop. */
@FunctionalInterface
public interface CompletionListener {
    void onCompletion(Completion completion);
}
