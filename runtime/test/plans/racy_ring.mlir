// The ring all-gather with its waits left out: a rank may forward a chunk
// before it has arrived. sdma-verify rejects it; compiled without
// verification (below), the adversarial simulator shows wrong bytes.
//
// Regenerate racy_ring.json (test/runtime/plans-up-to-date.test checks it):
//   sdma-opt racy_ring.mlir --sdma-unroll --sdma-assign-engines \
//     --sdma-insert-sync | sdma-translate --sdma-to-plan
sdma.schedule @racy_ring ranks(%R = 4)
    buffers(%input : 1, %output : ranks) implements all_gather(%input -> %output) {
  %c1 = arith.constant 1 : index
  affine.for %r = 0 to %R {
    sdma.copy %input[0, 1] on %r -> %output[%r, 1] on %r
  }
  sdma.fence
  affine.for %s = 1 to %R {
    affine.for %r = 0 to %R {
      %next = sdma.rank_add %r, 1
      %back = arith.subi %c1, %s : index
      %chunk = sdma.rank_add %r, %back
      sdma.copy %output[%chunk, 1] on %r -> %output[%chunk, 1] on %next
    }
  }
}
