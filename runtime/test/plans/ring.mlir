// The ring all-gather for 4 ranks, for the runtime's unit tests.
// Regenerate ring.json (test/runtime/plans-up-to-date.test checks it):
//   sdma-opt ring.mlir --sdma-unroll --sdma-verify --sdma-assign-engines \
//     --sdma-insert-sync=prelaunch=1 | sdma-translate --sdma-to-plan
// and ring-host.json / ring-host.packets.json (the same without prelaunch,
// its plan and its gfx942 packets: --sdma-insert-sync, then sdma-translate
// --sdma-to-plan, or sdma-opt --convert-sdma-to-sdmapkt=target=gfx942 |
// sdma-translate --sdma-to-packets).
sdma.schedule @all_gather_ring ranks(%R = 4)
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
      sdma.signal %r -> %next
    }
    affine.for %r = 0 to %R {
      %prev = sdma.rank_add %r, -1
      sdma.wait %r <- %prev
    }
  }
}
