// RUN: sdma-translate --sdma-to-msccl-xml %s -split-input-file -verify-diagnostics

// expected-error@+1 {{is a rooted collective; MSCCL's rooted collectives number their chunks differently}}
sdma.schedule @b ranks(%R = 2) buffers(%input : 1, %output : 1) implements broadcast(%input -> %output) root 0 {
  sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0
  sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 1
}

// -----

sdma.schedule @bar ranks(%R = 2) buffers(%input : 1, %output : 2) {
  sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 1
  // expected-error@+1 {{has no MSCCL counterpart}}
  sdma.barrier
}

// -----

sdma.schedule @pull ranks(%R = 2) buffers(%input : 1, %output : 2) {
  // expected-error@+1 {{is a pull, which --sdma-to-msccl-xml does not write (MSCCL's copies are sends their source issues): write it as a put}}
  sdma.copy pull %input[0, 1] on 0 -> %output[0, 1] on 1
}

// -----

sdma.schedule @local_swap ranks(%R = 2) buffers(%a : 2) {
  // expected-error@+1 {{swaps two slices of one rank, which MSCCL cannot do without a scratch chunk}}
  sdma.swap %a[0, 1] on 0 <-> %a[1, 1] on 0
}

// -----

// expected-error@+1 {{has no fixed rank count: run sdma-unroll before --sdma-to-msccl-xml}}
sdma.schedule @loops ranks(%R) buffers(%input : 1, %output : ranks) implements all_gather(%input -> %output) {
  affine.for %r = 0 to %R {
    sdma.copy %input[0, 1] on %r -> %output[%r, 1] on %r
  }
}

// -----

// expected-error@+1 {{--sdma-to-msccl-xml writes one schedule; the input has 2}}
module {
  sdma.schedule @one ranks(%R = 1) buffers(%a : 1) {
  }
  sdma.schedule @two ranks(%R = 1) buffers(%a : 1) {
  }
}

// -----

sdma.schedule @stuck ranks(%R = 2) buffers(%a : 1) {
  // expected-error@+1 {{is never released when every rank runs its ops in order: the schedule deadlocks}}
  sdma.wait 0 <- 1
  sdma.wait 1 <- 0
  sdma.signal 0 -> 1
  sdma.signal 1 -> 0
}

// -----

// A fixed rank count is not flat: a loop left would be dropped silently.
sdma.schedule @loop ranks(%R = 2) buffers(%input : 1, %output : 2) implements all_gather(%input -> %output) {
  // expected-error@+1 {{is not part of a flat schedule: run sdma-unroll before --sdma-to-msccl-xml}}
  affine.for %r = 0 to 2 {
    sdma.copy %input[0, 1] on %r -> %output[%r, 1] on %r
  }
}
