package dev.tumbler.peer.client;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.tumbler.peer.core.CodecChecks;
import dev.tumbler.peer.core.CodecException;

/**
 * Fuzzes the client channel's codec, bytes a client controls on a member that takes thin clients (and a member
 * controls on a client): any bytes decode to a message or fail with {@link CodecException}, and a decoded message
 * survives encode and decode with a stable encoding. Without {@code JAZZER_FUZZ} it replays its kept inputs;
 * {@code .ci/fuzz} runs it longer.
 */
class ClientCodecFuzzTest {
  private final ClientCodec codec = new ClientCodec();

  @FuzzTest(maxDuration = "10s", maxExecutions = 100_000)
  void decode(byte[] bytes) {
    CodecChecks.decodesOrRefuses(codec, bytes);
  }
}
