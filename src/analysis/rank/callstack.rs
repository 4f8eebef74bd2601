//! The source location of an event from Kineto's `Call stack` arg (captures taken with
//! `with_stack=True` write it on CPU ops as `file.py(N): func;file.py(M): caller;…`, innermost
//! first): the innermost frame outside the profiler and torch's own modules.

use crate::model::{ArgValue, Capture, NO_SLICE};

/// The innermost user frame of the `Call stack` arg of slice `id` or of its nearest enclosing
/// slice that has a non-empty one; `None` when none has.
pub fn call_stack_frame(c: &Capture, id: u32) -> Option<String> {
    let key = c.strings.lookup("Call stack")?;
    let s = &c.slices;
    let mut k = id;
    let mut steps = 0;
    while k != NO_SLICE && steps < 256 {
        let i = k as usize;
        if let Some(ArgValue::Str(v)) = s.args.get(i).and_then(|&a| c.args.get(a, key, &c.strings))
            && let Some(f) = user_frame(c.strings.get(v))
        {
            return Some(f.to_string());
        }
        k = s.parent.get(i).copied().unwrap_or(NO_SLICE);
        steps += 1;
    }
    None
}

/// The first frame of a `;`-separated stack that is not in torch's or the profiler's own
/// modules (else the first frame); `None` for an empty stack.
pub fn user_frame(stack: &str) -> Option<&str> {
    let frames = || stack.split(';').map(str::trim).filter(|f| !f.is_empty());
    let own = |f: &str| f.contains("/torch/") || f.contains("site-packages/") || f.starts_with('<');
    frames().find(|f| !own(f)).or_else(|| frames().next())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn innermost_user_frame() {
        let st = "/env/lib/python3.7/site-packages/torch/autograd/profiler.py(611): __init__;\
                  /env/lib/python3.7/site-packages/torch/nn/modules/conv.py(443): forward;\
                  train.py(88): step;train.py(120): main";
        assert_eq!(user_frame(st), Some("train.py(88): step"));
        assert_eq!(user_frame(""), None);
        assert_eq!(
            user_frame("/site-packages/torch/x.py(1): f"),
            Some("/site-packages/torch/x.py(1): f")
        );
    }
}
