// RUN: sdma-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{buffer 'b' has element type i16, expected f16, bf16, f32, f64, i8, ui8, i32, ui32, i64 or ui64}}
sdma.schedule @s ranks(%R = 2) buffers(%b : i16[1]) {}

// -----

// expected-error @+1 {{expected '['}}
sdma.schedule @s ranks(%R = 2) buffers(%b : f32 1) {}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%a : f32[1], %b : 1) {
  // expected-error @+1 {{needs typed buffers, but 'b' has no element type (declare it as, e.g., f32[ranks])}}
  sdma.reduce sum %a[0, 1] on 0 <- %b[0, 1] on 1
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%a : f32[1], %b : bf16[1]) {
  // expected-error @+1 {{combines 'b' of 'bf16' into 'a' of 'f32': the element types differ}}
  sdma.reduce sum %a[0, 1] on 0 <- %b[0, 1] on 1
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%a : f32[4]) {
  // expected-error @+1 {{unknown reduction 'avg' (expected sum, max, min or prod)}}
  sdma.reduce avg %a[0, 1] on 0 <- %a[1, 1] on 1
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%a : f32[4]) {
  // expected-error @+1 {{source and destination overlap}}
  sdma.reduce sum %a[0, 2] on 0 <- %a[1, 2] on 0
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%a : f32[4]) {
  // expected-error @+1 {{destination has 2 chunks but source has 1}}
  sdma.reduce sum %a[0, 2] on 0 <- %a[2, 1] on 1
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%a : f32[4]) {
  // expected-error @+1 {{source rank 2 is out of range [0, 2)}}
  sdma.reduce sum %a[0, 1] on 0 <- %a[2, 1] on 2
}

// -----

// expected-error @+1 {{'all_reduce' needs an input and an output of one element type (e.g. f32[1]), got untyped and 'f32'}}
sdma.schedule @s ranks(%R = 2) buffers(%in : 1, %out : f32[1])
    implements all_reduce(%in -> %out) {}

// -----

// expected-error @+1 {{'reduce_scatter' needs an input and an output of one element type (e.g. f32[1]), got 'f16' and 'bf16'}}
sdma.schedule @s ranks(%R = 2) buffers(%in : f16[ranks], %out : bf16[1])
    implements reduce_scatter(%in -> %out) {}

// -----

// expected-error @+1 {{'reduce' needs a root}}
sdma.schedule @s ranks(%R = 2) buffers(%in : f32[1], %out : f32[1])
    implements reduce(%in -> %out) {}

// -----

// expected-error @+1 {{'reduce_scatter' cannot be in place}}
sdma.schedule @s ranks(%R = 2) buffers(%in : f32[ranks])
    implements reduce_scatter(%in -> %in) {}

// -----

// A count table holds 64-bit counts: no element type inside its brackets.
// expected-error @+1 {{custom op 'sdma.schedule' expected integer value}}
sdma.schedule @s ranks(%R = 2) buffers(%n : counts[f32]) {}
