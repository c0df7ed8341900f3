sdma.schedule @s ranks(%R = 18446744073709551617) buffers(%b : 1) {}
