(* A recursive variant with records: 200,000 keys inserted into a binary
   search tree (keys from a linear congruential generator), then summed. *)
type tree = Leaf | Node of { left : tree; key : int; right : tree }
let rec insert k t = match t with
  | Node r -> if k < r.key then Node { r with left = insert k r.left }
              else if k > r.key then Node { r with right = insert k r.right } else t
  | Leaf -> Node { left = Leaf; key = k; right = Leaf }
let rec sum t = match t with Node r -> sum r.left + r.key + sum r.right | Leaf -> 0
let rec build i seed t =
  if i = 0 then t else
  let seed = (seed * 1103515245 + 12345) mod 2147483648 in
  build (i - 1) seed (insert (seed mod 1000000) t)
let () = print_endline (string_of_int (sum (build 200000 42 Leaf)))
