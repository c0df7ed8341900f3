// RUN: sdma-opt %s --sdma-unroll=ranks=4 | FileCheck %s --check-prefix=DECLARED
// RUN: sdma-opt %s --sdma-unroll="ranks=4 root=2" | FileCheck %s --check-prefix=BOUND
// RUN: not sdma-opt %s --sdma-unroll="ranks=4 root=-2" 2>&1 | FileCheck %s --check-prefix=NEGATIVE

// `root=k` binds the root before anything is evaluated: sdma.root is k, the
// peers are found relative to it, and the flat schedule declares root k.
// Without it, sdma.root is the declared root.
// DECLARED-LABEL: sdma.schedule @reduce_to_root ranks(%R = 4) {{.*}} root 0 {
// DECLARED-NEXT:    sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0
// DECLARED-NEXT:    sdma.fence on 0
// DECLARED-NEXT:    sdma.reduce sum %out[0, 1] on 0 <- %in[0, 1] on 1
// DECLARED-NEXT:    sdma.reduce sum %out[0, 1] on 0 <- %in[0, 1] on 2
// DECLARED-NEXT:    sdma.reduce sum %out[0, 1] on 0 <- %in[0, 1] on 3
// DECLARED-NEXT:  }
// BOUND-LABEL: sdma.schedule @reduce_to_root ranks(%R = 4) {{.*}} root 2 {
// BOUND-NEXT:    sdma.copy %in[0, 1] on 2 -> %out[0, 1] on 2
// BOUND-NEXT:    sdma.fence on 2
// BOUND-NEXT:    sdma.reduce sum %out[0, 1] on 2 <- %in[0, 1] on 3
// BOUND-NEXT:    sdma.reduce sum %out[0, 1] on 2 <- %in[0, 1] on 0
// BOUND-NEXT:    sdma.reduce sum %out[0, 1] on 2 <- %in[0, 1] on 1
// BOUND-NEXT:  }
// NEGATIVE: error: 'sdma.schedule' op root -2 is out of range [0, 4) (sdma-unroll's root option)
sdma.schedule @reduce_to_root ranks(%R) buffers(%in : f32[1], %out : f32[1])
    implements reduce(%in -> %out) root 0 {
  %root = sdma.root
  sdma.copy %in[0, 1] on %root -> %out[0, 1] on %root
  sdma.fence on %root
  affine.for %s = 1 to %R {
    %p = sdma.rank_add %root, %s
    sdma.reduce sum %out[0, 1] on %root <- %in[0, 1] on %p
  }
}
