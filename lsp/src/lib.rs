//! The pmx language server (being written).
