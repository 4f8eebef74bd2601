//! LLM / diffusion serving traces (vLLM, SGLang, ATOM, xDiT): the engine's iteration
//! annotations ([`annotation`]) and TraceLens's steady-state window over them ([`steady`]).
//! The iterations become steps in `analysis::steps` (docs/steps.md, "Serving iterations"); the
//! paged-attention roofline reads their aggregates (docs/roofline.md).

pub mod annotation;
pub mod steady;
