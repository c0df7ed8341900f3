// A broadcast of 34 chunks in 34 phases of rank 0 alone (chunk i to both
// ranks, then a fence), none on rank 1: more than 32 segments, and the
// ranks' code is not one body.
sdma.schedule @many ranks(%R = 2) buffers(%a : 34, %b : 34)
    implements broadcast(%a -> %b) root 0 {
  sdma.copy %a[0, 1] on 0 -> %b[0, 1] on 0
  sdma.copy %a[0, 1] on 0 -> %b[0, 1] on 1
  sdma.fence on 0
  sdma.copy %a[1, 1] on 0 -> %b[1, 1] on 0
  sdma.copy %a[1, 1] on 0 -> %b[1, 1] on 1
  sdma.fence on 0
  sdma.copy %a[2, 1] on 0 -> %b[2, 1] on 0
  sdma.copy %a[2, 1] on 0 -> %b[2, 1] on 1
  sdma.fence on 0
  sdma.copy %a[3, 1] on 0 -> %b[3, 1] on 0
  sdma.copy %a[3, 1] on 0 -> %b[3, 1] on 1
  sdma.fence on 0
  sdma.copy %a[4, 1] on 0 -> %b[4, 1] on 0
  sdma.copy %a[4, 1] on 0 -> %b[4, 1] on 1
  sdma.fence on 0
  sdma.copy %a[5, 1] on 0 -> %b[5, 1] on 0
  sdma.copy %a[5, 1] on 0 -> %b[5, 1] on 1
  sdma.fence on 0
  sdma.copy %a[6, 1] on 0 -> %b[6, 1] on 0
  sdma.copy %a[6, 1] on 0 -> %b[6, 1] on 1
  sdma.fence on 0
  sdma.copy %a[7, 1] on 0 -> %b[7, 1] on 0
  sdma.copy %a[7, 1] on 0 -> %b[7, 1] on 1
  sdma.fence on 0
  sdma.copy %a[8, 1] on 0 -> %b[8, 1] on 0
  sdma.copy %a[8, 1] on 0 -> %b[8, 1] on 1
  sdma.fence on 0
  sdma.copy %a[9, 1] on 0 -> %b[9, 1] on 0
  sdma.copy %a[9, 1] on 0 -> %b[9, 1] on 1
  sdma.fence on 0
  sdma.copy %a[10, 1] on 0 -> %b[10, 1] on 0
  sdma.copy %a[10, 1] on 0 -> %b[10, 1] on 1
  sdma.fence on 0
  sdma.copy %a[11, 1] on 0 -> %b[11, 1] on 0
  sdma.copy %a[11, 1] on 0 -> %b[11, 1] on 1
  sdma.fence on 0
  sdma.copy %a[12, 1] on 0 -> %b[12, 1] on 0
  sdma.copy %a[12, 1] on 0 -> %b[12, 1] on 1
  sdma.fence on 0
  sdma.copy %a[13, 1] on 0 -> %b[13, 1] on 0
  sdma.copy %a[13, 1] on 0 -> %b[13, 1] on 1
  sdma.fence on 0
  sdma.copy %a[14, 1] on 0 -> %b[14, 1] on 0
  sdma.copy %a[14, 1] on 0 -> %b[14, 1] on 1
  sdma.fence on 0
  sdma.copy %a[15, 1] on 0 -> %b[15, 1] on 0
  sdma.copy %a[15, 1] on 0 -> %b[15, 1] on 1
  sdma.fence on 0
  sdma.copy %a[16, 1] on 0 -> %b[16, 1] on 0
  sdma.copy %a[16, 1] on 0 -> %b[16, 1] on 1
  sdma.fence on 0
  sdma.copy %a[17, 1] on 0 -> %b[17, 1] on 0
  sdma.copy %a[17, 1] on 0 -> %b[17, 1] on 1
  sdma.fence on 0
  sdma.copy %a[18, 1] on 0 -> %b[18, 1] on 0
  sdma.copy %a[18, 1] on 0 -> %b[18, 1] on 1
  sdma.fence on 0
  sdma.copy %a[19, 1] on 0 -> %b[19, 1] on 0
  sdma.copy %a[19, 1] on 0 -> %b[19, 1] on 1
  sdma.fence on 0
  sdma.copy %a[20, 1] on 0 -> %b[20, 1] on 0
  sdma.copy %a[20, 1] on 0 -> %b[20, 1] on 1
  sdma.fence on 0
  sdma.copy %a[21, 1] on 0 -> %b[21, 1] on 0
  sdma.copy %a[21, 1] on 0 -> %b[21, 1] on 1
  sdma.fence on 0
  sdma.copy %a[22, 1] on 0 -> %b[22, 1] on 0
  sdma.copy %a[22, 1] on 0 -> %b[22, 1] on 1
  sdma.fence on 0
  sdma.copy %a[23, 1] on 0 -> %b[23, 1] on 0
  sdma.copy %a[23, 1] on 0 -> %b[23, 1] on 1
  sdma.fence on 0
  sdma.copy %a[24, 1] on 0 -> %b[24, 1] on 0
  sdma.copy %a[24, 1] on 0 -> %b[24, 1] on 1
  sdma.fence on 0
  sdma.copy %a[25, 1] on 0 -> %b[25, 1] on 0
  sdma.copy %a[25, 1] on 0 -> %b[25, 1] on 1
  sdma.fence on 0
  sdma.copy %a[26, 1] on 0 -> %b[26, 1] on 0
  sdma.copy %a[26, 1] on 0 -> %b[26, 1] on 1
  sdma.fence on 0
  sdma.copy %a[27, 1] on 0 -> %b[27, 1] on 0
  sdma.copy %a[27, 1] on 0 -> %b[27, 1] on 1
  sdma.fence on 0
  sdma.copy %a[28, 1] on 0 -> %b[28, 1] on 0
  sdma.copy %a[28, 1] on 0 -> %b[28, 1] on 1
  sdma.fence on 0
  sdma.copy %a[29, 1] on 0 -> %b[29, 1] on 0
  sdma.copy %a[29, 1] on 0 -> %b[29, 1] on 1
  sdma.fence on 0
  sdma.copy %a[30, 1] on 0 -> %b[30, 1] on 0
  sdma.copy %a[30, 1] on 0 -> %b[30, 1] on 1
  sdma.fence on 0
  sdma.copy %a[31, 1] on 0 -> %b[31, 1] on 0
  sdma.copy %a[31, 1] on 0 -> %b[31, 1] on 1
  sdma.fence on 0
  sdma.copy %a[32, 1] on 0 -> %b[32, 1] on 0
  sdma.copy %a[32, 1] on 0 -> %b[32, 1] on 1
  sdma.fence on 0
  sdma.copy %a[33, 1] on 0 -> %b[33, 1] on 0
  sdma.copy %a[33, 1] on 0 -> %b[33, 1] on 1
  sdma.fence on 0
}
