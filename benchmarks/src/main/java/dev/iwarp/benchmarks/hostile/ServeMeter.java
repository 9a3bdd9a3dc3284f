package dev.iwarp.benchmarks.hostile;

import com.sun.tools.attach.VirtualMachine;

import javax.management.MBeanServerConnection;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * serve's figures from outside the process: VmRSS and CPU time from /proc, and through the Attach API and the JVM's
 * local JMX agent the heap in use after a full GC and the JDK's direct buffer pool (where Netty's arenas live on
 * JDK 17 without reflective access). A JVM that no longer answers within the timeout gives -1 figures and says so.
 */
final class ServeMeter implements AutoCloseable {
    /** One reading; heap and direct are -1 when the JVM did not answer. */
    record Reading(long rssBytes, long heapBytes, long directBytes, String problem) {
    }

    private final long pid;
    private JMXConnector jmx;
    private MemoryMXBean memory;
    private BufferPoolMXBean direct;

    ServeMeter(long pid) {
        this.pid = pid;
    }

    /** Full GC, then the figures; at most {@code timeoutSec} for the JVM to answer. */
    Reading read(int timeoutSec) {
        long rss = rssBytes(pid);
        try {
            return CompletableFuture.supplyAsync(() -> {
                try {
                    if (memory == null) {
                        attach();
                    }
                    memory.gc(); // what survives is live
                    return new Reading(rssBytes(pid), memory.getHeapMemoryUsage().getUsed(), direct.getMemoryUsed(),
                            null);
                } catch (Exception e) {
                    return new Reading(rss, -1, -1, e.toString());
                }
            }).get(timeoutSec, TimeUnit.SECONDS);
        } catch (Exception e) {
            return new Reading(rss, -1, -1, "serve's JVM did not answer within " + timeoutSec + " s (" + e + ")");
        }
    }

    private void attach() throws Exception {
        VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
        String address;
        try {
            address = vm.startLocalManagementAgent();
        } finally {
            vm.detach();
        }
        jmx = JMXConnectorFactory.connect(new JMXServiceURL(address));
        MBeanServerConnection c = jmx.getMBeanServerConnection();
        memory = ManagementFactory.newPlatformMXBeanProxy(c, ManagementFactory.MEMORY_MXBEAN_NAME, MemoryMXBean.class);
        direct = ManagementFactory.newPlatformMXBeanProxy(c, "java.nio:type=BufferPool,name=direct",
                BufferPoolMXBean.class);
    }

    static long rssBytes(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            // the process ended
        }
        return -1;
    }

    /** CPU time used so far (user + system) in clock ticks (USER_HZ, 100 a second on Linux); -1 if gone. */
    static long cpuTicks(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    @Override
    public void close() {
        if (jmx != null) {
            try {
                jmx.close();
            } catch (IOException ignored) {
                // serve ended
            }
        }
    }
}
