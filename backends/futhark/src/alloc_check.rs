//! A failed allocation in the C that Futhark generates, made an error.
//!
//! Futhark's C runtime (0.22.7 to at least 0.28's development version)
//! allocates host memory with `malloc` in `host_alloc` and then decides
//! whether the allocation failed by looking at the context's error, which
//! nothing set: a refused `malloc` (a sequence longer than the machine's
//! memory) gave a null block that the program then wrote to, a
//! segmentation fault (FUTHARK_BUGS.md, 15). The generated C is patched
//! before it is compiled so that a null block sets the context's error:
//! the entry then fails as Futhark fails on running out of memory, and the
//! engine reports debug mode's failure.

/// The line of `host_alloc` that allocates.
const ALLOC: &str = "*mem_out = malloc(size);";

/// `c` (Futhark's generated C) with the check added; `c` itself when its
/// `host_alloc` is not the one this knows (another runtime).
pub fn patch(c: &str) -> String {
    // The definition (a prototype comes first): the allocation inside the
    // function, before its closing brace.
    let found = c.match_indices("static void host_alloc(").find_map(|(start, _)| {
        let end = start + c[start..].find("\n}")?;
        let k = c[start..end].find(ALLOC)?;
        Some(start + k + ALLOC.len())
    });
    let Some(at) = found else { return c.to_string() };
    let check = "\n    if (*mem_out == NULL && size != 0 && ctx->error == NULL) { ctx->error = msgprintf(\"Failed to \
                 allocate memory.\\nAttempted allocation: %12lld bytes\\n\", (long long) size); }";
    format!("{}{check}{}", &c[..at], &c[at..])
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUNTIME: &str = "static void host_alloc(struct futhark_context* ctx);\nint x;\n\
                           static void host_alloc(struct futhark_context* ctx,\n                       size_t size, \
                           const char* tag, size_t* size_out, void** mem_out) {\n  if (is_small_alloc(size)) {\n    \
                           *size_out = size;\n    *mem_out = malloc(size);\n  }\n}\n";

    #[test]
    fn a_null_block_sets_the_error() {
        let patched = patch(RUNTIME);
        let line = patched.lines().find(|l| l.contains("*mem_out == NULL")).expect("the check");
        assert!(line.contains("ctx->error = msgprintf(\"Failed to allocate memory."), "{patched}");
        assert!(patched.find("malloc(size);").unwrap() < patched.find("*mem_out == NULL").unwrap());
    }

    #[test]
    fn another_runtime_is_left_as_it_is() {
        let other = "static void host_alloc(int x) {\n  return;\n}\nvoid f() { *mem_out = malloc(size); }\n";
        assert_eq!(patch(other), other);
        assert_eq!(patch("int main() {}"), "int main() {}");
    }
}
