package com.example.outside;

import dev.tumbler.lock.spring.Locked;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.stereotype.Component;

/** An application with one locked job, as a user writes it. */
@SpringBootApplication
public class OutsideApp {
  public static void main(String[] args) {
    SpringApplication.run(OutsideApp.class, args);
  }

  /** The job: runs only while it holds the lock {@code outside-job}. */
  @Component
  public static class Job {
    final AtomicInteger runs = new AtomicInteger();

    @Locked(name = "outside-job")
    public void run() {
      runs.incrementAndGet();
    }

    public int runs() {
      return runs.get();
    }
  }
}
