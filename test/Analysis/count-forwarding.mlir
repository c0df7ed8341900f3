// RUN: sdma-opt %s --sdma-verify=report=0 -split-input-file -verify-diagnostics
// sdma.copyv's `forwarded` offsets (CountForwarding.h): a packed or
// expert-major offset read where the count copies into its table read
// each entry, so no barrier orders the copies before it. Every entry it
// needs must be written by exactly one copy out of a count table no op
// writes; each way that fails is refused naming the entry.

// Proved: the count puts and the rows in one phase, no barrier.
sdma.schedule @one_phase ranks(%R = 2) buffers(%in : 2, %out : 2, %s : counts[2], %c : counts[2]) implements all_to_allv_packed(%in -> %out) counts(%s -> %c) {
  sdma.copy %s[0, 1] on 0 -> %c[0, 1] on 0
  sdma.copy %s[1, 1] on 0 -> %c[0, 1] on 1
  sdma.copy %s[0, 1] on 1 -> %c[1, 1] on 0
  sdma.copy %s[1, 1] on 1 -> %c[1, 1] on 1
  sdma.copyv %in[packed %s[0] on 0] on 0 -> %out[packed forwarded %c[0] on 0] on 0, count %s[0] on 0 max 1
  sdma.copyv %in[packed %s[1] on 0] on 0 -> %out[packed forwarded %c[0] on 1] on 1, count %s[1] on 0 max 1
  sdma.copyv %in[packed %s[0] on 1] on 1 -> %out[packed forwarded %c[1] on 0] on 0, count %s[0] on 1 max 1
  sdma.copyv %in[packed %s[1] on 1] on 1 -> %out[packed forwarded %c[1] on 1] on 1, count %s[1] on 1 max 1
}

// -----

// An entry no copy writes.
sdma.schedule @unwritten ranks(%R = 2) buffers(%in : 2, %out : 2, %s : counts[2], %c : counts[2]) {
  sdma.copy %s[0, 1] on 1 -> %c[1, 1] on 0
  // expected-error @+1 {{destination reads entry 0 of count table 'c' on rank 0 forwarded, but no sdma.copy writes it}}
  sdma.copyv %in[packed %s[0] on 1] on 1 -> %out[packed forwarded %c[1] on 0] on 0, count %s[0] on 1 max 1
}

// -----

// An entry two copies write: which one the copyv reads is unknowable.
sdma.schedule @twice ranks(%R = 2) buffers(%in : 2, %out : 2, %s : counts[2], %c : counts[2]) {
  sdma.copy %s[0, 1] on 0 -> %c[0, 1] on 0
  sdma.barrier
  sdma.copy %s[1, 1] on 0 -> %c[0, 1] on 0
  // expected-error @+1 {{destination reads entry 0 of count table 'c' on rank 0 forwarded, but 2 copies write it; forwarding needs exactly one}}
  sdma.copyv %in[packed %s[0] on 1] on 1 -> %out[packed forwarded %c[1] on 0] on 0, count %s[0] on 1 max 1
}

// -----

// An entry another kind of op writes (here a swap of counts).
sdma.schedule @swapped ranks(%R = 2) buffers(%in : 2, %out : 2, %s : counts[2], %c : counts[2]) {
  sdma.swap %c[0, 1] on 0 <-> %c[0, 1] on 1
  // expected-error @+1 {{source reads entry 0 of count table 'c' on rank 0 forwarded, but an sdma.swap writes it, not a copy out of a count table}}
  sdma.copyv %in[packed forwarded %c[1] on 0] on 0 -> %out[0] on 1, count %s[0] on 0 max 1
}

// -----

// An entry copied from a table that an op writes: the copy's value and
// the source's at the copyv's read may differ.
sdma.schedule @moving_source ranks(%R = 2) buffers(%in : 2, %out : 2, %s : counts[2], %c : counts[2]) {
  sdma.copy %s[1, 1] on 1 -> %s[0, 1] on 1
  sdma.barrier
  sdma.copy %s[0, 1] on 1 -> %c[0, 1] on 0
  // expected-error @+1 {{destination reads entry 0 of count table 'c' on rank 0 forwarded, but it is copied from entry 0 of 's' on rank 1, which an op writes: forward only out of tables that no op writes}}
  sdma.copyv %in[packed %s[0] on 1] on 1 -> %out[packed forwarded %c[1] on 0] on 0, count %s[0] on 1 max 1
}
