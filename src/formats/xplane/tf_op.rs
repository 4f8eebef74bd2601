//! Framework op names as XProf parses them (`ParseTfOpFullname`, `TfOpEventName`,
//! `ParseTfNameScopes` of tsl's `tf_op_utils.cc`): `name:type` for TensorFlow, JAX paths with
//! or without a type, memcpy ops, dataset iterators.

/// What kind of framework op a full name denotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpCategory {
    /// Not recognized (the whole string is the op).
    Unknown,
    /// `name:Type` (TensorFlow), or `name:` whose derived type is not a JAX type.
    TensorFlow,
    /// A JAX path (`jit(f)/dot_general`, with or without `:type`).
    Jax,
    /// `Iterator::…` (tf.data).
    TfData,
    /// `MEMCPYHToD…` and friends.
    Memcpy,
}

/// A parsed framework op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TfOp<'a> {
    /// Category.
    pub category: OpCategory,
    /// Name (the full name for unknown ops).
    pub name: &'a str,
    /// Type (`MatMul`, `dot_general`; empty when unknown).
    pub op_type: &'a str,
}

/// `[A-Za-z0-9.][A-Za-z0-9_./>-]*`
fn is_tf_op_name(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(f) if f.is_ascii_alphanumeric() || f == '.')
        && c.all(|x| x.is_ascii_alphanumeric() || "_./>-".contains(x))
}

/// `[A-Z_][a-zA-Z0-9_]*`
fn is_tf_op_type(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(f) if f.is_ascii_uppercase() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

/// `[a-z_][a-z0-9_]*(\[.*\])?`
fn is_jax_op_type(s: &str) -> bool {
    let (head, rest) = match s.find('[') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let mut c = head.chars();
    let head_ok = matches!(c.next(), Some(f) if f.is_ascii_lowercase() || f == '_')
        && c.all(|x| x.is_ascii_lowercase() || x.is_ascii_digit() || x == '_');
    head_ok && (rest.is_empty() || rest.ends_with(']'))
}

/// The op type derived from a name: its last `/` segment without a numeric `_N` suffix.
fn derive_op_type(full: &str) -> &str {
    let op = full.rsplit('/').next().unwrap_or(full);
    match op.rsplit_once('_') {
        Some((head, suffix)) if suffix.parse::<i64>().is_ok() => head,
        _ => op,
    }
}

fn memcpy_op(s: &str) -> Option<&'static str> {
    let lower = s.get(..10)?.to_ascii_lowercase();
    match lower.as_str() {
        "memcpyhtod" => Some("MemcpyHToD"),
        "memcpydtoh" => Some("MemcpyDToH"),
        "memcpydtod" => Some("MemcpyDToD"),
        "memcpyhtoh" => Some("MemcpyHToH"),
        _ => None,
    }
}

/// Parses a framework op's full name (`ParseTfOpFullname`).
pub fn parse(full: &str) -> TfOp<'_> {
    let unknown = TfOp {
        category: OpCategory::Unknown,
        name: full,
        op_type: "",
    };
    let Some((name, ty)) = full.split_once(':') else {
        return match memcpy_op(full) {
            Some(t) => TfOp {
                category: OpCategory::Memcpy,
                name: full,
                op_type: t,
            },
            None => unknown,
        };
    };
    if name == "Iterator" {
        return TfOp {
            category: OpCategory::TfData,
            name: full,
            op_type: "Dataset",
        };
    }
    if is_tf_op_name(name) && is_tf_op_type(ty) {
        return TfOp {
            category: OpCategory::TensorFlow,
            name,
            op_type: ty,
        };
    }
    let op_type = if ty.is_empty() {
        derive_op_type(name)
    } else {
        ty
    };
    if is_jax_op_type(op_type) {
        let t = op_type.split('[').next().unwrap_or(op_type);
        return TfOp {
            category: OpCategory::Jax,
            name,
            op_type: t,
        };
    }
    if ty.is_empty() {
        return TfOp {
            category: OpCategory::TensorFlow,
            name,
            op_type,
        };
    }
    unknown
}

impl<'a> TfOp<'a> {
    /// The name scopes (`a/b/op` → `a`, `b`); only TensorFlow and JAX ops have them.
    pub fn scopes(&self) -> impl Iterator<Item = &'a str> + 'a {
        let has = matches!(self.category, OpCategory::TensorFlow | OpCategory::Jax);
        let name = if has { self.name } else { "" };
        let n = if has { name.split('/').count() - 1 } else { 0 };
        name.split('/').take(n)
    }

    /// The event name XProf shows for the op (`TfOpEventName`): the type, the trimmed name of
    /// an unknown op, `Iterator::<last>` for tf.data.
    pub fn event_name(&self) -> String {
        match self.category {
            OpCategory::Unknown => self.name.trim_end().to_string(),
            OpCategory::TfData => {
                let last = self.name.rsplit("::").next().unwrap_or(self.name);
                format!("Iterator::{last}")
            }
            _ => self.op_type.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_xprof() {
        let t = parse("model/dense/MatMul:MatMul");
        assert_eq!(
            (t.category, t.name, t.op_type),
            (OpCategory::TensorFlow, "model/dense/MatMul", "MatMul")
        );
        assert_eq!(t.scopes().collect::<Vec<_>>(), vec!["model", "dense"]);
        let j = parse("jit(autotune_fn_0)/dot_general:");
        assert_eq!((j.category, j.op_type), (OpCategory::Jax, "dot_general"));
        assert_eq!(j.scopes().collect::<Vec<_>>(), vec!["jit(autotune_fn_0)"]);
        assert_eq!(j.event_name(), "dot_general");
        let t2 = parse("jit(f)/transpose:transpose[permutation=(1, 0)]");
        assert_eq!((t2.category, t2.op_type), (OpCategory::Jax, "transpose"));
        // An instruction without metadata: XProf shows the full name `:`.
        let e = parse(":");
        assert_eq!((e.category, e.op_type), (OpCategory::TensorFlow, ""));
        assert_eq!(e.scopes().count(), 0);
        assert_eq!(e.event_name(), "");
        assert_eq!(parse("a/b/Conv2D_3:").op_type, "Conv2D");
        assert_eq!(parse("Iterator::Batch::Map").event_name(), "Iterator::Map");
        assert_eq!(parse("MEMCPYHToD").op_type, "MemcpyHToD");
        assert_eq!(parse("plain name ").event_name(), "plain name");
        assert_eq!(parse("x:Y z").category, OpCategory::Unknown);
    }
}
