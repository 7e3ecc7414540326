/*
 * External scanner for tree-sitter-mexpr.
 *
 * Tokens:
 *
 * - BLOCK_COMMENT: `/- ... -/`, which may be nested (`/- a /- b -/ c -/` is
 *   one comment). An unterminated comment runs to the end of the input; the
 *   scanner never loops at EOF.
 *
 * - TOP_LET, TOP_RECURSIVE, TOP_TYPE, TOP_CON, TOP_UTEST, TOP_EXTERNAL: the
 *   keyword `let` / `recursive` / ... written at column 0 before the `mexpr`
 *   section. The grammar accepts these only where a top-level declaration
 *   (or a `recursive ... end` binding) may start, so a column-0 `let` inside
 *   an unfinished declaration is a syntax error at that `let`, and error
 *   recovery restarts there instead of reading the rest of the file as part
 *   of the broken declaration. In the `mexpr` section (where `let ... in` at
 *   column 0 is the usual style) the keywords are ordinary again.
 *
 * - MEXPR: the keyword `mexpr`, wherever the word `mexpr` appears (it is
 *   reserved). Where it starts the mexpr section it sets `in_mexpr`
 *   (serialised, with `parity`, in one byte). The keyword is lexed here
 *   rather than by the generated lexer so that the state flips even when
 *   `mexpr` follows a broken declaration and is only reached through error
 *   recovery.
 */

#include "tree_sitter/alloc.h"
#include "tree_sitter/parser.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

enum TokenType {
  BLOCK_COMMENT,
  TOP_LET,
  TOP_RECURSIVE,
  TOP_TYPE,
  TOP_CON,
  TOP_UTEST,
  TOP_EXTERNAL,
  MEXPR,
};

typedef struct {
  /* Set by the `mexpr` keyword: the column-0 rule is off from there on. */
  bool in_mexpr;
  /* Flips with every TOP_* token, so that each of them changes the
   * serialised state. Tree-sitter's error recovery never skips a token that
   * changes the scanner state when it can instead pop back to a state where
   * the token is valid; this is what makes a column-0 keyword a reliable
   * resynchronisation point. `mexpr` resets it, so the states in the mexpr
   * section do not depend on how many declarations precede it (this keeps
   * incremental reparsing of the section cheap). */
  bool parity;
} Scanner;

void *tree_sitter_mexpr_external_scanner_create(void) {
  Scanner *s = (Scanner *)ts_calloc(1, sizeof(Scanner));
  return s;
}

void tree_sitter_mexpr_external_scanner_destroy(void *payload) { ts_free(payload); }

unsigned tree_sitter_mexpr_external_scanner_serialize(void *payload, char *buffer) {
  Scanner *s = (Scanner *)payload;
  buffer[0] = (char)((s->in_mexpr ? 1 : 0) | (s->parity ? 2 : 0));
  return 1;
}

void tree_sitter_mexpr_external_scanner_deserialize(void *payload, const char *buffer,
                                                    unsigned length) {
  Scanner *s = (Scanner *)payload;
  s->in_mexpr = length > 0 && (buffer[0] & 1) != 0;
  s->parity = length > 0 && (buffer[0] & 2) != 0;
}

static bool is_space(int32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_ident_char(int32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_';
}

static bool scan_block_comment(TSLexer *lexer) {
  /* The opening `/` has been consumed; the lookahead is `-`. */
  lexer->advance(lexer, false);
  unsigned depth = 1;
  while (depth > 0) {
    if (lexer->eof(lexer)) break; /* unterminated: the comment ends at EOF */
    int32_t c = lexer->lookahead;
    if (c == '/') {
      lexer->advance(lexer, false);
      if (lexer->lookahead == '-') {
        lexer->advance(lexer, false);
        depth++;
      }
    } else if (c == '-') {
      lexer->advance(lexer, false);
      if (lexer->lookahead == '/') {
        lexer->advance(lexer, false);
        depth--;
      }
    } else {
      lexer->advance(lexer, false);
    }
  }
  lexer->mark_end(lexer);
  lexer->result_symbol = BLOCK_COMMENT;
  return true;
}

/* Whether the word of `len` characters just read started at column 0. A
 * token never ends with a newline, so after skipped whitespace this is
 * "the last character skipped was a newline"; with nothing skipped it can
 * only be the start of the input, which get_column decides. */
static bool at_column_0(TSLexer *lexer, bool skipped, bool after_newline, unsigned len) {
  if (skipped) return after_newline;
  return lexer->get_column(lexer) == len;
}

bool tree_sitter_mexpr_external_scanner_scan(void *payload, TSLexer *lexer,
                                             const bool *valid_symbols) {
  Scanner *s = (Scanner *)payload;

  /* Skip whitespace, remembering whether the last character skipped was a
   * newline (see at_column_0). */
  bool skipped = false;
  bool after_newline = false;
  while (is_space(lexer->lookahead)) {
    skipped = true;
    after_newline = lexer->lookahead == '\n';
    lexer->advance(lexer, true);
  }

  if (lexer->lookahead == '/') {
    if (!valid_symbols[BLOCK_COMMENT]) return false;
    lexer->advance(lexer, false);
    if (lexer->lookahead != '-') return false;
    return scan_block_comment(lexer);
  }

  if (lexer->lookahead < 'a' || lexer->lookahead > 'z') return false;

  char word[12];
  unsigned len = 0;
  while (is_ident_char(lexer->lookahead)) {
    if (len + 1 >= sizeof(word)) return false; /* longer than any keyword */
    word[len++] = (char)lexer->lookahead;
    lexer->advance(lexer, false);
  }
  word[len] = '\0';

  if (strcmp(word, "mexpr") == 0) {
    /* Always the keyword (it is reserved). It starts the mexpr section, and
     * so switches the column-0 rule off, where the grammar expects it (or in
     * error recovery, where everything is valid) and wherever it is written
     * at column 0 (a broken declaration before it must not hide it). */
    if (valid_symbols[MEXPR] || at_column_0(lexer, skipped, after_newline, len)) {
      s->parity = false;
      s->in_mexpr = true;
    }
    lexer->mark_end(lexer);
    lexer->result_symbol = MEXPR;
    return true;
  }

  if (s->in_mexpr) return false;

  enum TokenType kw;
  if (strcmp(word, "let") == 0) {
    kw = TOP_LET;
  } else if (strcmp(word, "recursive") == 0) {
    kw = TOP_RECURSIVE;
  } else if (strcmp(word, "type") == 0) {
    kw = TOP_TYPE;
  } else if (strcmp(word, "con") == 0) {
    kw = TOP_CON;
  } else if (strcmp(word, "utest") == 0) {
    kw = TOP_UTEST;
  } else if (strcmp(word, "external") == 0) {
    kw = TOP_EXTERNAL;
  } else {
    return false;
  }

  if (!at_column_0(lexer, skipped, after_newline, len)) return false;

  s->parity = !s->parity;
  lexer->mark_end(lexer);
  lexer->result_symbol = kw;
  return true;
}
