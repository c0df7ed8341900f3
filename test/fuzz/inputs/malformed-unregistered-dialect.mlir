sdma.schedule @s ranks(%R = 2) buffers(%b : 1) {
  "foo.bar"() : () -> ()
}
