; Generated from compiler/tree-sitter-mexpr/queries/highlights.scm with
; capture names renamed to Helix scopes (tests/lsp_editors.rs); edit the
; grammar's query, then run `PMX_UPDATE_EDITORS=1 cargo test --test lsp_editors`.

; Highlight queries for MExpr.
;
; Every node is captured at most once, so the result does not depend on
; whether an editor lets the first or the last matching pattern win.
; Variables are captured on the `var` node, function positions and built-ins
; on the `var_ident` inside it (the innermost capture is the one shown).

; Comments
; --------

(line_comment) @comment
(block_comment) @comment

; Keywords
; --------

[
  "let"
  "in"
  "recursive"
  "end"
  "type"
  "con"
  "utest"
  "with"
  "using"
  "external"
  "use"
  "mexpr"
  "lang"
  "syn"
  "sem"
  "all"
] @keyword

"lam" @keyword.function

"include" @keyword.control.import

[
  "if"
  "then"
  "else"
  "match"
  "switch"
  "case"
] @keyword.control.conditional

; Literals
; --------

(integer) @constant.numeric.integer
(float) @constant.numeric.float
(char) @constant.character
(string) @string
[
  (true)
  (false)
] @constant.builtin.boolean
(never) @constant.builtin

; Built-ins
; ---------

; The parallel keywords of the accelerate extension are ordinary identifiers
; in the grammar.
((var
  (var_ident) @function.builtin)
  (#any-of? @function.builtin
    "accelerate" "map2" "reduce" "flatten" "loop" "seqLoop" "seqLoopAcc"
    "parallelMap" "printFloat"))

((type_con
  (con_ident) @type.builtin)
  (#any-of? @type.builtin "Int" "Float" "Bool" "Char" "String" "Unknown"))

"Tensor" @type.builtin

; Functions
; ---------

; Definitions whose value is a lambda.
(top_let
  name: (var_ident) @function
  value: (lam_expr))

(let_expr
  name: (var_ident) @function
  value: (lam_expr))

(rec_binding
  name: (var_ident) @function
  value: (lam_expr))

(top_external
  name: (var_ident) @function)

(external_expr
  name: (var_ident) @function)

; Function position of an application (`f` in `f x y`).
(application
  function: (var
    (var_ident) @function)
  (#not-any-of? @function
    "accelerate" "map2" "reduce" "flatten" "loop" "seqLoop" "seqLoopAcc"
    "parallelMap" "printFloat"))

; Parameters
(lam_expr
  param: (var_ident) @variable.parameter)

; Variables
; ---------

(var) @variable

(wildcard) @variable.builtin

(var_pat) @variable

; Types
; -----

(top_type
  name: (_) @type)

(type_in_expr
  name: (_) @type)

(top_type
  param: (var_ident) @type.parameter)

(type_in_expr
  param: (var_ident) @type.parameter)

(forall_type
  var: (var_ident) @type.parameter)

(type_var) @type.parameter

((type_con
  (con_ident) @type)
  (#not-any-of? @type "Int" "Float" "Bool" "Char" "String" "Unknown"))

(type_con
  (escaped_type) @type)

(type_app
  constructor: (_) @type)

; Constructors
; ------------

(top_con
  name: (_) @constructor)

(con_in_expr
  name: (_) @constructor)

(con_app
  constructor: (_) @constructor)

(use_expr
  name: (_) @namespace)

; Languages (MLang)
; -----------------

(mlang_block
  name: (_) @namespace)

(mlang_block
  include: (_) @namespace)

(use_type
  name: (_) @namespace)

(sem_decl
  name: (var_ident) @function)

(sem_param
  name: (var_ident) @variable.parameter)

(syn_decl
  name: (_) @type)

(syn_decl
  param: (var_ident) @type.parameter)

(lang_type
  name: (_) @type)

(lang_type
  param: (var_ident) @type.parameter)

(syn_con
  name: (_) @constructor)

(lang_con
  name: (_) @constructor)

; Patterns
; --------

(con_pat
  constructor: (_) @constructor)

(concat_pat
  "++" @operator)

; Labels
; ------

(projection
  label: (_) @variable.other.member)

(record_field
  label: (_) @variable.other.member)

(record_pat_field
  label: (_) @variable.other.member)

(record_type_field
  label: (_) @variable.other.member)

; Punctuation
; -----------

[
  "("
  ")"
  "["
  "]"
  "{"
  "}"
] @punctuation.bracket

[
  ","
  ";"
  "."
  ":"
] @punctuation.delimiter

[
  "="
  "->"
  "|"
  "&"
  "!"
] @operator
