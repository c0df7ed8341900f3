// RUN: sdma-opt %s --sdma-unroll="ranks=3 root=3" -split-input-file -verify-diagnostics

// expected-error @+1 {{root 3 is out of range [0, 3) (sdma-unroll's root option)}}
sdma.schedule @s ranks(%R) buffers(%in : 1, %out : 1)
    implements broadcast(%in -> %out) root 0 {
  %root = sdma.root
  affine.for %p = 0 to %R {
    sdma.copy %in[0, 1] on %root -> %out[0, 1] on %p
  }
}

// -----

// expected-error @+1 {{declares no root (`implements KIND(...) root N`) but sdma-unroll was given root=3}}
sdma.schedule @s ranks(%R) buffers(%in : 1, %out : ranks)
    implements all_gather(%in -> %out) {
  affine.for %r = 0 to %R {
    affine.for %p = 0 to %R {
      sdma.copy %in[0, 1] on %r -> %out[%r, 1] on %p
    }
  }
}
