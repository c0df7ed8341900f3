// All-to-allv with capacity slots over N nodes of G ranks (rank r = node
// n * G + local g), rail aligned, counts carried with the rows: the MoE
// dispatch/combine of all_to_allv_slots.mlir across nodes. Counts stay on
// the GPU (no host sync): a network message moves whole slots, G x C rows
// per rail and node pair whatever the counts, and the rows past a count are
// never copied out of the landing slots.
//
//   local    (n,g): for every (m,h) with m != n, send_counts[(m,h)] rows
//                   of in[(m,h)] -> staged[(m,g)] on (n,h) (copyv), and the
//                   count -> staged_counts[(m,g)] on (n,h); for m = n,
//                   straight to out[(n,g)] and recv_counts[(n,g)] of (n,h)
//   network  (n,h): staged[(m,0), G] -> landing[(n,0), G] on (m,h), and
//                   staged_counts[(m,0), G] -> recv_counts[(n,0), G] on
//                   (m,h), for every node m != n
//   local    (m,h): for every (n,g) with n != m, recv_counts[(n,g)] rows
//                   of landing[(n,g)] -> out[(n,g)] (copyv, on the rank)
//
//   R = 4, G = 2, one row slots; rank (n,g) sends x[ng->mh]:
//   local:   (0,0): x[00->10] -> staged[2] on (0,0), x[00->11] -> staged[2] on (0,1)
//   network: (0,0): staged[2, 2] -> landing[0, 2] on (1,0) = [x[00->10] x[01->10]]
//   local:   (1,0): landing[0] -> out[0], landing[1] -> out[1], counts from recv_counts
sdma.schedule @all_to_allv_hier ranks(%R)
    buffers(%input : ranks, %output : ranks, %staged : ranks,
            %landing : ranks, %send_counts : counts[ranks],
            %recv_counts : counts[ranks], %staged_counts : counts[ranks])
    implements all_to_allv(%input -> %output)
        counts(%send_counts -> %recv_counts) {
  %G = sdma.local_ranks
  %N = arith.divui %R, %G : index
  affine.for %n = 0 to %N {
    affine.for %g = 0 to %G {
      %nbase = arith.muli %n, %G : index
      %r = arith.addi %nbase, %g : index
      affine.for %h = 0 to %G {
        %p = arith.addi %nbase, %h : index
        affine.for %m = 0 to %N {
          %mbase = arith.muli %m, %G : index
          %c = arith.addi %mbase, %h : index
          %slot = arith.addi %mbase, %g : index
          %home = arith.cmpi eq, %m, %n : index
          scf.if %home {
            sdma.copy %send_counts[%c, 1] on %r -> %recv_counts[%r, 1] on %p
            sdma.copyv %input[%c] on %r -> %output[%r] on %p,
                count %send_counts[%c] on %r max 1
          } else {
            sdma.copy %send_counts[%c, 1] on %r -> %staged_counts[%slot, 1] on %p
            sdma.copyv %input[%c] on %r -> %staged[%slot] on %p,
                count %send_counts[%c] on %r max 1
          }
        }
      }
    }
  }
  sdma.barrier
  affine.for %n = 0 to %N {
    affine.for %h = 0 to %G {
      %nbase = arith.muli %n, %G : index
      %r = arith.addi %nbase, %h : index
      affine.for %m = 0 to %N {
        %other = arith.cmpi ne, %m, %n : index
        scf.if %other {
          %mbase = arith.muli %m, %G : index
          %peer = arith.addi %mbase, %h : index
          sdma.copy %staged_counts[%mbase, %G] on %r -> %recv_counts[%nbase, %G] on %peer
          sdma.copy %staged[%mbase, %G] on %r -> %landing[%nbase, %G] on %peer
        }
      }
    }
  }
  sdma.barrier
  affine.for %m = 0 to %N {
    affine.for %h = 0 to %G {
      %mbase = arith.muli %m, %G : index
      %p = arith.addi %mbase, %h : index
      affine.for %n = 0 to %N {
        %other = arith.cmpi ne, %m, %n : index
        scf.if %other {
          affine.for %g = 0 to %G {
            %nbase = arith.muli %n, %G : index
            %s = arith.addi %nbase, %g : index
            sdma.copyv %landing[%s] on %p -> %output[%s] on %p,
                count %recv_counts[%s] on %p max 1
          }
        }
      }
    }
  }
}
