package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.IwarpWire;
import org.junit.jupiter.api.Test;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.management.ManagementFactory;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code serve --metrics-port}'s meters in JMX as well (domain {@code metrics}, Micrometer's JMX registry): the
 * options serve uses, read through the platform MBean server before and after a ping; gone once closed.
 */
class ServeJmxMetricsTest {
    private static final MBeanServer JMX = ManagementFactory.getPlatformMBeanServer();

    /** The one MBean of domain {@code metrics} whose name starts with {@code prefix}, its Count or Value. */
    private static double read(String prefix) throws Exception {
        Set<ObjectName> names = JMX.queryNames(new ObjectName("metrics:*"), null);
        ObjectName found = null;
        for (ObjectName n : names) {
            if (n.getKeyProperty("name").startsWith(prefix)) {
                assertTrue(found == null, "one MBean for " + prefix + ": " + names);
                found = n;
            }
        }
        assertTrue(found != null, prefix + " not in " + names);
        String attribute = JMX.getMBeanInfo(found).getAttributes()[0].getName().equals("Count") ? "Count" : "Value";
        return ((Number) JMX.getAttribute(found, attribute)).doubleValue();
    }

    @Test
    void serveRegistersItsMetersInJmxAndTheyMoveWithTraffic() throws Exception {
        MetricsOptions options = new MetricsOptions();
        options.port = 0;
        options.address = "127.0.0.1";
        try (RpingServer server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(options.observe(IwarpStack.builder().threads(1)).build()));
             IwarpStack client = IwarpStack.builder().threads(1).build()) {
            options.started(server);
            assertEquals(0, read("iwarpConnectionsAccepted"));
            assertEquals(0, read("iwarpMessages.direction.out.op.rdma_write"));
            assertTrue(read("iwarpEventloopBusy.loop.0") >= 0);

            StringWriter ping = new StringWriter();
            assertTrue(PingCommand.run(IwarpWire.client(client), server.localAddress(), 3, 100, true, false, 10_000,
                    new PrintWriter(ping, true)), ping::toString);
            Thread.sleep(200); // the server's last completions
            assertEquals(1, read("iwarpConnectionsAccepted"));
            assertEquals(3, read("iwarpMessages.direction.out.op.rdma_write"), "one Write back per ping");
            assertEquals(0, read("iwarpConnectionsRefused.cause.max-connections"));
        } finally {
            options.close();
        }
        assertTrue(JMX.queryNames(new ObjectName("metrics:name=iwarp*,*"), null).isEmpty(),
                "unregistered at close");
    }
}
