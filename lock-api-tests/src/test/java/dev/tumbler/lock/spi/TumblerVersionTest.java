package dev.tumbler.lock.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class TumblerVersionTest {

  @Test
  void theMavenBuildFillsInTheProjectVersion() {
    String v = TumblerVersion.current();
    assertTrue(v.matches("\\d+\\.\\d+\\.\\d+([-.].+)?"), "not a filtered project version: " + v);
    String expected = System.getProperty("tumbler.project.version");
    if (expected != null) {
      assertEquals(expected, v);
    }
  }
}
