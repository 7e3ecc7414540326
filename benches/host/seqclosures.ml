(* Sequence operations with closures: map, fold and init with lambdas
   that capture values, over 1,000,000 integers, 10 rounds. *)
let round k s =
  let scaled = Array.map (fun x -> x * 3 + k) s in
  Array.fold_left (fun acc x -> if x mod 2 = 0 then acc + x else acc - k) 0 scaled
let rec rounds k s acc = if k = 0 then acc else rounds (k - 1) s (acc + round k s)
let () =
  let s = Array.init 1000000 (fun i -> i) in
  print_endline (string_of_int (rounds 10 s 0))
