/**
 * @file Tree-sitter grammar for MExpr, the core language of the Miking framework.
 *
 * The grammar follows the Miking boot parser (menhir, LR(1)):
 *   - `_left ::= atom | _left atom | con atom` (application, constructor application);
 *   - `sequence_expr ::= _left ';' _expr`;
 *   - the bodies of let / lam / if / match / ... are `_expr` and extend as far
 *     to the right as possible.
 * Node kinds and field names are fixed by SPEC.md in this folder.
 */

/* eslint-disable arrow-parens */
/* eslint-disable camelcase */
/* eslint-disable-next-line spaced-comment */
/// <reference types="tree-sitter-cli/dsl" />
// @ts-check

// Reserved words. `mexpr` is reserved too, but it is lexed by the external
// scanner (see `_mexpr_kw`), which never lets it be an identifier.
const KEYWORDS = [
  'if', 'then', 'else', 'true', 'false', 'match', 'with', 'utest', 'type',
  'con', 'lang', 'let', 'recursive', 'lam', 'in', 'end', 'syn', 'sem', 'use',
  'include', 'never', 'using', 'external', 'switch', 'case', 'all',
];

/**
 * One or more `rule`, separated by `sep`.
 *
 * @param {RuleOrLiteral} sep
 * @param {RuleOrLiteral} rule
 * @return {SeqRule}
 */
function sepBy1(sep, rule) {
  return seq(rule, repeat(seq(sep, rule)));
}

/**
 * `(x, ...)`-style tuple body: `x ,` optionally followed by `x (, x)*`.
 * Covers `(x,)` and `(x, y, ...)`; `(x)` is a separate (paren) rule.
 *
 * @param {RuleOrLiteral} rule
 * @return {SeqRule}
 */
function tupleBody(rule) {
  return seq('(', rule, ',', optional(sepBy1(',', rule)), ')');
}

/**
 * An escaped identifier `#kind"..."`.
 *
 * @param {string} kind
 * @return {TokenRule}
 */
function escaped(kind) {
  return token(seq('#' + kind + '"', /([^"\\\n]|\\.)*/, '"'));
}

module.exports = grammar({
  name: 'mexpr',

  word: $ => $.var_ident,

  extras: $ => [/\s/, $.line_comment, $.block_comment],

  // External tokens (src/scanner.c):
  // - block_comment: nested `/- ... -/`.
  // - _top_*: a top-level keyword (`let`, `recursive`, `type`, `con`,
  //   `utest`, `external`) at column 0 before the `mexpr` section. It always
  //   starts a new declaration; inside an expression it is a syntax error.
  //   This keeps one broken declaration from swallowing the rest of the file.
  //   Each appears in the tree as the ordinary keyword (aliased).
  // - _mexpr_kw: the keyword `mexpr` (shown as "mexpr"). Scanning it switches
  //   the column-0 rule above off for the rest of the file.
  externals: $ => [
    $.block_comment,
    $._top_let,
    $._top_recursive,
    $._top_type,
    $._top_con,
    $._top_utest,
    $._top_external,
    $._mexpr_kw,
  ],

  inline: $ => [
    $._kw_let, $._kw_recursive, $._kw_type, $._kw_con, $._kw_utest,
    $._kw_external,
  ],

  reserved: {
    global: _ => KEYWORDS,
  },

  rules: {
    // ------------------------------------------------------------------
    // Program structure
    // ------------------------------------------------------------------

    source_file: $ => seq(
      repeat(choice($.include, $._top)),
      optional($.mexpr_section),
    ),

    include: $ => seq('include', field('path', $.string)),

    _top: $ => choice(
      $.top_let,
      $.top_recursive,
      $.top_type,
      $.top_con,
      $.top_utest,
      $.top_external,
      $.mlang_block,
    ),

    top_let: $ => seq(
      $._kw_let,
      field('name', $._binder),
      optional(seq(':', field('type', $._type))),
      '=',
      field('value', $._expr),
    ),

    top_recursive: $ => seq($._kw_recursive, repeat1($.rec_binding), 'end'),

    rec_binding: $ => seq(
      $._kw_let,
      field('name', $._binder),
      optional(seq(':', field('type', $._type))),
      '=',
      field('value', $._expr),
    ),

    top_type: $ => seq(
      $._kw_type,
      field('name', $._type_name),
      repeat(field('param', $.var_ident)),
      optional(seq('=', field('definition', $._type))),
    ),

    top_con: $ => seq(
      $._kw_con,
      field('name', $._con_name),
      optional(seq(':', field('type', $._type))),
    ),

    top_utest: $ => seq(
      $._kw_utest,
      field('test', $._expr),
      'with',
      field('expected', $._expr),
      optional(seq('using', field('using', $._expr))),
      optional(seq('else', field('on_fail', $._expr))),
    ),

    top_external: $ => seq(
      $._kw_external,
      field('name', $._binder),
      optional(field('effect', '!')),
      ':',
      field('type', $._type),
    ),

    // MLang: `lang L = A + B  decls  end`. A language's declarations are
    // `syn` (variant types extended by fragments), `sem` (semantic
    // functions: parameters and cases, or a type signature), `type` and
    // `con`; `compiler/syntax/src/mlang/` desugars them to MExpr.
    mlang_block: $ => seq(
      'lang',
      field('name', $._lang_name),
      optional(seq(
        '=',
        sepBy1('+', field('include', $._lang_name)),
        repeat(field('with', $.lang_with)),
      )),
      repeat($._lang_decl),
      'end',
    ),

    // `with T = A.T + B.T` (a type) or `with f = A.f + B.f` (a semantic
    // function) after the languages a language extends: Miking's way to
    // make definitions of one name in several of them one definition.
    lang_with: $ => choice(
      seq('with', field('name', $.con_ident), '=', sepBy1('+', field('source', $.with_type))),
      seq('with', field('name', $.var_ident), '=', sepBy1('+', field('source', $.with_value))),
    ),

    with_type: $ => seq(field('lang', $._lang_name), '.', field('name', $.con_ident)),

    with_value: $ => seq(field('lang', $._lang_name), '.', field('name', $.var_ident)),

    // Miking takes any identifier as a language's name (`_testCSV`).
    _lang_name: $ => choice($.con_ident, $.var_ident),

    _lang_decl: $ => choice($.syn_decl, $.sem_decl, $.lang_type, $.lang_con),

    syn_decl: $ => seq(
      'syn',
      field('name', $._type_name),
      repeat(field('param', $.var_ident)),
      '=',
      repeat($.syn_con),
    ),

    syn_con: $ => seq('|', field('name', $._con_name), optional(field('type', $._type))),

    sem_decl: $ => seq(
      'sem',
      field('name', $._binder),
      choice(
        seq(':', field('type', $._type)),
        seq(repeat(field('param', $.sem_param)), '=', repeat($.sem_case)),
      ),
    ),

    sem_param: $ => choice(
      field('name', $._binder),
      seq('(', field('name', $._binder), ':', field('type', $._type), ')'),
    ),

    sem_case: $ => seq('|', field('pattern', $._pat), '->', field('body', $._expr)),

    lang_type: $ => seq(
      $._kw_type,
      field('name', $._type_name),
      repeat(field('param', $.var_ident)),
      optional(seq('=', field('definition', $._type))),
    ),

    lang_con: $ => seq(
      $._kw_con,
      field('name', $._con_name),
      optional(seq(':', field('type', $._type))),
    ),

    mexpr_section: $ => seq(alias($._mexpr_kw, 'mexpr'), field('body', $._expr)),

    // Keywords that begin a top-level declaration: the ordinary keyword, or
    // the column-0 variant from the external scanner (shown as the keyword).
    _kw_let: $ => choice('let', alias($._top_let, 'let')),
    _kw_recursive: $ => choice('recursive', alias($._top_recursive, 'recursive')),
    _kw_type: $ => choice('type', alias($._top_type, 'type')),
    _kw_con: $ => choice('con', alias($._top_con, 'con')),
    _kw_utest: $ => choice('utest', alias($._top_utest, 'utest')),
    _kw_external: $ => choice('external', alias($._top_external, 'external')),

    // ------------------------------------------------------------------
    // Expressions
    // ------------------------------------------------------------------

    _expr: $ => choice(
      $.let_expr,
      $.rec_let_expr,
      $.lam_expr,
      $.if_expr,
      $.match_expr,
      $.match_in_expr,
      $.switch_expr,
      $.type_in_expr,
      $.con_in_expr,
      $.utest_expr,
      $.external_expr,
      $.use_expr,
      $.sequence_expr,
      $._left,
    ),

    let_expr: $ => seq(
      'let',
      field('name', $._binder),
      optional(seq(':', field('type', $._type))),
      '=',
      field('value', $._expr),
      'in',
      field('body', $._expr),
    ),

    rec_let_expr: $ => seq(
      'recursive',
      repeat1($.rec_binding),
      'in',
      field('body', $._expr),
    ),

    lam_expr: $ => seq(
      'lam',
      optional(field('param', $._binder)),
      optional(seq(':', field('type', $._type))),
      '.',
      field('body', $._expr),
    ),

    if_expr: $ => seq(
      'if', field('condition', $._expr),
      'then', field('then', $._expr),
      'else', field('else', $._expr),
    ),

    match_expr: $ => seq(
      'match', field('scrutinee', $._expr),
      'with', field('pattern', $._pat),
      'then', field('then', $._expr),
      'else', field('else', $._expr),
    ),

    match_in_expr: $ => seq(
      'match', field('scrutinee', $._expr),
      'with', field('pattern', $._pat),
      'in', field('body', $._expr),
    ),

    switch_expr: $ => seq(
      'switch', field('scrutinee', $._expr),
      repeat($.switch_case),
      'end',
    ),

    switch_case: $ => seq(
      'case', field('pattern', $._pat),
      'then', field('body', $._expr),
    ),

    type_in_expr: $ => seq(
      'type',
      field('name', $._type_name),
      repeat(field('param', $.var_ident)),
      optional(seq('=', field('definition', $._type))),
      'in',
      field('body', $._expr),
    ),

    con_in_expr: $ => seq(
      'con',
      field('name', $._con_name),
      optional(seq(':', field('type', $._type))),
      'in',
      field('body', $._expr),
    ),

    utest_expr: $ => seq(
      'utest',
      field('test', $._expr),
      'with',
      field('expected', $._expr),
      optional(seq('using', field('using', $._expr))),
      optional(seq('else', field('on_fail', $._expr))),
      'in',
      field('body', $._expr),
    ),

    external_expr: $ => seq(
      'external',
      field('name', $._binder),
      optional(field('effect', '!')),
      ':',
      field('type', $._type),
      'in',
      field('body', $._expr),
    ),

    use_expr: $ => seq('use', field('name', $._lang_name), 'in', field('body', $._expr)),

    sequence_expr: $ => seq(field('first', $._left), ';', field('rest', $._expr)),

    _left: $ => choice($.application, $.con_app, $._atom),

    application: $ => seq(field('function', $._left), field('argument', $._atom)),

    con_app: $ => seq(field('constructor', $._con_name), field('argument', $._atom)),

    _atom: $ => choice(
      $.projection,
      $.tuple,
      $.paren_expr,
      $.unit,
      $.seq_literal,
      $.record,
      $.record_update,
      $.var,
      $.integer,
      $.float,
      $.char,
      $.string,
      $.true,
      $.false,
      $.never,
    ),

    projection: $ => seq(field('record', $._atom), '.', field('label', $._label)),

    tuple: $ => tupleBody($._expr),

    paren_expr: $ => seq('(', $._expr, ')'),

    unit: _ => seq('(', ')'),

    seq_literal: $ => seq('[', optional(sepBy1(',', $._expr)), ']'),

    record: $ => seq('{', optional(sepBy1(',', $.record_field)), '}'),

    record_update: $ => seq(
      '{',
      field('record', $._expr),
      'with',
      sepBy1(',', $.record_field),
      '}',
    ),

    record_field: $ => seq(field('label', $._field_label), '=', field('value', $._expr)),

    var: $ => choice($.var_ident, $.escaped_var, $.escaped_frozen),

    // Binder of let / lam / external / rec_binding; `_` is a `wildcard` node.
    _binder: $ => choice($.var_ident, $.escaped_var, $.wildcard),

    _con_name: $ => choice($.con_ident, $.escaped_con),

    _type_name: $ => choice($.con_ident, $.escaped_type),

    // Label after `.` in a projection.
    _label: $ => choice($.var_ident, $.con_ident, $.label_index, $.escaped_label),

    // Label of a record field (expression, pattern or type). A numeric label
    // here is lexed as an integer (it shares the state with integer literals
    // after `{`) and shown as a `label_index` node.
    _field_label: $ => choice(
      $.var_ident,
      $.con_ident,
      alias($.integer, $.label_index),
      $.escaped_label,
    ),

    // ------------------------------------------------------------------
    // Patterns
    // ------------------------------------------------------------------

    _pat: $ => choice($.or_pat, $._pat_conj),

    or_pat: $ => seq(field('left', $._pat_conj), '|', field('right', $._pat)),

    _pat_conj: $ => choice($.and_pat, $._pat_atom),

    and_pat: $ => seq(field('left', $._pat_atom), '&', field('right', $._pat_conj)),

    _pat_atom: $ => choice(
      $.var_pat,
      $.wildcard,
      $.integer,
      $.char,
      $.string,
      $.true,
      $.false,
      $.con_pat,
      $.tuple_pat,
      $.paren_pat,
      $.unit_pat,
      $.record_pat,
      $.seq_pat,
      $.concat_pat,
      $.not_pat,
    ),

    not_pat: $ => seq('!', field('pattern', $._pat_atom)),

    var_pat: $ => choice($.var_ident, $.escaped_var),

    wildcard: _ => '_',

    con_pat: $ => seq(
      field('constructor', $._con_name),
      optional(field('argument', $._pat_atom)),
    ),

    tuple_pat: $ => tupleBody($._pat),

    paren_pat: $ => seq('(', $._pat, ')'),

    unit_pat: _ => seq('(', ')'),

    record_pat: $ => seq('{', optional(sepBy1(',', $.record_pat_field)), '}'),

    record_pat_field: $ => seq(
      field('label', $._field_label),
      '=',
      field('pattern', $._pat),
    ),

    seq_pat: $ => seq('[', optional(sepBy1(',', $._pat)), ']'),

    concat_pat: $ => choice(
      seq(
        field('prefix', $._seq_edge),
        '++',
        field('middle', $._concat_middle),
        optional(seq('++', field('suffix', $._seq_edge))),
      ),
      seq(
        field('middle', $._concat_middle),
        '++',
        field('suffix', $._seq_edge),
      ),
    ),

    _seq_edge: $ => choice($.seq_pat, $.string),

    _concat_middle: $ => choice($.var_pat, $.wildcard),

    // ------------------------------------------------------------------
    // Types
    // ------------------------------------------------------------------

    _type: $ => choice($.arrow_type, $.forall_type, $.use_type, $._type_left),

    // `use L in T`: a type that names a language's types.
    use_type: $ => seq('use', field('name', $._lang_name), 'in', field('body', $._type)),

    arrow_type: $ => seq(field('from', $._type_left), '->', field('to', $._type)),

    forall_type: $ => seq(
      'all',
      field('var', $.var_ident),
      optional(seq('::', field('kind', $.data_kind))),
      '.',
      field('body', $._type),
    ),

    // Miking's kinds on type variables: `all a :: {Tree[> Leaf], T[< A B | C]}.`
    // (constructors at least, at most and at least, exactly).
    data_kind: $ => seq('{', optional(sepBy1(',', $.kind_entry)), '}'),

    kind_entry: $ => seq(
      field('type', $._type_name),
      '[',
      choice(
        seq('>', optional(field('lower', $.con_list))),
        seq('|', optional(field('exact', $.con_list))),
        seq('<', optional(field('upper', $.con_list)),
          optional(seq('|', optional(field('lower', $.con_list))))),
      ),
      ']',
    ),

    con_list: $ => repeat1($.con_ident),

    // A constructor type restricted by a kinded variable or to some
    // constructors: `Tree{a}`, `Tree{Leaf Node}`, `Tree{!Leaf}`. The brace
    // follows the name directly, which tells it from a type application to
    // a record type (`Tree {a : Int}`).
    restricted_type: $ => seq(
      field('constructor', $._type_name),
      token.immediate('{'),
      choice(
        field('var', $.var_ident),
        seq(optional(field('negated', '!')), field('constructors', $.con_list)),
      ),
      '}',
    ),

    _type_left: $ => choice($.type_app, $.var_app_type, $._type_atom),

    // A type variable applied to arguments (`self LClosed RClosed`, as
    // Miking's parser/breakable.mc writes): a variable of higher kind.
    var_app_type: $ => seq(
      field('var', $.var_ident),
      repeat1(field('argument', $._type_atom)),
    ),

    type_app: $ => seq(
      field('constructor', $._type_name),
      repeat1(field('argument', $._type_atom)),
    ),

    _type_atom: $ => choice(
      $.restricted_type,
      $.type_con,
      $.type_var,
      $.tensor_type,
      $.seq_type,
      $.record_type,
      $.tuple_type,
      $.unit_type,
      $.paren_type,
    ),

    type_con: $ => choice($.con_ident, $.escaped_type),

    type_var: $ => $.var_ident,

    tensor_type: $ => seq('Tensor', '[', field('element', $._type), ']'),

    seq_type: $ => seq('[', field('element', $._type), ']'),

    record_type: $ => seq('{', optional(sepBy1(',', $.record_type_field)), '}'),

    record_type_field: $ => seq(field('label', $._field_label), ':', field('type', $._type)),

    tuple_type: $ => tupleBody($._type),

    unit_type: _ => seq('(', ')'),

    paren_type: $ => seq('(', $._type, ')'),

    // ------------------------------------------------------------------
    // Lexical
    // ------------------------------------------------------------------

    var_ident: _ => /[a-z][_a-zA-Z0-9]*|_[_a-zA-Z0-9]+/,

    con_ident: _ => /[A-Z][_a-zA-Z0-9]*/,

    escaped_var: _ => escaped('var'),
    escaped_con: _ => escaped('con'),
    escaped_type: _ => escaped('type'),
    escaped_label: _ => escaped('label'),
    escaped_frozen: _ => escaped('frozen'),

    integer: _ => /-?[0-9]+/,

    float: _ => token(seq(
      optional('-'),
      /[0-9]+/,
      choice(
        seq('.', /[0-9]*/, optional(/[eE][+-]?[0-9]+/)),
        /[eE][+-]?[0-9]+/,
      ),
    )),

    label_index: _ => /[0-9]+/,

    char: _ => token(seq('\'', choice(/[^\\]/, /\\./), '\'')),

    string: _ => token(seq('"', repeat(choice(/[^"\\]/, /\\(.|\n)/)), '"')),

    true: _ => 'true',
    false: _ => 'false',
    never: _ => 'never',

    line_comment: _ => token(seq('--', /.*/)),
  },
});
