package dev.iwarp.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.testkit.LogCapture;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelOption;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Logs cannot be used as a weapon: a client that queues 16 x 1 MiB Read Responses and resets the
 * connection produced ~1,190 INFO lines; it must cost one line per connection event.
 */
class ServeLogFloodTest {
    /** serve's logback.xml (tests run with the testkit's logback-test.xml instead) installs the limiter. */
    @Test
    void servesLogConfigurationInstallsTheLimiter() throws Exception {
        ch.qos.logback.classic.LoggerContext fresh = new ch.qos.logback.classic.LoggerContext();
        ch.qos.logback.classic.joran.JoranConfigurator joran = new ch.qos.logback.classic.joran.JoranConfigurator();
        joran.setContext(fresh);
        joran.doConfigure(ServeLogFloodTest.class.getResource("/logback.xml"));
        assertTrue(fresh.getTurboFilterList().stream().anyMatch(f -> f instanceof PeerWarningLimiter && f.isStarted()),
                fresh.getTurboFilterList().toString());
        fresh.stop();
    }

    /** With the limiter as serve configures it, 30 clients sending garbage from one address cost 5 WARNs. */
    @Test
    void malformedInputFromOneAddressIsRateLimited() throws Exception {
        ch.qos.logback.classic.LoggerContext context =
                (ch.qos.logback.classic.LoggerContext) org.slf4j.LoggerFactory.getILoggerFactory();
        PeerWarningLimiter limiter = new PeerWarningLimiter();
        limiter.setContext(context);
        limiter.start();
        context.addTurboFilter(limiter);
        try (RpingServer server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(IwarpStack.builder().threads(1).build()));
             LogCapture log = LogCapture.of("dev.iwarp")) {
            for (int i = 0; i < 30; i++) {
                try (java.net.Socket s = new java.net.Socket("127.0.0.1", server.port())) {
                    java.io.OutputStream out = s.getOutputStream();
                    out.write("MPA ID Req Frame".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                    out.write(new byte[] {0, 1, 0, 0}); // Rev 1, no CRC, no markers, no Private Data
                    // then one FPDU whose 4-octet ULPDU cannot hold a DDP header (CRC field present, zero)
                    out.write(new byte[] {0, 4, 'a', 'b', 'c', 'd', 0, 0, 0, 0, 0, 0});
                    s.setSoTimeout(10_000);
                    s.getInputStream().readAllBytes(); // until the server closes
                }
            }
            Thread.sleep(200);
            long warnings = log.events().stream().filter(e -> e.getLevel() == Level.WARN
                    && e.getFormattedMessage().contains("127.0.0.1")
                    && !e.getLoggerName().equals(PeerWarningLimiter.class.getName())).count();
            assertTrue(warnings <= 5, warnings + " WARNs about 127.0.0.1 from 30 bad clients");
            assertTrue(warnings >= 1, "the first ones are logged");
        } finally {
            context.getTurboFilterList().remove(limiter);
            limiter.stop();
        }
    }

    @Test
    void aResetWithReadResponsesQueuedLogsAFewLinesNotOnePerSegment() throws Exception {
        try (RpingServer server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(IwarpStack.builder().threads(1).build()));
             IwarpStack client = IwarpStack.builder().threads(1).build();
             LogCapture log = LogCapture.of("dev.iwarp")) {
            ProtectionDomain pd = client.allocPd();
            ByteBuf sinkMemory = Unpooled.directBuffer(1 << 20, 1 << 20);
            try {
                MemoryRegion sink = pd.register(sinkMemory, Access.LOCAL_WRITE);
                ConnectOptions opts = ConnectOptions.of(pd).mpa(dev.iwarp.mpa.MpaSettings.builder().ird(16).ord(16)
                        .build());
                QueuePair qp = client.connect(server.localAddress(), opts).get(10, TimeUnit.SECONDS);
                Advertisement target = Advertisement.decode(qp.connectionParameters().peerPrivateData());
                int port = ((InetSocketAddress) qp.channel().localAddress()).getPort();
                qp.channel().config().setAutoRead(false); // the responses pile up on the server
                for (int i = 0; i < 16; i++) {
                    qp.postSend(SendRequest.rdmaRead(i, sink.all(), target.stag(), target.to()));
                }
                Thread.sleep(500);
                qp.channel().config().setOption(ChannelOption.SO_LINGER, 0);
                qp.channel().close().sync(); // RST with 16 MiB of Read Responses queued or in flight
                for (int i = 0; i < 500 && !server.sessions().isEmpty(); i++) {
                    Thread.sleep(10);
                }
                Thread.sleep(300);
                List<String> lines = log.events().stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.INFO))
                        .map(ILoggingEvent::getFormattedMessage).filter(m -> m.contains(":" + port))
                        .collect(Collectors.toList());
                assertTrue(lines.size() <= 4, lines.size() + " lines for one reset connection: " + lines);
            } finally {
                sinkMemory.release();
            }
        }
    }
}
