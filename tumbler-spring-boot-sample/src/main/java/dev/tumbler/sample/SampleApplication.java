package dev.tumbler.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * Start two of these against one lock URL (a Redis server, say) and the report job runs on one of them at a
 * time; {@code /actuator/metrics/tumbler.lock.acquire} shows the runs each took and skipped, and
 * {@code /actuator/health} the lock service's state.
 */
@SpringBootApplication
@EnableScheduling
public class SampleApplication {
  public static void main(String[] args) {
    SpringApplication.run(SampleApplication.class, args);
  }
}
