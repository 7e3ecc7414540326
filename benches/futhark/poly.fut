-- Hand-written Futhark of benches/futhark/poly.mc, the reference that
-- benches/native.py runs through the same C API as pmx's generated code.
entry main (xs: []f64) : []f64 =
  map (\x -> 1.0 + x * (2.0 + x * (3.0 + x * (4.0 + x * 5.0)))) xs
