//! Futhark's manifest: the JSON file that `futhark ... --library` writes
//! beside the C, naming each entry's C function, its inputs and results,
//! and the C functions of each type.
//!
//! Two formats, both read here (futhark-bindgen reads only the first):
//! - up to 0.25, an entry has `outputs`, a list: one C out-parameter per
//!   result;
//! - from 0.26.1, an entry has one `output`. An entry of several results
//!   returns them as one opaque tuple (a record whose fields are `0`, `1`,
//!   ...), read field by field with the record's projection functions and
//!   then freed (Futhark's `docs/c-api.rst`, "Records";
//!   `docs/manifest.schema.json`).
//!
//! What pmx does not use (tuning parameters, sums, arrays of records, the
//! raw array functions) is ignored.

use serde::Deserialize;
use std::collections::BTreeMap;

/// A manifest, as pmx uses it.
#[derive(Clone, Debug)]
pub struct Manifest {
    pub entries: BTreeMap<String, Entry>,
    pub types: BTreeMap<String, Type>,
}

#[derive(Clone, Debug)]
pub struct Entry {
    /// The entry's C function.
    pub cfun: String,
    /// The types of its inputs, in order.
    pub inputs: Vec<String>,
    /// Whether it consumes each input (a unique parameter, `*[]t`).
    pub consumes: Vec<bool>,
    pub outputs: Outputs,
}

/// How an entry returns its results.
#[derive(Clone, Debug, PartialEq)]
pub enum Outputs {
    /// One C out-parameter per result (Futhark up to 0.25).
    Each(Vec<String>),
    /// One out-parameter (0.26.1 and newer): of the result's type, or of
    /// an opaque tuple of the results.
    One(String),
}

#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Type {
    Array(Array),
    Opaque(Opaque),
}

#[derive(Clone, Debug, Deserialize)]
pub struct Array {
    /// The C type of a value, a pointer (`struct futhark_i64_1d *`).
    pub ctype: String,
    pub rank: i32,
    pub elemtype: String,
    pub ops: ArrayOps,
}

#[derive(Clone, Debug, Deserialize)]
pub struct ArrayOps {
    pub new: String,
    pub values: String,
    pub shape: String,
    pub free: String,
    /// `futhark_new_raw_*` (0.25.14 and newer list it; before, it took an
    /// offset and copied).
    #[serde(default)]
    pub new_raw: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Opaque {
    pub ctype: String,
    pub ops: OpaqueOps,
    pub record: Option<Record>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct OpaqueOps {
    pub free: String,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Record {
    /// In the order of the record's `new` function: numeric for tuples.
    pub fields: Vec<Field>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Field {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
    pub project: String,
}

#[derive(Deserialize)]
struct RawManifest {
    entry_points: BTreeMap<String, RawEntry>,
    types: BTreeMap<String, Type>,
}

#[derive(Deserialize)]
struct RawEntry {
    cfun: String,
    inputs: Vec<RawParam>,
    outputs: Option<Vec<RawParam>>,
    output: Option<RawParam>,
}

#[derive(Deserialize)]
struct RawParam {
    #[serde(rename = "type")]
    ty: String,
    #[serde(default)]
    unique: bool,
}

impl Manifest {
    pub fn parse(text: &str) -> Result<Manifest, String> {
        let raw: RawManifest = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let mut entries = BTreeMap::new();
        for (name, e) in raw.entry_points {
            let outputs = match (e.outputs, e.output) {
                (Some(list), None) => Outputs::Each(list.into_iter().map(|p| p.ty).collect()),
                (None, Some(one)) => Outputs::One(one.ty),
                _ => return Err(format!("entry `{name}` has neither `outputs` nor `output` (or both)")),
            };
            let consumes = e.inputs.iter().map(|p| p.unique).collect();
            let inputs = e.inputs.into_iter().map(|p| p.ty).collect();
            entries.insert(name, Entry { cfun: e.cfun, inputs, consumes, outputs });
        }
        Ok(Manifest { entries, types: raw.types })
    }

    /// The record that an entry's one output is, if it is one (several
    /// results in one opaque tuple).
    pub fn tuple_output(&self, e: &Entry) -> Option<(&Opaque, &Record)> {
        let Outputs::One(t) = &e.outputs else { return None };
        match self.types.get(t) {
            Some(Type::Opaque(o)) => o.record.as_ref().map(|r| (o, r)),
            _ => None,
        }
    }

    /// The types of an entry's results, in order, whichever the format.
    pub fn results(&self, e: &Entry) -> Vec<String> {
        if let Some((_, r)) = self.tuple_output(e) {
            return r.fields.iter().map(|f| f.ty.clone()).collect();
        }
        match &e.outputs {
            Outputs::Each(list) => list.clone(),
            Outputs::One(t) => vec![t.clone()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As `futhark multicore --library` 0.22.7 writes it (trimmed).
    const OLD: &str = r#"{
      "backend": "multicore", "version": "0.22.7",
      "entry_points": {"accelerate1": {"cfun": "futhark_entry_accelerate1", "tuning_params": [],
        "inputs": [{"name": "xs", "type": "[]i64", "unique": false}],
        "outputs": [{"type": "[]i64", "unique": true}, {"type": "i64", "unique": false}]}},
      "types": {"[]i64": {"kind": "array", "ctype": "struct futhark_i64_1d *", "rank": 1, "elemtype": "i64",
        "ops": {"free": "futhark_free_i64_1d", "shape": "futhark_shape_i64_1d", "values": "futhark_values_i64_1d",
                "new": "futhark_new_i64_1d", "new_raw": "futhark_new_raw_i64_1d", "values_raw": "futhark_values_raw_i64_1d"}}}
    }"#;

    /// As `docs/manifest.schema.json` of 0.26.1 and newer has it: one
    /// output, an opaque tuple of the results.
    const NEW: &str = r#"{
      "backend": "multicore", "version": "0.27.1",
      "entry_points": {"accelerate1": {"cfun": "futhark_entry_accelerate1", "tuning_params": [], "attributes": [],
        "inputs": [{"name": "xs", "type": "[]i64", "unique": false}],
        "output": {"type": "([]i64, i64)", "unique": false}}},
      "types": {
        "[]i64": {"kind": "array", "ctype": "struct futhark_i64_1d *", "rank": 1, "elemtype": "i64",
          "ops": {"free": "futhark_free_i64_1d", "shape": "futhark_shape_i64_1d", "values": "futhark_values_i64_1d",
                  "values_raw": "futhark_values_raw_i64_1d", "new": "futhark_new_i64_1d",
                  "new_raw": "futhark_new_raw_i64_1d", "index": "futhark_index_i64_1d"}},
        "([]i64, i64)": {"kind": "opaque", "ctype": "struct futhark_opaque_tup2_arr_i64_1d_i64 *",
          "ops": {"free": "futhark_free_opaque_tup2_arr_i64_1d_i64", "store": "futhark_store_opaque_tup2_arr_i64_1d_i64",
                  "restore": "futhark_restore_opaque_tup2_arr_i64_1d_i64"},
          "record": {"new": "futhark_new_opaque_tup2_arr_i64_1d_i64", "fields": [
            {"name": "0", "type": "[]i64", "project": "futhark_project_opaque_tup2_arr_i64_1d_i64_0"},
            {"name": "1", "type": "i64", "project": "futhark_project_opaque_tup2_arr_i64_1d_i64_1"}]}}}
    }"#;

    #[test]
    fn both_formats_give_the_same_results() {
        for text in [OLD, NEW] {
            let m = Manifest::parse(text).unwrap();
            let e = &m.entries["accelerate1"];
            assert_eq!(e.cfun, "futhark_entry_accelerate1");
            assert_eq!(e.inputs, ["[]i64"]);
            assert_eq!(m.results(e), ["[]i64", "i64"]);
        }
        let new = Manifest::parse(NEW).unwrap();
        let (o, r) = new.tuple_output(&new.entries["accelerate1"]).expect("a tuple");
        assert_eq!(o.ops.free, "futhark_free_opaque_tup2_arr_i64_1d_i64");
        assert_eq!(r.fields[1].project, "futhark_project_opaque_tup2_arr_i64_1d_i64_1");
        assert!(Manifest::parse(OLD)
            .unwrap()
            .tuple_output(&Manifest::parse(OLD).unwrap().entries["accelerate1"])
            .is_none());
    }

    /// The glue of 0.26.1's single output: the tuple is made, each field
    /// projected into its slot, the tuple freed; before, one slot each.
    #[test]
    fn the_glue_projects_a_tuple_of_results_into_the_slots() {
        let glue = crate::engine::glue_source(&Manifest::parse(NEW).unwrap(), true).unwrap();
        for line in [
            "struct futhark_opaque_tup2_arr_i64_1d_i64 * r = NULL;",
            "int err = futhark_entry_accelerate1(ctx, &r, *(struct futhark_i64_1d * const *)in[0]);",
            "if (err == 0) err = futhark_project_opaque_tup2_arr_i64_1d_i64_0(ctx, (struct futhark_i64_1d * *)out[0], r);",
            "if (err == 0) err = futhark_project_opaque_tup2_arr_i64_1d_i64_1(ctx, (int64_t *)out[1], r);",
            "int freed = futhark_free_opaque_tup2_arr_i64_1d_i64(ctx, r);",
        ] {
            assert!(glue.contains(line), "{line}\n{glue}");
        }
        let old = crate::engine::glue_source(&Manifest::parse(OLD).unwrap(), false).unwrap();
        assert!(
            old.contains(
                "return futhark_entry_accelerate1(ctx, (struct futhark_i64_1d * *)out[0], (int64_t *)out[1], \
                 *(struct futhark_i64_1d * const *)in[0]);"
            ),
            "{old}"
        );
    }

    /// Where the version wraps a caller's buffer (0.25.14 and newer, on
    /// the CPU), each array type gets `pmx_wrap_*`, calling `new_raw`
    /// without an offset; not where an entry consumes an input, nor where
    /// the version copies.
    #[test]
    fn the_glue_wraps_buffers_only_where_futhark_does_not_copy_them() {
        let m = Manifest::parse(NEW).unwrap();
        let wrap = "void *pmx_wrap_i64_1d(struct futhark_context *ctx, const void *data, const int64_t *dims) {\n  \
                    return futhark_new_raw_i64_1d(ctx, (unsigned char *)data, dims[0]);\n}";
        assert!(crate::engine::glue_source(&m, true).unwrap().contains(wrap));
        assert!(!crate::engine::glue_source(&m, false).unwrap().contains("pmx_wrap_"));
        let consuming = NEW.replace(
            r#""inputs": [{"name": "xs", "type": "[]i64", "unique": false}]"#,
            r#""inputs": [{"name": "xs", "type": "[]i64", "unique": true}]"#,
        );
        assert_ne!(consuming, NEW);
        let glue = crate::engine::glue_source(&Manifest::parse(&consuming).unwrap(), true).unwrap();
        assert!(!glue.contains("pmx_wrap_"), "{glue}");
    }

    #[test]
    fn a_single_result_of_the_new_format_is_that_result() {
        let text = NEW.replace(
            r#""output": {"type": "([]i64, i64)", "unique": false}"#,
            r#""output": {"type": "i64", "unique": false}"#,
        );
        let m = Manifest::parse(&text).unwrap();
        assert_eq!(m.results(&m.entries["accelerate1"]), ["i64"]);
    }

    #[test]
    fn an_entry_without_results_is_an_error() {
        let text = OLD.replace(
            r#""outputs": [{"type": "[]i64", "unique": true}, {"type": "i64", "unique": false}]"#,
            r#""doc": """#,
        );
        assert!(Manifest::parse(&text).unwrap_err().contains("neither"));
    }
}
