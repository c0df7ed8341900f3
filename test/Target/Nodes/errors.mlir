// RUN: sdma-translate %s --sdma-to-node-plan -split-input-file -verify-diagnostics

// A broadcast copy cannot cross nodes: the transport moves one slice to one
// peer per message.
sdma.schedule @s ranks(%R = 4) buffers(%in : 1, %out : 1) attributes {local_ranks = 2} {
  // expected-error @+1 {{spans nodes 0 and 1 (ranks per node: 2): only sdma.copy crosses nodes, as a send and a receive of the transport}}
  sdma.bcast %in[0, 1] on 0 -> %out[0, 1] on 1, %out[0, 1] on 2
}

// -----

// A signal across nodes has no transport counterpart.
sdma.schedule @s ranks(%R = 4) buffers(%in : 1, %out : 1) attributes {local_ranks = 2} {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0
  // expected-error @+1 {{spans nodes 0 and 1 (ranks per node: 2): only sdma.copy crosses nodes, as a send and a receive of the transport; order the phases with sdma.barrier instead}}
  sdma.signal 0 -> 3
  sdma.wait 3 <- 0
}

// -----

// Network copies and copies within a node need a barrier between them.
sdma.schedule @s ranks(%R = 4) buffers(%in : 1, %out : 1, %tmp : 1) attributes {local_ranks = 2} {
  // expected-note @+1 {{the phase's first op}}
  sdma.copy %in[0, 1] on 0 -> %tmp[0, 1] on 2
  // expected-error @+1 {{stays within a node but shares a phase with ops that cross nodes: separate them with sdma.barrier}}
  sdma.copy %in[0, 1] on 1 -> %out[0, 1] on 0
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%in : 1, %out : 1, %tmp : 1) attributes {local_ranks = 2} {
  // expected-note @+1 {{the phase's first op}}
  sdma.copy %in[0, 1] on 1 -> %out[0, 1] on 0
  sdma.fence
  // expected-error @+1 {{crosses nodes but shares a phase with ops within a node}}
  sdma.copy %in[0, 1] on 0 -> %tmp[0, 1] on 2
}

// -----

// expected-error @+1 {{has no fixed rank count and ranks per node}}
sdma.schedule @s ranks(%R = 4) buffers(%in : 1, %out : 1) {
  sdma.copy %in[0, 1] on 1 -> %out[0, 1] on 0
}

// -----

// A fence on every rank cannot order network copies (one unordered group).
sdma.schedule @s ranks(%R = 4) buffers(%in : 1, %out : 1) attributes {local_ranks = 2} {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 2
  // expected-error @+1 {{on every rank in a phase of network copies: they run as one group, unordered; separate phases with sdma.barrier}}
  sdma.fence
  sdma.copy %in[0, 1] on 3 -> %out[0, 1] on 1
}
