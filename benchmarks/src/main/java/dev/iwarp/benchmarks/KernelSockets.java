package dev.iwarp.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The kernel's side of held TCP connections, which no process's RSS counts: {@code /proc/net/sockstat}'s and
 * {@code sockstat6}'s TCP lines (sockets in use, IPv4 and IPv6: a JDK socket is an IPv6 one unless
 * java.net.preferIPv4Stack is set; "mem", the pages charged to every TCP socket's buffers) and, where {@code /proc/slabinfo} is readable (root),
 * the slab caches a connected TCP socket takes objects from (the socket itself, its inode, file and dentry, its
 * epoll entry). Both count every socket of the host: on loopback, each connection's two ends.
 */
final class KernelSockets {
    /** Slab caches one connected, epoll-registered TCP socket takes an object from. */
    static final List<String> SLABS = List.of("TCP", "TCPv6", "sock_inode_cache", "filp", "dentry",
            "eventpoll_epi", "eventpoll_pwq");

    /** TCP sockets in use, pages charged to their buffers, and the slab caches' active bytes (empty if unreadable). */
    record Reading(long tcpInUse, long tcpMemPages, Map<String, Long> slabBytes) {
        long slabTotal() {
            return slabBytes.values().stream().mapToLong(Long::longValue).sum();
        }
    }

    private KernelSockets() {
    }

    static Reading read() {
        long inUse = -1;
        long mem = -1;
        try {
            List<String> lines = new java.util.ArrayList<>(Files.readAllLines(Path.of("/proc/net/sockstat")));
            if (Files.isReadable(Path.of("/proc/net/sockstat6"))) {
                lines.addAll(Files.readAllLines(Path.of("/proc/net/sockstat6")));
            }
            for (String line : lines) {
                if (line.startsWith("TCP:") || line.startsWith("TCP6:")) { // TCP: inuse N orphan N tw N alloc N mem N
                    String[] f = line.trim().split("\\s+");
                    for (int i = 1; i + 1 < f.length; i += 2) {
                        if (f[i].equals("inuse")) {
                            inUse = Math.max(inUse, 0) + Long.parseLong(f[i + 1]);
                        } else if (f[i].equals("mem")) {
                            mem = Long.parseLong(f[i + 1]);
                        }
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        Map<String, Long> slabs = new LinkedHashMap<>();
        try { // name active_objs num_objs objsize ...
            for (String line : Files.readAllLines(Path.of("/proc/slabinfo"))) {
                String[] f = line.trim().split("\\s+");
                if (f.length > 3 && SLABS.contains(f[0])) {
                    slabs.put(f[0], Long.parseLong(f[1]) * Long.parseLong(f[3]));
                }
            }
        } catch (IOException | RuntimeException e) {
            // not root: no slab figures
        }
        return new Reading(inUse, mem, slabs);
    }

    static String describe(Reading r) {
        String s = String.format("kernel: TCP sockets in use %d, socket buffer memory %d pages", r.tcpInUse(),
                r.tcpMemPages());
        return r.slabBytes().isEmpty() ? s + " (no /proc/slabinfo)"
                : s + String.format(", socket slabs %.1f MiB", r.slabTotal() / 1048576.0);
    }

    /** The growth per held connection (both of its ends, as loopback holds them in one kernel). */
    static String perConnection(Reading before, Reading after, int open) {
        if (open <= 0 || before.tcpInUse() < 0) {
            return "kernel per connection: no figures";
        }
        String s = String.format("kernel per connection (both ends): TCP sockets +%.2f, socket buffers +%.2f KiB",
                (after.tcpInUse() - before.tcpInUse()) / (double) open,
                (after.tcpMemPages() - before.tcpMemPages()) * 4.0 / open);
        if (!after.slabBytes().isEmpty() && !before.slabBytes().isEmpty()) {
            StringBuilder b = new StringBuilder();
            for (Map.Entry<String, Long> e : after.slabBytes().entrySet()) {
                long d = e.getValue() - before.slabBytes().getOrDefault(e.getKey(), 0L);
                b.append(String.format(", %s %+.2f", e.getKey(), d / 1024.0 / open));
            }
            s += String.format(", slabs +%.2f KiB (%s)", (after.slabTotal() - before.slabTotal()) / 1024.0 / open,
                    b.substring(2));
        }
        return s;
    }
}
