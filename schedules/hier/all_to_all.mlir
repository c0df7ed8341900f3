// All-to-all over N nodes of G ranks (rank r = node n * G + local g), rail
// aligned: one network message per rail and node pair, G chunks long. Within
// its node, rank (n,g) first hands chunk (m,h) of its input to rank (n,h),
// its rail to node m: into slot (m,g) of (n,h)'s scratch, or straight into
// the output where m = n. Across nodes, rank (n,h) then sends scratch slots
// [(m,0), (m,G)) -- every chunk its node has for (m,h) -- to output slots
// [(n,0), (n,G)) of (m,h).
//
//   R = 4, G = 2: rank (n,g)'s input chunk (m,h) is written x[ng->mh]
//   node:     (0,0): x[00->10] -> scratch[2] on (0,0), x[00->11] -> scratch[2] on (0,1)
//             (0,1): x[01->10] -> scratch[3] on (0,0), x[01->11] -> scratch[3] on (0,1)
//   network:  (0,0): scratch[2, 2] -> out[0, 2] on (1,0) = [x[00->10] x[01->10]]
//
//   node     (n,g): in[(m,h)] -> scratch[(m,g)] on (n,h), m != n
//                   in[(n,h)] -> out[(n,g)] on (n,h)
//   network  (n,h): scratch[(m,0), G] -> out[(n,0), G] on (m,h), m != n
sdma.schedule @all_to_all_hier ranks(%R)
    buffers(%input : ranks, %output : ranks, %scratch : ranks)
    implements all_to_all(%input -> %output) {
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
            sdma.copy %input[%c, 1] on %r -> %output[%r, 1] on %p
          } else {
            sdma.copy %input[%c, 1] on %r -> %scratch[%slot, 1] on %p
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
          sdma.copy %scratch[%mbase, %G] on %r -> %output[%nbase, %G] on %peer
        }
      }
    }
  }
}
