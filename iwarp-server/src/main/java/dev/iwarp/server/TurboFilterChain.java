package dev.iwarp.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.TurboFilterList;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import org.slf4j.Marker;

import java.util.ArrayList;
import java.util.List;

/**
 * Several Logback turbo filters as the one filter of a logging context. Logback asks a context's turbo filters on
 * every logging call, enabled or not (an {@code isTraceEnabled()} per FPDU on an event loop), and when its list
 * holds more than one it copies the list into a new array for each call: 24 octets per call with two filters, the
 * most of what {@code bench} and {@code serve} allocated per message. With one filter in the list it calls that one
 * directly; this one asks its filters in turn over a fixed array, as Logback would: the first reply that is not
 * NEUTRAL decides.
 */
final class TurboFilterChain extends TurboFilter {
    private final TurboFilter[] filters;

    private TurboFilterChain(List<TurboFilter> filters) {
        this.filters = filters.toArray(new TurboFilter[0]);
    }

    @Override
    public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
        for (TurboFilter f : filters) {
            FilterReply r = f.decide(marker, logger, level, format, params, t);
            if (r != FilterReply.NEUTRAL) {
                return r;
            }
        }
        return FilterReply.NEUTRAL;
    }

    @Override
    public void stop() {
        for (TurboFilter f : filters) {
            f.stop();
        }
        super.stop();
    }

    /**
     * Adds {@code filter} (started) after the turbo filters {@code context} has, keeping one filter in its list: the
     * filter itself when the list is empty, else a chain of those there and it.
     */
    static synchronized void add(LoggerContext context, TurboFilter filter) {
        List<TurboFilter> all = new ArrayList<>(filtersOf(context));
        all.add(filter);
        install(context, all);
    }

    /**
     * As {@link #add}, but asked before the filters {@code context} has: for a filter that must see every call
     * another filter could ACCEPT (an ACCEPT skips the filters after it).
     */
    static synchronized void addFirst(LoggerContext context, TurboFilter filter) {
        List<TurboFilter> all = new ArrayList<>();
        all.add(filter);
        all.addAll(filtersOf(context));
        install(context, all);
    }

    /** {@link #addFirst}, unless {@code context} has {@code filter} already (in its list or a chain's). */
    static synchronized void addFirstIfAbsent(LoggerContext context, TurboFilter filter) {
        if (!filtersOf(context).contains(filter)) {
            addFirst(context, filter);
        }
    }

    private static void install(LoggerContext context, List<TurboFilter> all) {
        TurboFilterList list = context.getTurboFilterList();
        if (all.size() == 1) { // the list is empty
            context.addTurboFilter(all.get(0));
            return;
        }
        TurboFilterChain chain = new TurboFilterChain(all);
        chain.setContext(context);
        chain.setName("iwarp-turbo-filters");
        chain.start();
        list.set(0, chain); // a call meanwhile sees the chain and the filters after it: at worst one asked twice
        list.removeIf(f -> f != chain);
    }

    /** The turbo filters of {@code context}: those in its list, a chain's in its place. */
    static List<TurboFilter> filtersOf(LoggerContext context) {
        List<TurboFilter> all = new ArrayList<>();
        for (TurboFilter f : context.getTurboFilterList()) {
            if (f instanceof TurboFilterChain c) {
                all.addAll(List.of(c.filters));
            } else {
                all.add(f);
            }
        }
        return all;
    }
}
