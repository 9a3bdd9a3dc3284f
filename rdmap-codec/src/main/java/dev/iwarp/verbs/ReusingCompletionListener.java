package dev.iwarp.verbs;

/**
 * Called for each completion of a {@link CompletionQueue}, on the connection's event loop, with an object
 * the queue refills for every call: no object per completion. Keep {@link CompletionView#toCompletion()}
 * to use a completion after the call returns.
 */
@FunctionalInterface
public interface ReusingCompletionListener {
    /** Called on the connection's event loop for each completion; must not block nor keep {@code completion}. */
    void onCompletion(CompletionView completion);
}
