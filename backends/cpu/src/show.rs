//! Printing values (failing utests, `dprint`) and structural equality.

use crate::value::{Seq, Value};
use pmx_ast::compare_labels;

/// OCaml's `string_of_float`: `%.12g`, with a `.` added when the result
/// looks like an integer (`1.`, `-3.`), `inf`, `-inf`, `nan`.
pub fn float2string(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let s = format_g(f, 12);
    if s.chars().all(|c| c.is_ascii_digit() || c == '-') {
        format!("{s}.")
    } else {
        s
    }
}

/// C's `%.{precision}g`.
fn format_g(f: f64, precision: usize) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    // The exponent after rounding to `precision` significant digits.
    let sci = format!("{:.*e}", precision - 1, f);
    let (mantissa, exp) = sci.split_once('e').expect("scientific notation has an exponent");
    let exp: i32 = exp.parse().expect("exponent is an integer");
    if exp < -4 || exp >= precision as i32 {
        let mantissa = trim_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        let decimals = (precision as i32 - 1 - exp).max(0) as usize;
        trim_zeros(&format!("{:.*}", decimals, f)).to_string()
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

pub fn show(v: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, v, false);
    out
}

fn escape_char(c: char, quote: char, out: &mut String) {
    match c {
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        '\\' => out.push_str("\\\\"),
        c if c == quote => {
            out.push('\\');
            out.push(c);
        }
        c => out.push(c),
    }
}

fn write_value(out: &mut String, v: &Value, nested: bool) {
    match v {
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) => out.push_str(&float2string(*f)),
        Value::Dual(d) => out.push_str(&float2string(d.primal)),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Char(c) => {
            out.push('\'');
            escape_char(*c, '\'', out);
            out.push('\'');
        }
        Value::Seq(s) => match &**s {
            Seq::Char(chars) => {
                out.push('"');
                for c in chars.as_slice() {
                    escape_char(*c, '"', out);
                }
                out.push('"');
            }
            s => {
                out.push('[');
                for (i, e) in s.to_values().iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_value(out, e, false);
                }
                out.push(']');
            }
        },
        Value::Record(r) => {
            if r.values.is_empty() {
                out.push_str("()");
                return;
            }
            if pmx_ast::is_tuple_labels(r.labels.iter()) {
                out.push('(');
                for (i, e) in r.values.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_value(out, e, false);
                }
                if r.values.len() == 1 {
                    out.push(',');
                }
                out.push(')');
            } else {
                out.push('{');
                for (i, (l, e)) in r.labels.iter().zip(r.values.iter()).enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(l);
                    out.push_str(" = ");
                    write_value(out, e, false);
                }
                out.push('}');
            }
        }
        Value::Con(c) => {
            if nested {
                out.push('(');
            }
            out.push_str(&c.name);
            out.push(' ');
            write_value(out, &c.arg, true);
            if nested {
                out.push(')');
            }
        }
        Value::Closure(_) | Value::Partial(_) | Value::Builtin(_) | Value::External(_) => out.push_str("<function>"),
        Value::Tensor(t) => {
            out.push_str("<tensor");
            for d in &t.shape {
                out.push_str(&format!(" {d}"));
            }
            out.push('>');
        }
        Value::Ref(_) => out.push_str("<ref>"),
        Value::Symbol(s) => out.push_str(&format!("<symbol {s}>")),
    }
}

/// Structural equality, as `utest` without `using` compares. Functions
/// cannot be compared.
pub fn equal(a: &Value, b: &Value) -> Result<bool, String> {
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x == y,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Char(x), Value::Char(y)) => x == y,
        (Value::Seq(x), Value::Seq(y)) => {
            if x.len() != y.len() {
                return Ok(false);
            }
            match (&**x, &**y) {
                (Seq::Int(p), Seq::Int(q)) => p.as_slice() == q.as_slice(),
                (Seq::Char(p), Seq::Char(q)) => p.as_slice() == q.as_slice(),
                (Seq::Bool(p), Seq::Bool(q)) => p.as_slice() == q.as_slice(),
                _ => {
                    for i in 0..x.len() {
                        if !equal(&x.get(i), &y.get(i))? {
                            return Ok(false);
                        }
                    }
                    true
                }
            }
        }
        (Value::Record(x), Value::Record(y)) => {
            if x.labels.len() != y.labels.len() {
                return Ok(false);
            }
            for ((lx, vx), (ly, vy)) in x.labels.iter().zip(x.values.iter()).zip(y.labels.iter().zip(y.values.iter())) {
                if compare_labels(lx, ly) != std::cmp::Ordering::Equal || !equal(vx, vy)? {
                    return Ok(false);
                }
            }
            true
        }
        (Value::Con(x), Value::Con(y)) => x.tag == y.tag && equal(&x.arg, &y.arg)?,
        (Value::Tensor(x), Value::Tensor(y)) => {
            if x.shape != y.shape {
                return Ok(false);
            }
            for (p, q) in x.values().iter().zip(y.values().iter()) {
                if !equal(p, q)? {
                    return Ok(false);
                }
            }
            true
        }
        (Value::Symbol(x), Value::Symbol(y)) => x == y,
        (Value::Ref(x), Value::Ref(y)) => std::sync::Arc::ptr_eq(x, y),
        (Value::Closure(_) | Value::Partial(_) | Value::Builtin(_) | Value::External(_), _) => {
            return Err("functions cannot be compared with `utest`; give an equality with `using`".into())
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::float2string;

    #[test]
    fn floats_print_like_ocaml() {
        assert_eq!(float2string(1.0), "1.");
        assert_eq!(float2string(5e-5), "5e-05");
        assert_eq!(float2string(3.25), "3.25");
        assert_eq!(float2string(-2.5), "-2.5");
        assert_eq!(float2string(1e20), "1e+20");
        assert_eq!(float2string(123456789012.0), "123456789012.");
        assert_eq!(float2string(1234567890123.0), "1.23456789012e+12");
        assert_eq!(float2string(0.1 + 0.2), "0.3");
        assert_eq!(float2string(0.0001), "0.0001");
        assert_eq!(float2string(f64::INFINITY), "inf");
        assert_eq!(float2string(-0.0), "-0.");
        assert_eq!(float2string(100.0), "100.");
    }
}
