package dev.iwarp.benchmarks;

import com.sun.tools.attach.VirtualMachine;

import javax.management.MBeanServerConnection;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The memory of another JVM on this Linux host, as {@link IdleConnections} reports it: VmRSS from
 * {@code /proc/PID/status}, and, through the Attach API and the JVM's local JMX agent, the heap in use after a
 * full GC and the JDK's direct buffer pool (where Netty's direct arenas live when it allocates them through
 * {@code ByteBuffer.allocateDirect}, its default on JDK 17 without reflective access). Same user only.
 */
final class ProcessMemory implements AutoCloseable {
    private final long pid;
    private JMXConnector jmx;
    private MemoryMXBean memory;
    private BufferPoolMXBean direct;
    private String jmxProblem;

    ProcessMemory(long pid) {
        this.pid = pid;
        try {
            VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
            String address;
            try {
                address = vm.startLocalManagementAgent();
            } finally {
                vm.detach();
            }
            jmx = JMXConnectorFactory.connect(new JMXServiceURL(address));
            MBeanServerConnection c = jmx.getMBeanServerConnection();
            memory = ManagementFactory.newPlatformMXBeanProxy(c, ManagementFactory.MEMORY_MXBEAN_NAME,
                    MemoryMXBean.class);
            direct = ManagementFactory.newPlatformMXBeanProxy(c, "java.nio:type=BufferPool,name=direct",
                    BufferPoolMXBean.class);
        } catch (Exception | LinkageError e) {
            jmxProblem = e.toString();
        }
    }

    /** One reading: VmRSS, and heap after GC and direct buffers when JMX is available (else -1). */
    record Reading(long rssBytes, long heapBytes, long directBytes) {
    }

    /** Why heap and direct figures are missing, or {@code null}. */
    String jmxProblem() {
        return jmxProblem;
    }

    Reading read() throws IOException {
        long heap = -1;
        long dir = -1;
        if (memory != null) {
            memory.gc(); // heap in use by live objects only
            heap = memory.getHeapMemoryUsage().getUsed();
            dir = direct.getMemoryUsed();
        }
        return new Reading(rssBytes(pid), heap, dir);
    }

    static long rssBytes(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        throw new IOException("no VmRSS in /proc/" + pid + "/status");
    }

    /** CPU time the process used so far (user + system), in clock ticks (USER_HZ, 100 per second on Linux). */
    static long cpuTicks(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" "); // after "pid (comm) "
        return Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime: fields 14 and 15 of stat
    }

    /** The process listening on TCP {@code port} (any address), from /proc/net/tcp{,6} and /proc/PID/fd; -1. */
    static long pidListeningOn(int port) throws IOException {
        String inode = null;
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            Path p = Path.of(table);
            if (!Files.exists(p)) {
                continue;
            }
            for (String line : Files.readAllLines(p)) {
                String[] f = line.trim().split("\\s+");
                // sl local_address rem_address st ... inode (field 9); st 0A = LISTEN
                if (f.length > 9 && f[1].contains(":") && f[3].equals("0A")
                        && Integer.parseInt(f[1].substring(f[1].indexOf(':') + 1), 16) == port) {
                    inode = f[9];
                }
            }
        }
        if (inode == null) {
            return -1;
        }
        String socket = "socket:[" + inode + "]";
        try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path proc : procs) {
                try (DirectoryStream<Path> fds = Files.newDirectoryStream(proc.resolve("fd"))) {
                    for (Path fd : fds) {
                        if (socket.equals(Files.readSymbolicLink(fd).toString())) {
                            return Long.parseLong(proc.getFileName().toString());
                        }
                    }
                } catch (IOException | SecurityException e) {
                    // another user's process, or one that just ended
                }
            }
        }
        return -1;
    }

    @Override
    public void close() {
        if (jmx != null) {
            try {
                jmx.close();
            } catch (IOException e) {
                // the process went away
            }
        }
    }
}
