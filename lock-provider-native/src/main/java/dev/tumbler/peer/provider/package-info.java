/**
 * The {@code native} lock provider: URLs {@code lock:native:local}, {@code lock:native:mem/<cluster>} and
 * {@code lock:native://host:port}, services, locks and leases on the SPI helpers. See the module README.
 */
package dev.tumbler.peer.provider;
