(* Tensors read and written outside accelerate: a 200 by 200 matrix
   product with loops over dense arrays of floats. *)
let () =
  let n = 200 in
  let a = Array.init (n * n) (fun ix -> float_of_int (((ix / n) + (ix mod n)) mod 7)) in
  let b = Array.init (n * n) (fun ix -> float_of_int (((ix / n) * (ix mod n)) mod 5)) in
  let c = Array.make (n * n) 0.0 in
  for i = 0 to n - 1 do
    for j = 0 to n - 1 do
      let rec dot k acc = if k = n then acc else dot (k + 1) (acc +. a.(i * n + k) *. b.(k * n + j)) in
      c.(i * n + j) <- dot 0 0.0
    done
  done;
  let rec trace i acc = if i = n then acc else trace (i + 1) (acc +. c.(i * n + i)) in
  Printf.printf "%s\n" (let s = Printf.sprintf "%.12g" (trace 0 0.0) in s)
