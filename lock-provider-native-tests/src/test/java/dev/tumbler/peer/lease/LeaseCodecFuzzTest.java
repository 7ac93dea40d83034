package dev.tumbler.peer.lease;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.tumbler.peer.core.CodecChecks;
import dev.tumbler.peer.core.CodecException;

/**
 * Fuzzes the lease codec, bytes a peer controls on a node that serves leases: any bytes decode to a message or
 * fail with {@link CodecException}, and a decoded message survives encode and decode with a stable encoding.
 * Without {@code JAZZER_FUZZ} it replays its kept inputs; {@code .ci/fuzz} runs it longer.
 */
class LeaseCodecFuzzTest {
  private final LeaseCodec codec = new LeaseCodec();

  @FuzzTest(maxDuration = "10s", maxExecutions = 100_000)
  void decode(byte[] bytes) {
    CodecChecks.decodesOrRefuses(codec, bytes);
  }
}
