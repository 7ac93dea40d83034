package dev.tumbler.lock.redis;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.tck.LoopbackPorts;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Cluster and sentinel URLs whose servers are all down: a prompt, typed error that shows no password. */
class RedisModesUnreachableTest {

  @Test
  void nobodyAnswers() {
    String hosts = "127.0.0.1:" + LoopbackPorts.freePort() + ",127.0.0.1:" + LoopbackPorts.freePort();
    for (String url : List.of("lock:redis://:dataS3cret@" + hosts + "?mode=cluster&timeout=300ms",
        "lock:redis://:dataS3cret@" + hosts + "?mode=sentinel&master=m&sentinelPassword=sentS3cret&timeout=300ms")) {
      ServiceUnavailableException e = assertThrows(ServiceUnavailableException.class, () -> LockProviders.connect(url));
      assertTrue(e.getMessage().contains("mode="), e.getMessage());
      assertFalse(e.getMessage().contains("S3cret"), e.getMessage());
    }
  }
}
