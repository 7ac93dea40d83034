package dev.tumbler.torture.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/** A Redis server of the harness's own set-ups starts again empty, whatever its neighbours left on disk. */
class RedisProcessTest {

  @Test
  void aKilledServerStartsAgainEmptyEvenAfterAReplicaInItsDirectoryReceivedAFullSynchronisation() {
    Path dir = Processes.tempDir("redis-process-test");
    try (RedisProcess primary = RedisProcess.start(dir, Processes.freePort(), List.of(), false)) {
      try (Jedis j = primary.client()) {
        for (int i = 0; i < 100; i++) {
          j.set("k" + i, "v" + i);
        }
      }
      try (RedisProcess replica = RedisProcess.start(dir, Processes.freePort(),
          List.of("replicaof 127.0.0.1 " + primary.port()), false)) {
        // its full synchronisation writes the primary's data to the replica's disk
        Processes.await(Duration.ofSeconds(20), "the replica to hold the primary's keys", () -> {
          try (Jedis r = replica.client()) {
            return r.info("replication").contains("master_link_status:up") && r.dbSize() == 100;
          }
        });
      }
      primary.kill();
      primary.start();
      try (Jedis j = primary.client()) {
        assertEquals(0, j.dbSize(), "a server started again without persistence holds nothing: it must not load the "
            + "dump its replica's synchronisation left on disk");
      }
    } finally {
      Processes.delete(dir);
    }
  }
}
