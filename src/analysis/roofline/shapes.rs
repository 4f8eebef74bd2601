//! The recorded inputs of a PyTorch op (`record_shapes=True`): `Input Dims`, `Input type` and
//! `Concrete Inputs`, parsed from the compact JSON text the loader interned.

use serde_json::Value;

/// One input's recorded dims: a tensor's shape (`[]` for a scalar or an absent optional), or a
/// list of shapes (a `TensorList`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dims {
    /// A tensor (or scalar: empty).
    Shape(Vec<i64>),
    /// A tensor list.
    List(Vec<Vec<i64>>),
}

/// The recorded inputs of one call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpInputs {
    /// `Input Dims`, one per argument.
    pub dims: Vec<Dims>,
    /// `Input type`, one per argument (`""` when none).
    pub types: Vec<String>,
    /// `Concrete Inputs`, one per argument (`""` when not recorded).
    pub concrete: Vec<String>,
}

impl OpInputs {
    /// Parses the three args from their JSON text (absent ones: empty).
    pub fn parse(dims: Option<&str>, types: Option<&str>, concrete: Option<&str>) -> OpInputs {
        OpInputs {
            dims: dims.map(parse_dims).unwrap_or_default(),
            types: types.map(parse_strings).unwrap_or_default(),
            concrete: concrete.map(parse_strings).unwrap_or_default(),
        }
    }

    /// Shape of argument `i` when it is a tensor with a recorded shape.
    pub fn shape(&self, i: usize) -> Option<&[i64]> {
        match self.dims.get(i)? {
            Dims::Shape(s) => Some(s),
            Dims::List(_) => None,
        }
    }

    /// Shape of argument `i` when it is a non-scalar tensor (rank ≥ 1).
    pub fn tensor(&self, i: usize) -> Option<&[i64]> {
        self.shape(i).filter(|s| !s.is_empty())
    }

    /// Recorded type of argument `i` (`""` when none).
    pub fn ty(&self, i: usize) -> &str {
        self.types.get(i).map_or("", String::as_str)
    }

    /// Concrete value of argument `i` (`""` when not recorded).
    pub fn concrete(&self, i: usize) -> &str {
        self.concrete.get(i).map_or("", |s| s.trim())
    }

    /// Concrete argument `i` as a bool (`True`/`False`, `1`/`0`); `None` when not recorded.
    pub fn flag(&self, i: usize) -> Option<bool> {
        match self.concrete(i).to_ascii_lowercase().as_str() {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => None,
        }
    }

    /// Concrete argument `i` as an integer list (`[0, 1]`, or one integer).
    pub fn int_list(&self, i: usize) -> Option<Vec<i64>> {
        let s = self.concrete(i);
        let inner = s.strip_prefix('[').and_then(|t| t.strip_suffix(']'));
        match inner {
            Some(t) if t.trim().is_empty() => Some(Vec::new()),
            Some(t) => t.split(',').map(|x| x.trim().parse().ok()).collect(),
            None => s.parse().ok().map(|v| vec![v]),
        }
    }

    /// Concrete argument `i` as a bool list (`[True, False]`).
    pub fn bool_list(&self, i: usize) -> Option<Vec<bool>> {
        let s = self.concrete(i);
        let t = s.strip_prefix('[')?.strip_suffix(']')?;
        t.split(',')
            .map(|x| match x.trim().to_ascii_lowercase().as_str() {
                "true" => Some(true),
                "false" => Some(false),
                _ => None,
            })
            .collect()
    }
}

/// Number of elements of a shape (1 for a scalar `[]`), saturating.
pub fn numel(shape: &[i64]) -> f64 {
    shape.iter().map(|&d| d.max(0) as f64).product()
}

fn ints(v: &[Value]) -> Option<Vec<i64>> {
    v.iter().map(Value::as_i64).collect()
}

fn parse_dims(text: &str) -> Vec<Dims> {
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    items
        .iter()
        .map(|it| match it {
            Value::Array(a) if a.iter().all(Value::is_array) && !a.is_empty() => Dims::List(
                a.iter()
                    .filter_map(|x| x.as_array().and_then(|x| ints(x)))
                    .collect(),
            ),
            Value::Array(a) => Dims::Shape(ints(a).unwrap_or_default()),
            _ => Dims::Shape(Vec::new()),
        })
        .collect()
}

fn parse_strings(text: &str) -> Vec<String> {
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    items
        .iter()
        .map(|it| match it {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_recorded_args_of_a_real_addmm() {
        let a = OpInputs::parse(
            Some("[[128],[512,128],[128,128],[],[]]"),
            Some(r#"["float","float","float","Scalar","Scalar"]"#),
            Some(r#"["","","","1","1"]"#),
        );
        assert_eq!(a.tensor(1), Some(&[512, 128][..]));
        assert_eq!(a.tensor(3), None);
        assert_eq!(a.shape(3), Some(&[][..]));
        assert_eq!(a.ty(0), "float");
        assert_eq!(a.concrete(4), "1");
        assert_eq!(numel(&[]), 1.0);
    }

    #[test]
    fn concrete_lists_flags_and_tensor_lists() {
        let a = OpInputs::parse(
            Some("[[[2,3],[4,5]],[3]]"),
            None,
            Some(r#"["[0, 1]","True","[True, True, False]","x"]"#),
        );
        assert_eq!(a.dims[0], Dims::List(vec![vec![2, 3], vec![4, 5]]));
        assert_eq!(a.shape(0), None);
        assert_eq!(a.int_list(0), Some(vec![0, 1]));
        assert_eq!(a.flag(1), Some(true));
        assert_eq!(a.bool_list(2), Some(vec![true, true, false]));
        assert_eq!(a.flag(3), None);
        assert_eq!(a.ty(7), "");
        assert_eq!(OpInputs::parse(Some("not json"), None, None).dims.len(), 0);
    }
}
