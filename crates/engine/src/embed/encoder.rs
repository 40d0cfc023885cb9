//! The BERT encoder of all-MiniLM-L6-v2 on candle ops, with its weights laid out for the
//! CPU matmul.
//!
//! candle-transformers' `BertModel` computes every linear layer as `x · Wᵀ` with `W` stored
//! (out, in), so the `gemm` crate repacks the transposed weight on every call: for a
//! 12-token query that repacking is most of the work (a 12×384 by 384×1536 product takes
//! 1.9 ms against 0.6 ms with the weight stored (in, out); see `somna bench --only query`).
//! This encoder stores every weight transposed once at load time and fuses the query, key
//! and value projections into one product. GELU is `gelu.rs`'s vectorised one (within
//! 4e-7 of candle's), and each bias is added in the same pass as GELU or the residual
//! (`bias.rs`). Where the CPU has AMX, the linear layers' products run on its tiles with
//! each f32 split into two bf16 (`somna-tiles`; `SOMNA_AMX=0` keeps candle's matmul), or,
//! for a search's query ([`Precision::Query`]), in plain bf16. Where it has AVX-512 BF16
//! without AMX (AMD Zen 4 and later), every product runs in plain bf16 with `vdpbf16ps`
//! (`SOMNA_AVX512_BF16=0` keeps candle's f32 matmul): within cosine 0.99998 of
//! sentence-transformers' vectors and the LoCoMo dev folds' recall unchanged (README,
//! "Speed"). The arithmetic is otherwise `BertModel`'s; the parity tests against
//! sentence-transformers guard every path.

use crate::Result;
use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CustomOp1, DType, Layout, Module, Shape, Tensor};
use candle_nn::{LayerNorm, VarBuilder};
use candle_transformers::models::bert::{Config, HiddenAct};
use somna_tiles as tiles;

/// How the linear layers multiply. On AMX tiles, as below; with AVX-512 BF16 and no AMX,
/// both are plain bf16; with neither, both are candle's f32 matmul.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    /// The vectors the store keeps. On AMX each f32 split into two bf16, about 16 bits:
    /// within cosine 0.999999 of candle-transformers' `BertModel`.
    Stored,
    /// Plain bf16, about 8 bits: a search's query. Its dozen rows make each product a stream
    /// of the weights from memory, and bf16 reads half the bytes with a third of the tile
    /// products. Within cosine 0.9999 of sentence-transformers' vectors (the parity tests).
    Query,
}

/// A linear layer's weight: (in, out) contiguous for candle's matmul, or laid out for
/// `somna-tiles`' kernels: split into high and low bf16 for AMX tiles where the CPU and
/// kernel grant them, in plain bf16 for AVX-512 BF16 elsewhere.
enum Weight {
    Matmul(Tensor),
    Tiles(tiles::Packed),
}

impl Weight {
    fn new(weight: Tensor) -> Result<Self> {
        if tiles::bf16_available() {
            let (inputs, outputs) = weight.dims2()?;
            let values = weight.flatten_all()?.to_vec1::<f32>()?;
            let packed = if tiles::available() {
                tiles::Packed::new(&values, inputs, outputs)
            } else {
                tiles::Packed::new_bf16(&values, inputs, outputs)
            };
            if let Some(packed) = packed {
                return Ok(Self::Tiles(packed));
            }
        }
        Ok(Self::Matmul(weight))
    }

    /// `x · W`, `x` (rows, in).
    fn product(&self, x: &Tensor, precision: Precision) -> Result<Tensor> {
        Ok(match self {
            Self::Matmul(w) => x.matmul(w)?,
            Self::Tiles(packed) => x
                .contiguous()?
                .apply_op1_no_bwd(&TileProduct { packed, precision })?,
        })
    }
}

/// The op that runs a product on `somna-tiles`' kernels, at a precision.
struct TileProduct<'a> {
    packed: &'a tiles::Packed,
    precision: Precision,
}

impl CustomOp1 for TileProduct<'_> {
    fn name(&self) -> &'static str {
        "somna-amx-product"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let CpuStorage::F32(values) = s else {
            candle_core::bail!("somna-amx-product: f32 only, got {:?}", s.dtype());
        };
        let (Some((start, end)), [rows, inputs]) = (l.contiguous_offsets(), l.dims()) else {
            candle_core::bail!("somna-amx-product: a contiguous matrix, got {:?}", l.dims());
        };
        let packed = self.packed;
        if *inputs != packed.inputs() {
            candle_core::bail!("somna-amx-product: {inputs} inputs for {}", packed.inputs());
        }
        let a = &values[start..end];
        // Split products where the tiles run them; a weight packed for AVX-512 BF16 has
        // no low halves.
        let product = match self.precision {
            Precision::Stored if tiles::available() => packed.product(a, *rows),
            Precision::Stored | Precision::Query => packed.product_bf16(a, *rows),
        };
        Ok((
            CpuStorage::F32(product),
            Shape::from((*rows, packed.outputs())),
        ))
    }
}

/// A linear layer `x · W + b` with `W` stored (in, out).
struct Dense {
    weight: Weight,
    bias: Tensor,
}

impl Dense {
    fn load(vb: &VarBuilder, inputs: usize, outputs: usize) -> Result<Self> {
        Self::new(Self::parts(vb, inputs, outputs)?)
    }

    /// The weight (in, out) contiguous and the bias, as loaded, to be fused.
    fn parts(vb: &VarBuilder, inputs: usize, outputs: usize) -> Result<(Tensor, Tensor)> {
        let weight = vb.get((outputs, inputs), "weight")?.t()?.contiguous()?;
        Ok((weight, vb.get(outputs, "bias")?))
    }

    fn new((weight, bias): (Tensor, Tensor)) -> Result<Self> {
        Ok(Self {
            weight: Weight::new(weight)?,
            bias,
        })
    }

    /// Several layers with the same input as one: their weights side by side.
    fn fused(parts: &[(Tensor, Tensor)]) -> Result<Self> {
        let weights: Vec<&Tensor> = parts.iter().map(|(w, _)| w).collect();
        let biases: Vec<&Tensor> = parts.iter().map(|(_, b)| b).collect();
        Self::new((
            Tensor::cat(&weights, 1)?.contiguous()?,
            Tensor::cat(&biases, 0)?,
        ))
    }

    /// `x` is (rows, in); the result (rows, out).
    fn forward(&self, x: &Tensor, p: Precision) -> Result<Tensor> {
        Ok(super::bias::add_bias(
            &self.weight.product(x, p)?,
            &self.bias,
        )?)
    }

    /// `forward(x) + residual`, in one pass after the product.
    fn forward_plus(&self, x: &Tensor, residual: &Tensor, p: Precision) -> Result<Tensor> {
        let product = self.weight.product(x, p)?;
        Ok(super::bias::add_bias_residual(
            &product, &self.bias, residual,
        )?)
    }

    /// GELU of `forward(x)`, in one pass after the product.
    fn forward_gelu(&self, x: &Tensor, p: Precision) -> Result<Tensor> {
        Ok(super::gelu::bias_gelu(
            &self.weight.product(x, p)?,
            &self.bias,
        )?)
    }
}

struct Layer {
    qkv: Dense,
    attention_out: Dense,
    attention_norm: LayerNorm,
    intermediate: Dense,
    output: Dense,
    output_norm: LayerNorm,
}

pub struct Encoder {
    word: Tensor,
    position: Tensor,
    token_type: Tensor,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    hidden: usize,
}

impl Encoder {
    pub fn load(vb: VarBuilder, config: &Config) -> Result<Self> {
        if config.hidden_act != HiddenAct::Gelu {
            return Err(crate::Error::Embedding(format!(
                "unsupported activation {:?} (all-MiniLM-L6-v2 uses gelu)",
                config.hidden_act
            )));
        }
        let h = config.hidden_size;
        let eps = config.layer_norm_eps;
        let e = vb.pp("embeddings");
        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                let l = vb.pp(format!("encoder.layer.{i}"));
                let a = l.pp("attention");
                let qkv = ["query", "key", "value"]
                    .iter()
                    .map(|n| Dense::parts(&a.pp("self").pp(n), h, h))
                    .collect::<Result<Vec<_>>>()?;
                Ok(Layer {
                    qkv: Dense::fused(&qkv)?,
                    attention_out: Dense::load(&a.pp("output.dense"), h, h)?,
                    attention_norm: candle_nn::layer_norm(h, eps, a.pp("output.LayerNorm"))?,
                    intermediate: Dense::load(
                        &l.pp("intermediate.dense"),
                        h,
                        config.intermediate_size,
                    )?,
                    output: Dense::load(&l.pp("output.dense"), config.intermediate_size, h)?,
                    output_norm: candle_nn::layer_norm(h, eps, l.pp("output.LayerNorm"))?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            word: e.get((config.vocab_size, h), "word_embeddings.weight")?,
            position: e.get(
                (config.max_position_embeddings, h),
                "position_embeddings.weight",
            )?,
            token_type: e.get((config.type_vocab_size, h), "token_type_embeddings.weight")?,
            embedding_norm: candle_nn::layer_norm(h, eps, e.pp("LayerNorm"))?,
            layers,
            heads: config.num_attention_heads,
            hidden: h,
        })
    }

    /// Token ids and attention mask, both (batch, len); token type 0 throughout. Returns the
    /// last hidden state, (batch, len, hidden).
    pub fn forward(&self, ids: &Tensor, mask: &Tensor, precision: Precision) -> Result<Tensor> {
        let (batch, len) = ids.dims2()?;
        let (h, heads) = (self.hidden, self.heads);
        let head_dim = h / heads;
        let words = self.word.index_select(&ids.flatten_all()?, 0)?; // (B·L, H)
        let positions = self.position.narrow(0, 0, len)?; // (L, H)
        let type0 = self.token_type.narrow(0, 0, 1)?; // (1, H)
        let x = words
            .reshape((batch, len, h))?
            .broadcast_add(&positions)?
            .broadcast_add(&type0)?;
        let mut x = self.embedding_norm.forward(&x)?.reshape((batch * len, h))?;
        // Padding keys get the most negative score (what transformers adds), per sequence.
        let bias = ((mask.to_dtype(DType::F32)? - 1.0)? * f64::from(f32::MAX))?
            .reshape((batch, 1, 1, len))?;
        let scale = 1.0 / (head_dim as f64).sqrt();
        for layer in &self.layers {
            let qkv = layer
                .qkv
                .forward(&x, precision)?
                .reshape((batch, len, 3, heads, head_dim))?;
            let part = |i: usize| -> Result<Tensor> {
                Ok(qkv
                    .narrow(2, i, 1)?
                    .squeeze(2)?
                    .transpose(1, 2)?
                    .contiguous()?)
            };
            let (q, k, v) = (part(0)?, part(1)?, part(2)?); // (B, heads, L, d)
            let scores = (q.matmul(&k.t()?)? * scale)?.broadcast_add(&bias)?;
            let probs = candle_nn::ops::softmax_last_dim(&scores)?;
            let context = probs
                .matmul(&v)?
                .transpose(1, 2)?
                .contiguous()?
                .reshape((batch * len, h))?;
            let attended = layer
                .attention_norm
                .forward(&layer.attention_out.forward_plus(&context, &x, precision)?)?;
            let inner = layer.intermediate.forward_gelu(&attended, precision)?;
            x = layer
                .output_norm
                .forward(&layer.output.forward_plus(&inner, &attended, precision)?)?;
        }
        Ok(x.reshape((batch, len, h))?)
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    /// candle's matmul runs gemm's AVX-512 kernels only with gemm's `x86-v4` feature, which
    /// turns on pulp's: without it `pulp::x86::V4` does not exist and this does not compile.
    #[test]
    fn the_matrix_products_have_avx512_kernels_where_the_cpu_has_avx512() {
        let cpu_has = std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512cd")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512vl");
        assert_eq!(pulp::x86::V4::try_new().is_some(), cpu_has);
    }
}
