/**
 * A node's cores behind one: {@link dev.tumbler.peer.composite.CompositeCore} routes inputs to the
 * channel cores they concern (election, lock, semaphores, transactions) and wraps their messages in
 * {@link dev.tumbler.peer.composite.Envelope}s, encoded by {@link dev.tumbler.peer.composite.EnvelopeCodec}.
 */
package dev.tumbler.peer.composite;
