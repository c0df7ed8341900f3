// All-reduce in place, one shot (torch's all_reduce(tensor)): a rank cannot
// add its peers' values into its buffer while they still read it, so each
// rank first stages its value, tells every peer it has, and adds the peers'
// staged values into its own buffer once each has said so. One step more
// than all_reduce_one_shot (a local copy and a signal round); for any
// count (all_reduce_two_shot is in place as it stands but needs R | count).
//
//   R = 3            rank 0          rank 1          rank 2
//   before data:     [a0]            [a1]            [a2]
//   after  stage:    [a0]            [a1]            [a2]
//   after  data:     [a0+a1+a2]      [a0+a1+a2]      [a0+a1+a2]
sdma.schedule @all_reduce_in_place ranks(%R)
    buffers(%data : f32[1], %stage : f32[1])
    implements all_reduce(%data -> %data) {
  affine.for %r = 0 to %R {
    sdma.copy %data[0, 1] on %r -> %stage[0, 1] on %r
  }
  sdma.fence
  affine.for %r = 0 to %R {
    affine.for %s = 1 to %R {
      %p = sdma.rank_add %r, %s
      sdma.signal %r -> %p
    }
  }
  // Every wait first, so the adds are one stretch: the kernel reads the
  // R - 1 staged values and the rank's own once, and stores once.
  affine.for %r = 0 to %R {
    affine.for %s = 1 to %R {
      %p = sdma.rank_add %r, %s
      sdma.wait %r <- %p
    }
  }
  affine.for %r = 0 to %R {
    affine.for %s = 1 to %R {
      %p = sdma.rank_add %r, %s
      sdma.reduce sum %data[0, 1] on %r <- %stage[0, 1] on %p
    }
  }
}
