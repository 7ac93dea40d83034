package dev.tumbler.peer.election;

import dev.tumbler.peer.algorithm.AlgorithmSettings;

/** The URL settings of an algorithm whose leaders are elected: the election's parameters among them. */
public interface ElectedSettings extends AlgorithmSettings {

  /** The election of the leaders. */
  ElectionParameters election();
}
