// RUN: sdma-opt %s --sdma-unroll=ranks=3 -split-input-file -verify-diagnostics

// An error in an unrolled op names the loop iterations that produced it.
sdma.schedule @s ranks(%R) buffers(%b : ranks) {
  // expected-note @+1 {{in the iteration where this loop's index is 2}}
  affine.for %r = 0 to %R {
    // expected-note @+1 {{in the iteration where this loop's index is 1}}
    affine.for %p = 0 to 2 {
      %q = arith.addi %r, %p : index
      // expected-error @+1 {{destination rank 3 is out of range [0, 3)}}
      sdma.copy %b[%r, 1] on %r -> %b[%r, 1] on %q
    }
  }
}

// -----

sdma.schedule @s ranks(%R) buffers(%b : ranks) {
  // expected-note @+1 {{in the iteration where this loop's index is 2}}
  affine.for %r = 0 to %R {
    // expected-error @+1 {{source slice [2, 2 + 2) is out of bounds of buffer 'b', which has 3 chunks}}
    sdma.copy %b[%r, 2] on 0 -> %b[0, 2] on 1
  }
}

// -----

// expected-error @+1 {{fixes 4 ranks but sdma-unroll was given ranks=3}}
sdma.schedule @s ranks(%R = 4) buffers(%b : ranks) {}

// -----

sdma.schedule @s ranks(%R) buffers(%b : ranks) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{with iter_args is not supported in a schedule}}
  %x = affine.for %r = 0 to %R iter_args(%acc = %c0) -> (index) {
    affine.yield %acc : index
  }
}

// -----

sdma.schedule @s ranks(%R) buffers(%b : ranks) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{with iter_args is not supported in a schedule}}
  %x = scf.for %r = %c0 to %R step %c1 iter_args(%acc = %c0) -> (index) {
    scf.yield %acc : index
  }
}

// -----

sdma.schedule @s ranks(%R) buffers(%b : ranks) {
  %c0 = arith.constant 0 : index
  %true = arith.constant true
  // expected-error @+1 {{with results is not supported in a schedule}}
  %x = scf.if %true -> (index) {
    scf.yield %c0 : index
  } else {
    scf.yield %c0 : index
  }
}

// -----

sdma.schedule @s ranks(%R) buffers(%b : ranks) {
  // expected-note @+1 {{in the iteration where this loop's index is 0}}
  affine.for %r = 0 to %R {
    // expected-error @+1 {{is not supported by sdma-unroll (use affine.for, scf.for or scf.if)}}
    affine.if affine_set<(d0) : (d0 - 1 >= 0)>(%r) {
      sdma.fence on %r
    }
  }
}

// -----

sdma.schedule @s ranks(%R) buffers(%b : ranks) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{step 0 is not positive}}
  scf.for %r = %c0 to %R step %c0 {
    sdma.fence on %r
  }
}

// -----

sdma.schedule @s ranks(%R) buffers(%b : ranks) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{cannot be evaluated by sdma-unroll}}
  %d = arith.divui %R, %c0 : index
  sdma.fence on %d
}

// -----

sdma.schedule @s ranks(%R) buffers(%b : ranks) {
  // expected-error @+1 {{does not evaluate to an integer}}
  %f = arith.constant 1.0 : f32
  %x = arith.addf %f, %f : f32
}

// -----

sdma.schedule @s ranks(%R) buffers(%b : ranks) {
  // expected-note @+1 {{in the iteration where this loop's index is 333333}}
  affine.for %r = 0 to 100000000 {
    // expected-note @+1 {{in the iteration where this loop's index is 1}}
    affine.for %p = 0 to %R {
      // expected-error @+1 {{unrolling creates more than 1000000 ops (raise max-ops if this is intended)}}
      sdma.fence on %p
    }
  }
}

// -----

sdma.schedule @s ranks(%R) buffers(%b : ranks) {
  // expected-error @+2 {{unrolling evaluates more than 16000000 ops (raise max-ops if this is intended)}}
  // expected-note @+1 {{in the iteration where this loop's index is 15999999}}
  affine.for %r = 0 to 100000000 {
  }
}

