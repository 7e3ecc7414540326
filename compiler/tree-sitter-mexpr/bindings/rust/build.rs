//! Compiles the generated parser (`src/parser.c`) and the external scanner
//! (`src/scanner.c`). Both are committed, so no tree-sitter CLI is needed.

fn main() {
    let src_dir = std::path::Path::new("src");

    let mut c_config = cc::Build::new();
    c_config
        .std("c11")
        .include(src_dir)
        .warnings(false)
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-unused-but-set-variable")
        .flag_if_supported("-Wno-trigraphs");
    #[cfg(target_env = "msvc")]
    c_config.flag("-utf-8");

    for file in ["parser.c", "scanner.c"] {
        let path = src_dir.join(file);
        println!("cargo:rerun-if-changed={}", path.display());
        c_config.file(path);
    }
    for header in ["alloc.h", "array.h", "parser.h"] {
        println!("cargo:rerun-if-changed={}", src_dir.join("tree_sitter").join(header).display());
    }

    c_config.compile("tree-sitter-mexpr");
}
