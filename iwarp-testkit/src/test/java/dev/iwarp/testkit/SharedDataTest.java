package dev.iwarp.testkit;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SharedDataTest {

    @Test
    void findsTheSiwCaptures() {
        SharedData.assumeAvailable("the shared data directory itself");
        assertTrue(Files.isDirectory(SharedData.dir().resolve("testdata")));
        assertTrue(Files.isRegularFile(SharedData.siwPcap("rping-crc.pcap")));
        assertTrue(Files.isRegularFile(SharedData.siwPcap("README.md")));
        assertEquals(SharedData.siwPcapDir(), SharedData.siwPcap("x").getParent());
    }
}
