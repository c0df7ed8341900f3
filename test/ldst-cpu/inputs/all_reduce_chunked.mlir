// One-shot all-reduce done chunk by chunk: each rank adds every peer's
// chunk c into its output chunk c, so each of its reduce segments has one
// row per chunk (the staged pointer table of sdma_seg_reduce holds several
// rows; a thread moves from row to row). Used by seg-reduce.test.
sdma.schedule @all_reduce_chunked ranks(%R)
    buffers(%input : f32[ranks], %output : f32[ranks])
    implements all_reduce(%input -> %output) {
  affine.for %r = 0 to %R {
    affine.for %c = 0 to %R {
      sdma.copy %input[%c, 1] on %r -> %output[%c, 1] on %r
    }
  }
  sdma.fence
  affine.for %r = 0 to %R {
    affine.for %c = 0 to %R {
      affine.for %s = 1 to %R {
        %p = sdma.rank_add %r, %s
        sdma.reduce sum %output[%c, 1] on %r <- %input[%c, 1] on %p
      }
    }
  }
}
