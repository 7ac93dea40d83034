package dev.tumbler.peer.bakery;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.tumbler.peer.composite.Hosting;
import dev.tumbler.peer.core.CodecChecks;
import dev.tumbler.peer.core.CodecException;

/**
 * Fuzzes the bakery codec, bytes a peer controls on a node running {@code algorithm=bakery}: any bytes decode
 * to a message or fail with {@link CodecException}, and a decoded message survives encode and decode with a
 * stable encoding. Without {@code JAZZER_FUZZ} it replays its kept inputs; {@code .ci/fuzz} runs it longer.
 */
class BakeryCodecFuzzTest {
  private final BakeryCodec codec = new BakeryCodec();

  @FuzzTest(maxDuration = "10s", maxExecutions = 100_000)
  void decode(byte[] bytes) {
    CodecChecks.decodesOrRefuses(codec, bytes);
  }

  /** The node's whole wire codec: the envelope around the election's and the bakery's bodies. */
  @FuzzTest(maxDuration = "10s", maxExecutions = 100_000)
  void wire(byte[] bytes) {
    CodecChecks.decodesOrRefuses(Hosting.codec(BakeryAlgorithm.BAKERY), bytes);
  }
}
