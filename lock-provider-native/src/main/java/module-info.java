/**
 * The native provider ({@code lock:native:…}): peer-to-peer nodes, no server.
 * (Named for its packages, {@code dev.tumbler.peer.*}: {@code native} is a keyword.) Its one exported package holds
 * the vendor extension {@code NodeStats} ({@code service.unwrap(NodeStats.class)}); the protocol cores, the
 * node runtime, the transports and the provider stay inside. ({@code lock-sim}, {@code lock-cli} and
 * {@code lock-bench} use those internals from the class path, where this descriptor does not apply.)
 */
module dev.tumbler.peer {
  requires dev.tumbler.lock;
  requires org.slf4j;

  exports dev.tumbler.peer.node;

  provides dev.tumbler.lock.spi.LockProvider with dev.tumbler.peer.provider.NativeLockProvider;
}
