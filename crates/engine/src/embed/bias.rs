//! A linear layer's bias added to its product in one pass over the rows: alone, with the
//! residual the layer's output is summed with, or (`gelu.rs`) before GELU.
//!
//! candle's `broadcast_add` of a (rows, n) product and an (n) bias took 8.4% of the samples
//! of a profile of batch embedding on one thread (2026-11-30), about an eighth of the time
//! of the products themselves, and the residual's `+` another pass and buffer. Here each is
//! one loop over contiguous rows that the compiler vectorises. The sums are the same
//! additions in the same order, `(x + bias) + residual`, so the vectors are bit for bit
//! those of the separate ops.

use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CustomOp2, CustomOp3, Layout, Shape, Tensor};

/// The contiguous f32 values of one of an op's inputs.
fn values<'a>(
    op: &str,
    storage: &'a CpuStorage,
    layout: &Layout,
) -> candle_core::Result<&'a [f32]> {
    let CpuStorage::F32(values) = storage else {
        candle_core::bail!("{op}: f32 only, got {:?}", storage.dtype());
    };
    let Some((start, end)) = layout.contiguous_offsets() else {
        candle_core::bail!("{op}: the inputs must be contiguous");
    };
    Ok(&values[start..end])
}

/// `x` (…, n) and its bias (n), both contiguous f32.
fn rows_and_bias<'a>(
    op: &str,
    (xs, xl): (&'a CpuStorage, &Layout),
    (bs, bl): (&'a CpuStorage, &Layout),
) -> candle_core::Result<(&'a [f32], &'a [f32])> {
    let (x, bias) = (values(op, xs, xl)?, values(op, bs, bl)?);
    if bl.dims().len() != 1 || xl.dims().last() != Some(&bias.len()) {
        candle_core::bail!(
            "{op}: a bias of {:?} for rows of {:?}",
            bl.dims(),
            xl.dims()
        );
    }
    Ok((x, bias))
}

/// `f(x + bias)` of every element of `x` (…, n), the bias (n) added to every row. `f` is a
/// function item or closure (not a pointer), so it is inlined into the loop.
pub(super) struct MapBias<F> {
    pub name: &'static str,
    pub f: F,
}

impl<F: Fn(f32) -> f32 + Send + Sync> CustomOp2 for MapBias<F> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn cpu_fwd(
        &self,
        xs: &CpuStorage,
        xl: &Layout,
        bs: &CpuStorage,
        bl: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (x, bias) = rows_and_bias(self.name, (xs, xl), (bs, bl))?;
        let mut out = Vec::with_capacity(x.len());
        for row in x.chunks_exact(bias.len().max(1)) {
            out.extend(row.iter().zip(bias).map(|(&v, &b)| (self.f)(v + b)));
        }
        Ok((CpuStorage::F32(out), xl.shape().clone()))
    }
}

struct AddBiasResidual;

impl CustomOp3 for AddBiasResidual {
    fn name(&self) -> &'static str {
        "somna-add-bias-residual"
    }

    fn cpu_fwd(
        &self,
        xs: &CpuStorage,
        xl: &Layout,
        bs: &CpuStorage,
        bl: &Layout,
        rs: &CpuStorage,
        rl: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (x, bias) = rows_and_bias(self.name(), (xs, xl), (bs, bl))?;
        let residual = values(self.name(), rs, rl)?;
        if rl.dims() != xl.dims() {
            candle_core::bail!(
                "{}: a residual of {:?} for {:?}",
                self.name(),
                rl.dims(),
                xl.dims()
            );
        }
        let n = bias.len().max(1);
        let mut out = Vec::with_capacity(x.len());
        for (row, res) in x.chunks_exact(n).zip(residual.chunks_exact(n)) {
            out.extend(
                row.iter()
                    .zip(bias)
                    .zip(res)
                    .map(|((&v, &b), &r)| (v + b) + r),
            );
        }
        Ok((CpuStorage::F32(out), xl.shape().clone()))
    }
}

/// `x + bias`, the bias (n) added to every row of `x` (…, n).
pub fn add_bias(x: &Tensor, bias: &Tensor) -> candle_core::Result<Tensor> {
    let op = MapBias {
        name: "somna-add-bias",
        f: |v| v,
    };
    x.apply_op2_no_bwd(bias, &op)
}

/// `(x + bias) + residual`, `residual` of `x`'s shape.
pub fn add_bias_residual(
    x: &Tensor,
    bias: &Tensor,
    residual: &Tensor,
) -> candle_core::Result<Tensor> {
    x.apply_op3_no_bwd(bias, residual, &AddBiasResidual)
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{DType, Device};

    fn ramp(shape: (usize, usize), scale: f32) -> Tensor {
        let n = shape.0 * shape.1;
        let v: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin() * scale).collect();
        Tensor::from_vec(v, shape, &Device::Cpu).unwrap()
    }

    #[test]
    fn give_bit_for_bit_what_candles_broadcast_add_and_add_give() {
        let (x, r) = (ramp((7, 5), 3.0), ramp((7, 5), 0.1));
        let b = ramp((1, 5), 11.0).squeeze(0).unwrap();
        let ours = add_bias(&x, &b).unwrap().to_vec2::<f32>().unwrap();
        let theirs = x.broadcast_add(&b).unwrap().to_vec2::<f32>().unwrap();
        assert_eq!(ours, theirs);
        let ours = add_bias_residual(&x, &b, &r)
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        let theirs = (x.broadcast_add(&b).unwrap() + &r)
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        assert_eq!(ours, theirs);
    }

    #[test]
    fn refuse_a_bias_or_residual_of_the_wrong_shape_and_strided_inputs() {
        let x = ramp((4, 3), 1.0);
        let wrong = Tensor::zeros(4, DType::F32, &Device::Cpu).unwrap();
        assert!(add_bias(&x, &wrong).is_err());
        let b = Tensor::zeros(3, DType::F32, &Device::Cpu).unwrap();
        assert!(add_bias_residual(&x, &b, &ramp((3, 4), 1.0)).is_err());
        assert!(add_bias(
            &ramp((3, 4), 1.0).t().unwrap(),
            &Tensor::zeros(3, DType::F32, &Device::Cpu).unwrap()
        )
        .is_err());
    }
}
