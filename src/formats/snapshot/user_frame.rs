//! The place that made an allocation, for grouping: the first user frame of its call stack.
//!
//! A CUDA caching-allocator stack (`torch.cuda.memory._record_memory_history(stacks="all")`)
//! is innermost first: the unwinder (`torch::unwind::unwind`, `CapturedTraceback::gather`), the
//! allocator (`CUDACachingAllocator.cpp … DeviceCachingAllocator::malloc`), tensor creation and
//! the dispatcher (`at::detail::empty_cuda`, `wrap_kernel_functor_unboxed_`, `::redispatch`),
//! the op's kernel wrapper, then — interleaved with interpreter frames (`??:0:PyMethod_New`,
//! `_PyEval_EvalFrameDefault`) — the Python frames. Grouping by the innermost frame memory_viz
//! keeps puts every allocation under the allocator's own `malloc`; the user frame is instead:
//!
//! 1. the innermost frame memory_viz keeps (its `_frame_filter`) that is a Python source line
//!    (line > 0: native frames of the unwinder carry line 0), e.g.
//!    `functional.py:5836:_in_projection_packed`;
//! 2. without one (the autograd engine's thread has no Python frame), the innermost kept frame
//!    that is not allocator, tensor-creation or dispatcher machinery ([`is_machinery`]), e.g.
//!    `:0:torch::autograd::generated::details::mm_mat1_backward(…)` or
//!    `??:0:at::native::layer_norm_backward_cuda(…)`;
//! 3. else the innermost kept frame.
//!
//! Python lines inside JAX's own modules (`jax/_src`, `jaxlib`: pprof device memory profiles)
//! are skipped in 1 and only taken when no other Python line exists.
//!
//! Frames read as memory_viz writes them (`file:line:name`, the file's last path part).

use super::types::{Snapshot, frame_kept, jax_internal};
use crate::model::memory::{Frame, Stacks};

impl Snapshot {
    /// Name of the place that made an allocation: the first user frame of its stack (the
    /// innermost Python line, not the allocator's own frames).
    pub fn call_site(&self, stack: u32) -> Option<String> {
        user_frame(&self.model.stacks, stack)
    }
}

/// Frames of the allocator, of tensor creation and of the dispatcher: never the user frame.
/// By name: the allocator, `empty*` and `TensorIterator` output creation, structured-kernel
/// `meta` / `create_out` / `set_output*`, the dispatcher (`at::_ops::…::call` / `redispatch`,
/// `wrap_kernel_functor_unboxed_`, `c10::Dispatcher::`), the autograd / ADInplaceOrView kernels
/// (`VariableType::`) and the generated backend wrappers (`wrapper_CUDA_mm`); by file: the
/// allocator's and the generated `Register*.cpp` / `VariableType_*.cpp`.
pub fn is_machinery(name: &str, file: &str) -> bool {
    const NAMES: [&str; 21] = [
        "CachingAllocator",
        "at::detail::empty",
        "at::native::empty",
        "at::empty",
        "empty_cuda",
        "empty_strided",
        "create_out(",
        "set_output_raw_strided(",
        "set_output_strided(",
        "at::meta::",
        "TensorIteratorBase::",
        "TensorIterator::",
        "c10::impl::wrap_kernel_functor_unboxed_",
        "c10::impl::make_boxed_from_unboxed_functor",
        "::redispatch(",
        "c10::Dispatcher::",
        "at::_ops::",
        "VariableType::",
        "ADInplaceOrView::",
        "at::(anonymous namespace)::wrapper_",
        "at::(anonymous namespace)::(anonymous namespace)::wrapper_",
    ];
    let base = file.rsplit('/').next().unwrap_or(file);
    file.contains("CachingAllocator")
        || base.starts_with("Register")
        || base.starts_with("VariableType")
        || NAMES.iter().any(|n| name.contains(n))
}

/// Index (into `frames`, innermost first) of the user frame, `None` when no frame is kept.
pub fn user_frame_index(frames: &[&Frame]) -> Option<usize> {
    let kept = |f: &&Frame| frame_kept(&f.name, &f.file);
    let mut first_kept = None;
    let mut first_native = None;
    let mut first_jax = None;
    for (i, f) in frames.iter().enumerate() {
        if !kept(f) {
            continue;
        }
        // A pprof profile's (JAX) stacks start deep inside `jax/_src`: the user's line is the
        // first Python line outside it.
        if f.line > 0 && jax_internal(&f.file) {
            first_jax.get_or_insert(i);
            continue;
        }
        if f.line > 0 {
            return Some(i);
        }
        first_kept.get_or_insert(i);
        if first_native.is_none() && !is_machinery(&f.name, &f.file) {
            first_native = Some(i);
        }
    }
    first_jax.or(first_native).or(first_kept)
}

/// The user frame of stack `id` of `stacks` as `file:line:name`, `None` for an empty stack.
pub fn user_frame(stacks: &Stacks, id: u32) -> Option<String> {
    let frames: Vec<&Frame> = stacks
        .get(id)
        .iter()
        .filter_map(|&f| stacks.frames.get(f as usize))
        .collect();
    user_frame_index(&frames).map(|i| frames[i].short())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(name: &str, file: &str, line: i64) -> Frame {
        Frame {
            name: name.into(),
            file: file.into(),
            line,
        }
    }

    #[test]
    fn python_line_beats_the_allocator() {
        // Innermost first, as torch records them (cut from the H200 capture's snapshot).
        let v = [
            f("torch::unwind::unwind()", "??", 0),
            f(
                "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(unsigned long, CUstream_st*)",
                "CUDACachingAllocator.cpp",
                0,
            ),
            f(
                "at::detail::empty_cuda(c10::ArrayRef<long>, c10::TensorOptions const&)",
                "??",
                0,
            ),
            f("_PyEval_EvalFrameDefault", "??", 0),
            f("PyMethod_New", "??", 0),
            f("_in_projection_packed", "/x/torch/nn/functional.py", 5836),
            f("forward", "/x/torch/nn/modules/activation.py", 1492),
        ];
        let r: Vec<&Frame> = v.iter().collect();
        assert_eq!(user_frame_index(&r), Some(5));
        assert_eq!(r[5].short(), "functional.py:5836:_in_projection_packed");
    }

    #[test]
    fn native_stack_skips_machinery() {
        let v = [
            f(
                "torch::CapturedTraceback::gather(bool, bool, bool)",
                "??",
                0,
            ),
            f(
                "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate(unsigned long)",
                "",
                0,
            ),
            f(
                "at::detail::empty_cuda(c10::ArrayRef<long>, c10::TensorOptions const&)",
                "??",
                0,
            ),
            f(
                "at::(anonymous namespace)::create_out(c10::ArrayRef<long>, c10::ArrayRef<long>, c10::TensorOptions const&)",
                "RegisterCUDA_0.cpp",
                0,
            ),
            f(
                "at::meta::structured_mm::meta(at::Tensor const&, at::Tensor const&)",
                "??",
                0,
            ),
            f(
                "at::(anonymous namespace)::wrapper_CUDA_mm(at::Tensor const&, at::Tensor const&)",
                "RegisterCUDA_0.cpp",
                0,
            ),
            f(
                "torch::autograd::generated::AddmmBackward0::apply(x)",
                "??",
                0,
            ),
        ];
        let r: Vec<&Frame> = v.iter().collect();
        assert_eq!(user_frame_index(&r), Some(6));
        // Only machinery: the innermost kept frame; nothing kept: none.
        assert_eq!(user_frame_index(&r[..3]), Some(1));
        assert_eq!(user_frame_index(&r[..1]), None);
        assert_eq!(user_frame_index(&[]), None);
    }
}
