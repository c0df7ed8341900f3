sdma.schedule @s ranks(%R = 2) buffers(%b : 1) {
  sdma.frobnicate %b[0, 1] on 0
}
