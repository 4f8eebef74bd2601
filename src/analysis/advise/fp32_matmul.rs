//! `fp32_matmul`: matrix work (GEMMs, convolutions, attention) run in FP32 on a device whose
//! tensor cores take TF32 / BF16. Measured by the roofline: the saving is the rows' device time
//! minus their time at the device's TF32 roof (compute and memory), per step.

use super::{Ctx, Finding, Framework, mean, pct, short, step_label, tracks_of};
use crate::analysis::roofline::{self, dtype::Precision};
use crate::model::Ps;

/// Threshold text with its source.
pub(super) const THRESHOLD: &str = "FP32 matrix ops (not TF32) on a device with a TF32 \
tensor-core peak in the roofline's table (PyTorch TensorBoard plugin's tensor-core \
recommendation: TC-eligible ops not on tensor cores)";

pub(super) fn rule(ctx: &Ctx) -> Option<Finding> {
    let c = ctx.c;
    let r = roofline::compute(c);
    let peaks = r.device.as_ref()?.peaks?;
    let tf32 = peaks.tf32.filter(|&v| v > 0.0)?;
    let n = ctx.steps.len();
    let step_of =
        |id: u32| -> Option<usize> { ctx.step_at(c.slices.start.get(id as usize).copied()?) };
    let mut per_step: Vec<Ps> = vec![0; n];
    let mut ops: Vec<(Ps, u32, String)> = Vec::new();
    let (mut fp32_ps, mut at_roof_ps) = (0.0f64, 0.0f64);
    for row in &r.rows {
        if !row.cost.matrix || row.cost.precision != Some(Precision::Fp32) || row.count == 0 {
            continue;
        }
        let calls = row.count as f64;
        let compute = row.cost.flops * calls / tf32;
        let memory = row
            .cost
            .bytes
            .map_or(0.0, |b| b * calls / peaks.mem_tbps.max(1e-9));
        let at_roof = compute.max(memory);
        let saved = (row.device_ps as f64 - at_roof).max(0.0);
        if saved <= 0.0 || row.slices.is_empty() {
            continue;
        }
        // Spread the row's saving over its calls, each counted in its step.
        let each = saved / row.slices.len() as f64;
        let mut inside = 0usize;
        for &id in &row.slices {
            if let Some(k) = step_of(id) {
                per_step[k] += each as Ps;
                inside += 1;
            }
        }
        if inside == 0 {
            continue;
        }
        fp32_ps += row.device_ps as f64;
        at_roof_ps += at_roof;
        if let Some(&first) = row.slices.first() {
            ops.push((saved as Ps, first, row.name.clone()));
        }
    }
    let fired: Vec<i64> = (0..n)
        .filter(|&k| per_step[k] > 0)
        .map(|k| ctx.steps[k].number)
        .collect();
    if fired.is_empty() {
        return None;
    }
    ops.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let step = ctx.mean_step();
    let saving = mean(per_step.into_iter(), n);
    let dev = r.device.as_ref().map_or("", |d| d.name.as_str());
    let title = format!(
        "{}: {} FP32 matrix op shape{} take {} % of the step on {}; at its TF32 roof ({:.0} \
         TFLOP/s) they would take {} % of their time (the most: {})",
        step_label(&fired),
        ops.len(),
        if ops.len() == 1 { "" } else { "s" },
        pct(fp32_ps as Ps / n.max(1) as Ps, step),
        short(dev, 40),
        tf32,
        pct(at_roof_ps as Ps, fp32_ps as Ps),
        short(ops.first().map_or("", |o| o.2.as_str()), 60),
    );
    let event_ids: Vec<u32> = ops.iter().take(10).map(|o| o.1).collect();
    let tracks = tracks_of(c, &event_ids);
    let fix = match ctx.framework {
        Framework::Torch => {
            "torch.backends.cuda.matmul.allow_tf32 = True and \
            torch.backends.cudnn.allow_tf32 = True (or torch.set_float32_matmul_precision(\"high\")), \
            or run the model under torch.autocast(\"cuda\", dtype=torch.bfloat16)"
        }
        Framework::Xla => {
            "jax.default_matmul_precision(\"tensorfloat32\") or bf16 params and \
            activations (jmp / flax dtype=jnp.bfloat16)"
        }
        Framework::Other => "run matrix work in TF32 or BF16 on the tensor cores",
    };
    Some(Finding {
        rule: "fp32_matmul",
        title,
        saving,
        saving_how: "the FP32 matrix ops' device time minus their time at the TF32 roof \
            (roofline), per call in its step",
        step,
        steps: fired,
        event_ids,
        tracks,
        analysis: "roofline",
        fix: fix.into(),
        threshold: THRESHOLD,
    })
}
