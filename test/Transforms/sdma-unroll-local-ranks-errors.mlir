// RUN: sdma-opt %s --sdma-unroll="ranks=4 local-ranks=2" -split-input-file -verify-diagnostics

// expected-error @+1 {{fixes 4 ranks per node but sdma-unroll was given local-ranks=2}}
sdma.schedule @s ranks(%R) buffers(%in : 1, %out : 1) attributes {local_ranks = 4} {
  %G = sdma.local_ranks
  sdma.copy %in[0, 1] on %G -> %out[0, 1] on 0
}

// -----

// expected-error @+1 {{local rank count 0 is out of range [1, 65536]}}
sdma.schedule @s ranks(%R) buffers(%in : 1, %out : 1) attributes {local_ranks = 0} {
}

// -----

// expected-error @+1 {{local rank count 3 does not divide the rank count 4 (every node holds the same number of ranks)}}
sdma.schedule @s ranks(%R = 4) buffers(%in : 1, %out : 1) attributes {local_ranks = 3} {
}

// -----

// expected-error @+1 {{expects to be inside an 'sdma.schedule'}}
%G = sdma.local_ranks
