-- Hand-written Futhark of benches/futhark/sumsq.mc (see poly.fut).
entry main (xs: []f64) : f64 =
  f64.sum (map (\x -> x * x) xs)
