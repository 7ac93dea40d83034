package dev.tumbler.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;

/**
 * Secrets for the command line, read from a file or an environment variable and never from an argument
 * (every user of the machine can read arguments with {@code ps}). They reach the provider as
 * {@link Properties}, which override URL parameters of the same name.
 */
final class Secrets {
  /** The environment variable read when no secret file is given. */
  static final String SECRET_ENV = "TUMBLER_SECRET";
  /** The environment variable of a backend password (Redis, say). */
  static final String PASSWORD_ENV = "TUMBLER_PASSWORD";
  /** The environment variable of a native cluster's client credential (a thin client's {@code clientSecret}). */
  static final String CLIENT_SECRET_ENV = "TUMBLER_CLIENT_SECRET";

  /** An unreadable or empty secret file. Its message names the file, never its content. */
  static final class SecretException extends RuntimeException {
    SecretException(String message) {
      super(message);
    }
  }

  private Secrets() {}

  /**
   * Properties with {@code secret} and {@code password} taken from the files if given, else from the
   * environment if set; empty otherwise.
   *
   * @throws SecretException if a file cannot be read or is empty
   */
  static Properties properties(Path secretFile, Path passwordFile, Map<String, String> env) {
    return properties(secretFile, passwordFile, null, env);
  }

  /**
   * As above, and {@code clientSecret} (a thin client of a native cluster) from its file if given, else from
   * {@value #CLIENT_SECRET_ENV}.
   */
  static Properties properties(Path secretFile, Path passwordFile, Path clientSecretFile, Map<String, String> env) {
    Properties p = new Properties();
    put(p, "secret", secretFile, env.get(SECRET_ENV), SECRET_ENV);
    put(p, "password", passwordFile, env.get(PASSWORD_ENV), PASSWORD_ENV);
    put(p, "clientSecret", clientSecretFile, env.get(CLIENT_SECRET_ENV), CLIENT_SECRET_ENV);
    return p;
  }

  private static void put(Properties p, String key, Path file, String envValue, String envName) {
    if (file != null) {
      p.setProperty(key, read(file));
    } else if (envValue != null) {
      if (envValue.isEmpty()) {
        throw new SecretException("environment variable " + envName + " is set but empty");
      }
      p.setProperty(key, envValue);
    }
  }

  /** The file's content without surrounding white space (a trailing line break, say). */
  static String read(Path file) {
    String s;
    try {
      s = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new SecretException("cannot read secret file " + file + ": " + e.getClass().getSimpleName());
    }
    s = s.strip();
    if (s.isEmpty()) {
      throw new SecretException("secret file " + file + " is empty");
    }
    return s;
  }
}
