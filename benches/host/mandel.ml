(* A float loop written as tail recursion: escape counts of a Mandelbrot
   grid of 600 by 400 points, at most 500 iterations each. *)
let rec escape cr ci zr zi i =
  if i = 500 then i else
  let zr2 = zr *. zr in
  let zi2 = zi *. zi in
  if zr2 +. zi2 > 4.0 then i else
  escape cr ci (zr2 -. zi2 +. cr) (2.0 *. (zr *. zi) +. ci) (i + 1)
let cx x = float_of_int x *. (3.0 /. 600.0) -. 2.0
let cy y = float_of_int y *. (2.0 /. 400.0) -. 1.0
let rec row y x acc = if x = 600 then acc else row y (x + 1) (acc + escape (cx x) (cy y) 0.0 0.0 0)
let rec rows y acc = if y = 400 then acc else rows (y + 1) (row y 0 acc)
let () = print_endline (string_of_int (rows 0 0))
