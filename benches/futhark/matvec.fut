-- Hand-written Futhark of benches/futhark/matvec.mc (see poly.fut).
entry main [n][m] (mat: [n][m]f64) (v: [m]f64) : [n]f64 =
  map (\row -> f64.sum (map2 (*) row v)) mat
