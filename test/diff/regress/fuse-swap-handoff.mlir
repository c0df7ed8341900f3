// An all-to-all whose received chunks are read again after hand-offs. Swap
// fusion may turn the opposite copies into staging copies and swaps only if
// each swap's writes stay ordered before the reads the original signals
// ordered (issue 12: sdma-fuse-swap once made such a verified schedule racy,
// and sdma-run refused it; the build of 02:42 leaves this one unfused, while
// schedules/all_to_all_direct.mlir still gets 6 swaps at 4 ranks).
// RUN: python3 %sdma_src/test/diff/difftest.py --bin %sdma_bin --replay %s | FileCheck %s
// CHECK: ok   fuse-swap-handoff.mlir
sdma.schedule @fuse_swap_handoff ranks(%R = 4) buffers(%in : ranks, %out : ranks, %x : 1)
    implements all_to_all(%in -> %out) {
  affine.for %r = 0 to %R {
    affine.for %d = 0 to %R {
      %p = sdma.rank_add %r, %d
      sdma.copy %in[%p, 1] on %r -> %out[%r, 1] on %p
    }
  }
  affine.for %r = 0 to %R {
    affine.for %d = 1 to %R {
      %p = sdma.rank_add %r, %d
      sdma.signal %r -> %p tag 1
    }
  }
  affine.for %r = 0 to %R {
    affine.for %d = 1 to %R {
      %p = sdma.rank_add %r, %d
      sdma.wait %p <- %r tag 1
    }
  }
  affine.for %r = 0 to %R {
    %q = sdma.rank_add %r, 1
    sdma.copy %out[%q, 1] on %r -> %x[0, 1] on %r
  }
}
