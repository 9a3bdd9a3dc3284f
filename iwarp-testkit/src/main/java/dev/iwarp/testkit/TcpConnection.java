package dev.iwarp.testkit;

import java.net.InetAddress;
import java.util.List;

/**
 * One TCP connection found by {@link TcpStreams}: its endpoints and both directions' byte streams.
 *
 * <p>The client is the endpoint that sent the SYN; without a SYN in the capture, the one that
 * received the SYN-ACK; without either, the sender of the connection's first captured segment.
 */
public final class TcpConnection {

    private final InetAddress clientAddress;
    private final int clientPort;
    private final InetAddress serverAddress;
    private final int serverPort;
    private final List<TcpSegment> segments;
    private final TcpStream clientToServer;
    private final TcpStream serverToClient;

    TcpConnection(InetAddress clientAddress, int clientPort, InetAddress serverAddress, int serverPort,
                  List<TcpSegment> segments, TcpStream clientToServer, TcpStream serverToClient) {
        this.clientAddress = clientAddress;
        this.clientPort = clientPort;
        this.serverAddress = serverAddress;
        this.serverPort = serverPort;
        this.segments = List.copyOf(segments);
        this.clientToServer = clientToServer;
        this.serverToClient = serverToClient;
    }

    /** The client's IP address. */
    public InetAddress clientAddress() {
        return clientAddress;
    }

    /** The client's TCP port. */
    public int clientPort() {
        return clientPort;
    }

    /** The server's IP address. */
    public InetAddress serverAddress() {
        return serverAddress;
    }

    /** The server's TCP port. */
    public int serverPort() {
        return serverPort;
    }

    /** What the client sent. */
    public TcpStream clientToServer() {
        return clientToServer;
    }

    /** What the server sent. */
    public TcpStream serverToClient() {
        return serverToClient;
    }

    /** Every segment of the connection, both directions, in capture order. */
    public List<TcpSegment> segments() {
        return segments;
    }

    /** Whether {@code s} (a segment of this connection) was sent by the client. */
    public boolean isFromClient(TcpSegment s) {
        return s.srcPort() == clientPort && s.src().equals(clientAddress);
    }

    /** {@code "10.0.2.15:48664 -> 10.0.2.15:7174 (34 segments, 516/672 bytes)"}. */
    @Override
    public String toString() {
        return clientAddress.getHostAddress() + ":" + clientPort + " -> " + serverAddress.getHostAddress() + ":"
                + serverPort + " (" + segments.size() + " segments, " + clientToServer.length() + "/"
                + serverToClient.length() + " bytes)";
    }
}
