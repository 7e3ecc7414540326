(* String building and parsing: 200,000 numbers written with
   string_of_int into one comma-separated string, parsed back, summed. *)
let write n =
  let b = Buffer.create 16 in
  for i = 0 to n - 1 do Buffer.add_char b ','; Buffer.add_string b (string_of_int (i * 7)) done;
  Buffer.contents b
let parse s =
  let acc = ref 0 and cur = ref 0 in
  String.iter (fun c -> if c = ',' then (acc := !acc + !cur; cur := 0)
                        else cur := !cur * 10 + (Char.code c - 48)) s;
  !acc + !cur
let () = print_endline (string_of_int (parse (write 200000)))
