package com.example.outside;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tumbler.lock.LockService;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;

/**
 * The application on whichever Boot the build chose: the starter's lock service, a locked run, the {@code tumbler}
 * health contributor UP over HTTP, and the lock meters in Boot's registry.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class OutsideAppTest {
  @Autowired LockService locks;
  @Autowired OutsideApp.Job job;
  @Autowired Environment env;

  @Test
  void theStarterWorksWithItsHealthAndMeters() throws Exception {
    System.out.println("Spring Boot " + SpringBootVersion.getVersion() + ", lock service " + locks.info().url());
    job.run();
    assertThat(job.runs()).isEqualTo(1);
    String base = "http://localhost:" + env.getProperty("local.server.port");
    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<String> health = http.send(HttpRequest.newBuilder(URI.create(base + "/actuator/health/tumbler")).build(),
        HttpResponse.BodyHandlers.ofString());
    System.out.println("/actuator/health/tumbler: " + health.statusCode() + " " + health.body());
    assertThat(health.statusCode()).isEqualTo(200);
    assertThat(health.body()).contains("\"status\":\"UP\"");
    HttpResponse<String> meters = http.send(HttpRequest.newBuilder(URI.create(base + "/actuator/metrics")).build(),
        HttpResponse.BodyHandlers.ofString());
    System.out.println("/actuator/metrics: " + meters.statusCode() + " tumbler meters: "
        + meters.body().replaceAll(".*?(\"tumbler[^\"]*\")|.*", "$1 ").trim());
    assertThat(meters.body()).contains("\"tumbler.");
  }
}
