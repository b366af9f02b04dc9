#include "kernels/gemm_decode_ksplit.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "kernels/gemm_decode_rules.h"

namespace hummingd {
namespace {

// Planner v19: k-split warps (ksplit=S, decode-notes v46) at 8 tokens on
// layers of short K. Split-K costs ~1.1 µs at 8 tokens (sweep x,
// bench/results/tile-sweep-16fb0a2.md: 4096 x 4096 in 8 splits 5.42 µs
// against 4.22 for the same bytes per block unsplit); with the block's
// warps splitting each k-tile instead, a 16- or 32-row block covers its
// whole K and the grid still fills a wave. Measured against the plan
// (bench/results/tile-sweep-3d9d14b.md, sweeps y and z, M = 1 unless
// said): 4096 x 4096 8x16x1024 s4 ksplit=8 (256 blocks) 4.14 against 5.38
// µs (M = 8: 4.36 against 5.58; bf16 4.32 against 5.48); 6144 x 4096
// 8x32x1024 s3 ksplit=4 (192 blocks) 5.65 against 6.14 (M = 8 5.86
// against 6.22; bf16 5.82 against 6.19); 8-bit weights, same bytes per
// stage: uint8 4096 x 4096 8x16x1024 s3 5.89 against 6.91, 6144 x 4096
// 8x32x512 s4 7.74 against 8.73, e4m3 4096 x 4096 8x16x512 s6 6.00
// against 6.84 (e4m3 takes uint8's tiles; the table at d6ca1ee ran them:
// 4096 x 4096 5.84, 6144 x 4096 7.66). On long K the activation tile (8 tokens
// x BK, twice the 4-bit weights' bytes per column) leaves too few weights in
// flight: 4096 x 14336 8x16x512 s8 13.06 against 9.98, sixteen warps 11.22;
// 8192 x 8192 within 1.5% (10.65 against 10.79), 8192 x 28672 even. So: K <=
// 4096, the narrowest block (16 rows, else 32) whose grid fits one wave at two
// per SM and fills >= 2/3 of it, splits 1.
// Planner v20 (sweeps aa-ac, bench/results/tile-sweep-11cef8a.md): with
// three-stage tiles two k-tiles ahead (decode-notes v48) 4-bit 8192 x 8192
// 8x32x1024 s3 ran M = 1 / 2 / 4 / 8 in 10.39 / 10.46 / 10.57 / 11.07 µs
// against 10.83 / 10.83 / 10.92 / 11.03 for the plan (bf16 M = 1 / 2 / 4 /
// 8 11.05 / 11.19 / 11.32 / 11.63 against 11.36 .. 11.61), so 4-bit
// weights take 32-row blocks up to K = 8192. 16-row blocks there read twice
// the activations per weight byte and lost (8192 x 8192 8x16x1024 13.46,
// 4096 x 14336 10.92 against 9.9), and 8-bit 8192 x 8192 lost (18.55
// against 18.29). At 16 tokens (two m16n8k16 per step) 8-bit weights on
// 4096 x 4096 16x16x512 s4 ksplit=8: uint8 7.28 against 8.19, e4m3 7.04
// against 8.06; 4-bit ones tied (fp16 6.32 against 6.32, bf16 6.33 against
// 6.44), and 32-row blocks (6144 x 4096) and long K (4096 x 14336: uint8
// 20.18 against 18.27) lost: 8-bit weights with fp16 activations (the only
// ones measured), K <= 4096, 16-row blocks only.
// Planner v21 (sweeps ag-ai, bench/results/tile-sweep-4b420b1.md): 8-bit
// weights with fp16 activations at 8 tokens reach past K = 4096 in 16-row
// blocks: two per SM up to the longest K measured, 4096 x 14336 (8x16x1024
// s3, uint8 M = 1 / 8 14.98 / 15.63 µs against 16.44 / 16.71; e4m3 alike;
// 4096 x 8192 9.16 against 10.74) and, where 16-row blocks fill four per SM
// (N / 16 in (3, 4] x SMs; the block scheduler packs a kernel's blocks as
// densely as they fit, so fewer would leave SMs idle: sweep af), four per SM
// in 48 KB rings (8x16x512 s3 blocks=4: uint8 8192 x 8192 M = 1 / 8 16.86 /
// 18.05 against 18.34 / 18.62, e4m3 16.69 / 17.89, channel-wise 16.70
// against 18.84) for 4096 < K <= 8192 (measured at 8192; 8192 x 28672 was
// mixed: 55.67 / 60.16 against 57.35 / 57.95; K <= 4096 keeps v19's 32-row
// blocks). bf16 activations tied or lost (uint8 4096 x 14336 21.55 / 22.07
// against 21.61 / 21.83, 8192 x 8192 25.36 against 24.62) and keep v19's
// bound.
// Planner v23 (sweeps ak, al, bench/results/tile-sweep-1542179.md): two per
// SM at 8 tokens reach K = 16384 (uint8 4096 x 16384 8x16x1024 s3 M = 1 / 8
// 16.64 / 17.35 µs against 18.38 / 18.71); the 16-token 16-row blocks take
// bf16 activations too (4096 x 4096 16x16x512 s4: uint8 8.81 against 9.46,
// e4m3 14.02 against 14.98) and, with fp16 activations, where N / 16 fills
// three per SM (more than two) three per SM in 72 KB rings (6144 x 4096
// 16x16x512 s3 blocks=3: uint8 9.43 against 10.09, e4m3 9.17 against 9.86).
// Long K stays split at 16 tokens (4096 x 14336 16x16x512 s4: uint8 20.13
// against 18.20), and 4-bit weights at 16 tokens lost over 16- and 32-row
// blocks of eight warps (6144 x 4096 8.31 / 8.17 against 7.63; 4096 x 14336
// 14.35 against 11.94).
// Planner v24 (sweeps an, ao, bench/results/tile-sweep-1542179.md): 4-bit
// weights at 16 tokens on 4096 x 4096 in 32-row blocks of sixteen warps,
// one per SM, the ring 192 KB deep (16x32x1024 s4 ksplit=8 blocks=1: fp16
// 5.98 / 6.02 against 6.49 / 6.50 µs, bf16 6.10 against 6.54): a block
// reads the activations twice its weights' bytes instead of four times in
// 16-row blocks (the L2 -> SM fabric delivers 12.6-14.5 TB/s, decode-notes
// v56). Long K lost (4096 x 14336 14.32 against 12.03), as did 8-bit
// weights (uint8 4096 x 4096 7.97 against 7.18) and 8 tokens (5.11 against
// 4.10): uint4 weights in groups of 128 with 16-bit scales and nothing
// else (the spec measured), 2048 < K <= 4096, N / 32 in [2/3, 1] x SMs.
// The v20 / v23 8-bit 16-token rules, like v19's 8-token ones, also take
// specs never measured with them (channel-wise or 2-D scales, zero points,
// e5m2): the k-split skeleton reads their scales as it does at 8 tokens.
// The three-per-SM window starts just above 2 x SMs (N = 4288 gives 268
// blocks, ~90 SMs busy); only 384 blocks (6144 x 4096) were measured.
// Planner v55 (sweeps dm, dn, bench/results/tile-sweep-dm-dn-d24225f.md,
// decode-notes v102): with slice rings and long scale chunks (v100-v102)
// 16-row blocks at three stages won past K = 8192 with fp16 activations,
// where v20 had measured them 10% slower (4096 x 14336 10.92 against 9.9):
// 8x16x1024 s3 ksplit=8 against the plans' half tile (8 or 9 splits) or
// 8x128x256 (4096 x 16384) at M = 1 / 8: 4096 x 12288 0.97-0.985x, 4096 x
// 14336 0.98-0.99x (M = 2 / 4 too), 3584 x 14336 0.97-0.98x, 4096 x 16384
// 0.955-0.96x. bf16 activations tied or lost (3584 x 14336 1.05-1.06x,
// 4096 x 12288 / 16384 0.98-1.00x) and kept the plans until v56. Only the spec
// measured (uint4 in groups of 128 with 16-bit scales, nothing else) and
// groups of 64 (IsMeasuredFourBitGroupSpec; groups of 32 pass it too, but
// the decode plan keeps their half tile past K = 4096, planner v36); N / 16
// in [2/3, 1] of two per SM, 8192 < K <= 16384.
// Planner v56 (A/B v103, bench/results/ab-v103-lane-offsets.md): with the
// k-split warps' lane offsets held in registers the same tile wins with
// bf16 activations too: 4096 x 12288 / 14336 / 16384 at 8.61-11.10 us
// against the plans' 8.86-11.23 (0.97-0.99x in each run). Only where
// N / 16 fills at least 15/16 of two per SM (256 of 264 blocks there): at
// 224 (3584 x 14336) bf16 lost 1.05-1.06x in sweep dn and still 1.02-1.04x
// after v103 (sweep dt, bench/results/tile-sweep-do-dt-session43.md).

// Planner v59 (sweeps ed, ee, bench/results/tile-sweep-ed-fd2c245.txt,
// tile-sweep-ee-815b751.txt, decode-notes v107): 8-bit weights at 16 tokens
// on long K in the v24 shape, three stages (16x32x1024 s3 ksplit=8 blocks=1
// early=1), unsplit, against the plans' 64-row half tile three per SM in 6
// splits: uint8 4096 x 14336 M = 16 16.77-16.78 µs against 17.31-17.33
// (e4m3 16.62-16.63 against 17.29-17.30; the target is 16.91), 4096 x 8192
// 0.94x, 4096 x 12288 0.97x, 4096 x 16384 0.90-0.91x, M = 9-16 alike. It lost
// on 3584 x 14336 (112 blocks, 1.04-1.06x) and with bf16 activations (uint8
// 4096 x 14336 1.04-1.06x); without early=1 it ran 2.5% slower (ed).
// Measured with uint8 and e4m3 in groups of 128 (fp16 scales); the other
// 8-bit specs take it as they take the v20 / v23 16-token rules.

// An unsplit k-split warp candidate of `warps` warps (BN = 16 * warps /
// S), if its shared memory fits shared_budget and the tile fits the layer.
std::optional<GemmTileConfig> KSplitCandidate(int tokens, int warps,
                                              int block_n, int block_k,
                                              int stages, int blocks_per_sm,
                                              int shared_budget,
                                              const QuantSpec& spec,
                                              const LayerShape& shape) {
  GemmTileConfig tile;
  tile.mma = GemmMma::kWgmma;
  tile.block_m = tokens;
  tile.warps_m = 1;
  tile.warps_n = warps;
  tile.block_n = block_n;
  tile.block_k = block_k;
  tile.stages = stages;
  tile.warp_split_k = 16 * tile.warps_n / block_n;
  tile.blocks_per_sm = blocks_per_sm;
  if (tile.SharedBytes(spec) > shared_budget ||
      !ValidateGemmTile(tile, shape.n, shape.k).ok()) {
    return std::nullopt;
  }
  return tile;
}

// The k-split slices of whole warpgroups at 16 and 32 tokens, unsplit, or
// nullopt where planner v57's, v60's and v69's rules do not take the spec and
// shape (or the ring does not fit smem_limit). KSplitWarpTile tries it first.
std::optional<GemmTileConfig> WarpgroupSliceTile(int tokens,
                                                 const QuantSpec& spec,
                                                 const LayerShape& shape,
                                                 int sm_count, int smem_limit) {
  // Planner v57 (sweeps dv-dz, decode-notes v104): 4-bit weights at 16 and
  // 32 tokens in one 64-row block per SM over the whole of K, its four
  // warpgroups a k-slice each (wgmma; the slices summed in shared memory),
  // where N / 64 fills at least 15/16 of the SMs in one wave: no split-K
  // tail. Against the v56 plans (16x128x256 / 32x128x256 in 4 splits),
  // 16x64x512 / 32x64x512 s4 ksplit=4 early=1 in the same runs: 8192 x
  // 8192 M = 9-16 fp16 10.69-10.80 us against 11.78-11.95, bf16
  // 11.41-11.55 against 12.21-12.44; M = 17-32 fp16 13.46-13.63 against
  // 14.79-15.45, bf16 14.07-14.44 against 15.26-15.83; groups of 64
  // 0.91-0.93x (fp16 and bf16); 7936 x 8192 (124 blocks) 0.87-0.90x;
  // 8192 x 14336 M = 16 fp16 0.976-0.988x, bf16 0.972-0.976x, M = 32
  // 0.955-0.96x; 8192 x 28672 M = 32 0.990-0.996x (a tie, kept), M = 16
  // 1.03x (fp16; bf16 1.003-1.01x: four splits' tails weigh less on 56
  // k-tiles). Five and six stages ran slower (8192 x 8192 M = 16
  // 11.45-11.94), as did 256-column k-tiles (14.1-15.0), three stages
  // (1.04-1.08x, sweep dy) and two slices of four warps (`warps=1x8
  // ksplit=2`, 11.87-11.91). Only the specs measured
  // (IsMeasuredFourBitGroupSpec in groups of 128 or 64: groups of 32 fold
  // every two steps, unmeasured here; mixed scale and activation types
  // pass unmeasured), fp16 / bf16 activations (the only 16-bit ones; kept
  // explicit for the 8-bit activations KERNELS.md plans), K from 8192 to
  // 14336 (16 tokens) or 28672 (32 tokens).
  // Planner v60 (sweeps ef-eh, decode-notes v108): the same tile where N /
  // 64 fills 6/11 (72 of 132) to under 15/16 of the SMs and K <= 8192, from
  // K = 2048 (16 tokens) or 3072 (32 tokens), against the split tiles those
  // layers ran: 6144 x 4096 (96 blocks) M = 9-16 fp16 5.86-5.93 us against
  // 6.51-6.67, bf16 6.16-6.21 against 6.81-7.00, groups of 64 0.885x, M =
  // 24-32 fp16 0.93-0.94x, bf16 0.97x; 7168 x 4096 (112) M = 16 0.81-0.82x,
  // M = 32 0.82-0.84x; 5120 x 4096 (80) 0.92x at 16 tokens (fp16, bf16),
  // 0.90x at 32 (fp16); 4608 x 4096 (72) 0.91 / 0.96x (fp16); 6144 x 8192
  // 0.93-0.95 / 0.92x; 6144 x 3072 0.82-0.83 / 0.89x; 6144 x 2048 M = 16
  // 0.69x. Past K = 8192 the short fill lost (6144 x 14336 M = 16 16.04
  // against 15.07), and a split form (the tile in two splits on 4096 x
  // 14336 and 4096², patches/v108-ksplit-split-k.patch, v108b) did not pay.
  // Planner v62 (sweep eo): a wave's fill takes the same K floor, below v57's
  // 8192: 8192 x 4096 M = 16 fp16 6.29 us against 7.92 for the plan's
  // 16x128x256 in 4 splits, M = 32 8.39 against 10.51, bf16 6.62 / 8.69
  // against 8.33 / 10.64; 7936 x 4096 0.81 / 0.80x; 8192 x 6144 0.85 / 0.84x.
  // Unmeasured and taken by interpolation: bf16 at 32 tokens under 96
  // blocks, the fill edges at K other than 4096, K = 2048-3072 on a wave's
  // fill, N not a multiple of 128 (e.g. 6208, 7872). All of it on 132 SMs:
  // the bounds are the measured fills, so other SM counts get the same
  // fractions unmeasured.
  // Planner v69 (sweep ff, decode-notes v121, twice in one call, numerics
  // ok): three more 4-bit classes, against the split tiles they ran
  // (16x128x256 / 32x128x256 in 4 splits, 16x64x256 / 32x64x128 three per
  // SM on 6144 x 4096; for zero points 16x128x128 three per SM in 6 splits
  // and 32x128x128 in 4), the same slice tiles on 8192 x 8192 and 6144 x 4096
  // at M = 9 / 16 / 24 / 32 (ratios over both runs):
  //  - channel-wise scales: fp16 0.85-0.86x on 8192² (M = 16 10.43-10.46 µs
  //    against 12.15-12.21), 0.85-0.86x / 0.91-0.92x at 16 / 32 tokens on
  //    6144 x 4096; bf16 0.87-0.88x / 0.87-0.89x, 0.87-0.89x / 0.95-0.97x;
  //  - groups of 128 with integer zero points: 16 tokens 0.78-0.79x on 8192²
  //    and 0.91-0.94x on 6144 x 4096 (fp16 and bf16); 32 tokens 0.88-0.91x
  //    on 8192², and on 6144 x 4096 fp16 0.97-0.99x but bf16 1.01-1.02x, so
  //    bf16 with zero points at 32 tokens only on a wave's fill;
  //  - groups of 32 (deferred scales fold every two k16 steps): 16 tokens
  //    0.92-0.95x on 8192² and 0.91-0.95x on 6144 x 4096; 32 tokens on
  //    6144 x 4096 1.00-1.04x (lost), on 8192² 0.91-0.95x deferred and with
  //    scales=pre 0.85x (fp16, 15.67-15.80 against 18.43-18.53) / 0.88x
  //    (bf16), so 32 tokens only on a wave's fill, pre-scaled (timed at M =
  //    32; the range's other M extrapolated). (Pre-scaled at 16 tokens: fp16
  //    0.98-0.99x, bf16 1.01-1.02x the deferred slices; not taken.)
  // Sweep fg (twice, numerics ok) then ran what the rule extrapolates:
  // groups of 64 with integer zero points, which take the group-128 rule as
  // groups of 64 take the others (planner v35), 0.78-0.81x at 16 tokens and
  // 0.87-0.90x at 32 on 8192², 0.90-0.91x / 0.99-1.00x (fp16) on 6144 x
  // 4096; channel-wise scales past K = 8192, which take the whole domain of
  // groups of 128 (smaller scale chunks, the same fold), against v68's tiles
  // in 2 and 4 splits: 8192 x 14336 at 16 tokens fp16 0.93-0.94x, bf16
  // 0.55x; 8192 x 28672 at 32 fp16 0.97-0.98x, bf16 0.95-0.97x. Zero points
  // and groups of 32, whose chunks are larger, only up to the K measured
  // (8192); the other fills and K extrapolated as v57 / v60 are. Clients
  // before kLaunchAbiEarlyTiles get the slices without early=1, unmeasured
  // for these specs (groups of 128 ran 1.00-1.02x slower without it).
  // Planner v72 (sweep fj, decode-notes v124, twice): channel-wise scales at
  // 16 tokens past K = 14336, where groups of 128 lost (v57), on 8192 x
  // 28672 against v68's tiles: fp16 0.97-0.98x (M = 16 32.28-32.43 µs
  // against 33.29-33.47), bf16 0.94-0.95x (against a k-major 256-row tile in
  // 8 splits); so channel-wise scales take K up to 28672 at 16 tokens too.
  const int64_t blocks = shape.n / 64;
  const int64_t sms = sm_count;
  const bool fills_a_wave = 16 * blocks >= 15 * sms;
  const bool fp16_activations = spec.activation_type == DataType::kFp16;
  const bool groups_of_128_or_64 =
      IsMeasuredFourBitGroupSpec(spec) &&
      spec.granularity == ScaleGranularity::kGroup &&
      (spec.group_size == 128 || spec.group_size == 64);
  const bool groups_of_32 =
      IsMeasuredFourBitGroupSpec(spec) && HasGroupsOf32(spec);
  const bool zero_points = IsUint4ZeroPointGroupSpec(spec);
  const bool channel_wise = IsUint4ChannelSpec(spec);
  const bool taken_at_these_tokens =
      groups_of_128_or_64 || channel_wise ||
      (zero_points && (tokens == 16 || fp16_activations || fills_a_wave)) ||
      (groups_of_32 && (tokens == 16 || fills_a_wave));
  if ((tokens != 16 && tokens != 32) || !taken_at_these_tokens ||
      (!fp16_activations && spec.activation_type != DataType::kBf16) ||
      shape.n % 64 != 0 || blocks > sms || 11 * blocks < 6 * sms) {
    return std::nullopt;
  }
  const int64_t k_min = tokens == 16 ? 2048 : 3072;
  const bool larger_scale_chunks = zero_points || groups_of_32;
  const int64_t k_max = !fills_a_wave || larger_scale_chunks ? 8192
                        : tokens == 16 && !channel_wise      ? 14336
                                                             : 28672;
  if (shape.k < k_min || shape.k > k_max) return std::nullopt;
  // Groups of 32 at 32 tokens take them pre-scaled (PrescaledScalesWin,
  // kernels/gemm_decode_tile_options.cc, sets it on the plan's final tile).
  return KSplitCandidate(tokens, 16, 64, 512, 4, /*blocks_per_sm=*/1,
                         std::min(kOneBlockSharedBytes, smem_limit), spec,
                         shape);
}

// 8-bit weights at 9-32 tokens in two-warpgroup k-slices, unsplit, or
// nullopt where planner v64's and v65's rules do not take the spec and shape.
std::optional<GemmTileConfig> EightBitWarpgroupSliceTile(
    int tokens, const QuantSpec& spec, const LayerShape& shape, int sm_count,
    int smem_limit) {
  // Planner v64 (sweeps es, et, decode-notes v109): one 64-row block per SM
  // over the whole of K whose two warpgroups split each 256-column k-tile
  // (32x64x256 s6 ksplit=2 early=1, 256 threads; 8-bit rows make 512-column
  // tiles too large for four stages), against the plans' split tiles
  // (64-row halves three per SM or 128-row tiles, in 2-6 splits), uint8 /
  // e4m3 in groups of 128 with fp16 activations at M = 24 / 32 (and 17 on
  // 6144 x 4096): 6144 x 4096 (96 blocks) 9.83-10.20 us against 10.43-10.87
  // (the target at 32 is 8.77), 8192 x 8192 (128) 18.63-18.99 against
  // 21.15-21.51, 7168 x 4096 0.80x, 5120 x 4096 (80) 0.915-0.92x, 6144 x
  // 2048 0.77x, 6144 x 8192 0.94x. Four stages ran 0.4-2% and five 3-7%
  // slower than six, no early=1 2-3% (still ahead of the plans: what a
  // client before launch ABI 5 gets), 128-column k-tiles in ten stages
  // 0.99-1.05x the plan, four warpgroups of 64 columns each (warps=1x16
  // ksplit=4, sweep es) 1.00-1.04x. Where it lost: 4096 x 4096 (64 blocks,
  // 9.47-9.72 against 8.57-8.76) and bf16 activations (uint8 6144 x 4096
  // 15.41-15.44 against 14.07). So: fp16 activations, N / 64 filling 3/5
  // (80 of 132, the least measured) to all of the SMs (129-132 blocks
  // unmeasured), 2048 <= K <= 8192 (the measured K).
  // Planner v65 (sweep ev, decode-notes v111): the same at 9-16 tokens
  // (16x64x256), against the plans' 16x128x128 in 4 splits: 8192 x 8192 M =
  // 9 / 16 17.69-18.14 us against 19.29-19.57 (0.915-0.93x, uint8 and e4m3),
  // 7168 x 4096 (112 blocks) 8.88-9.34 against 10.45-10.66 (0.85-0.88x);
  // four warpgroups on 512 columns ran 0.93-0.94x / 0.84-0.86x there. On
  // 6144 x 4096 (96 blocks) v23's three-per-SM k-split blocks stayed best
  // (8.29-8.51 against 8.37-9.14), so at 16 tokens: N / 64 filling 5/6 (110
  // of 132; 112 the least measured) to all of the SMs, 4096 <= K <= 8192.
  // Both taken unmeasured, as the v20 / v23 / v59 rules take them: e5m2 and
  // int8 weights, channel-wise or tensor scales, groups of 256 and up, 2-D
  // blocks of 128 columns or more, scales of another type than the
  // activations (bf16, fp32, ue8m0), and other SM counts (the fills are
  // fractions of 132). Zero points and second scales, whose windows the
  // slices never ran with, do not take them.
  const bool at_16_tokens = tokens == 16;
  const int64_t blocks = shape.n / 64;
  const int64_t sms = sm_count;
  const int64_t fill_num = at_16_tokens ? 5 : 3;
  const int64_t fill_den = at_16_tokens ? 6 : 5;
  const int64_t k_min = at_16_tokens ? 4096 : 2048;
  if ((tokens != 16 && tokens != 32) || spec.weight.bits != 8 ||
      spec.activation_type != DataType::kFp16 ||
      HasUnmeasuredFineScales(spec) ||
      spec.zero_point != ZeroPointKind::kNone ||
      spec.secondary_scale != SecondaryScale::kNone || blocks > sms ||
      fill_den * blocks < fill_num * sms || shape.k < k_min || shape.k > 8192) {
    return std::nullopt;
  }
  return KSplitCandidate(tokens, 8, 64, 256, 6, /*blocks_per_sm=*/1,
                         std::min(kOneBlockSharedBytes, smem_limit), spec,
                         shape);
}

}  // namespace

std::optional<GemmTileConfig> KSplitWarpTile(int tokens, const QuantSpec& spec,
                                             const LayerShape& shape,
                                             int sm_count, int smem_limit) {
  if (std::optional<GemmTileConfig> slices =
          WarpgroupSliceTile(tokens, spec, shape, sm_count, smem_limit)) {
    return slices;
  }
  if (std::optional<GemmTileConfig> eight_bit_slices =
          EightBitWarpgroupSliceTile(tokens, spec, shape, sm_count,
                                     smem_limit)) {
    return eight_bit_slices;
  }
  const bool eight_bit = spec.weight.bits == 8;
  const bool at_16_tokens = tokens == 16;
  const bool fp16_activations = spec.activation_type == DataType::kFp16;
  if ((tokens != 8 && !at_16_tokens) || (spec.weight.bits > 4 && !eight_bit) ||
      HasUnmeasuredFineScales(spec)) {
    return std::nullopt;
  }
  if (at_16_tokens && !eight_bit) {
    // 4-bit weights at 16 tokens: 32-row blocks of sixteen warps, one per
    // SM, where N / 32 fills 2/3 to all of the SMs and 2048 < K <= 4096;
    // only the specs measured (IsMeasuredFourBitGroupSpec; since planner
    // v69 channel-wise scales and groups of 128 or 64 with integer zero
    // points, sweeps ff and fg on 4096 x 4096 at M = 12 / 16 against
    // 16x128x256 in 8 splits: channel 0.69-0.74x, fp16 M = 16 4.99-5.00 µs
    // against 6.82-6.83; zero points in groups of 128 0.83-0.86x, of 64
    // 0.76-0.82x, fp16 and bf16 alike).
    const int64_t rows32 = shape.n / 32;
    const bool spec_taken = IsMeasuredFourBitGroupSpec(spec) ||
                            IsUint4ChannelSpec(spec) ||
                            IsUint4ZeroPointGroupSpec(spec);
    if (!spec_taken || shape.n % 32 != 0 || rows32 > sm_count ||
        3 * rows32 < 2 * int64_t{sm_count} || shape.k <= 2048 ||
        shape.k > 4096) {
      return std::nullopt;
    }
    return KSplitCandidate(16, 16, 32, 1024, 4, /*blocks_per_sm=*/1,
                           std::min(kOneBlockSharedBytes, smem_limit), spec,
                           shape);
  }
  if (at_16_tokens && eight_bit && fp16_activations && shape.k >= 8192 &&
      shape.k <= 16384) {
    // 8-bit weights at 16 tokens on long K: the same 32-row blocks of
    // sixteen warps in three stages, unsplit, where N / 32 fills 15/16 to
    // all of the SMs (planner v59); else the split tiles below and in
    // gemm_decode_short_splits.cc.
    const int64_t rows32 = shape.n / 32;
    if (shape.n % 32 == 0 && rows32 <= sm_count &&
        16 * rows32 >= 15 * int64_t{sm_count}) {
      return KSplitCandidate(16, 16, 32, 1024, 3, /*blocks_per_sm=*/1,
                             std::min(kOneBlockSharedBytes, smem_limit), spec,
                             shape);
    }
  }
  const bool long_k_eight_bit = eight_bit && !at_16_tokens && fp16_activations;
  const int64_t two_per_sm = int64_t{2} * sm_count;
  const int64_t rows16 = shape.n / 16;
  const bool bf16_activations = spec.activation_type == DataType::kBf16;
  if (!eight_bit && !at_16_tokens && (fp16_activations || bf16_activations) &&
      shape.k > 8192) {
    // The least share of two per SM the blocks fill: 2/3 (fp16), 15/16
    // (bf16).
    const int64_t fill_num = fp16_activations ? 2 : 15;
    const int64_t fill_den = fp16_activations ? 3 : 16;
    if (!IsMeasuredFourBitGroupSpec(spec) || shape.k > 16384 ||
        shape.n % 16 != 0 || rows16 > two_per_sm ||
        fill_den * rows16 < fill_num * two_per_sm) {
      return std::nullopt;
    }
    return KSplitCandidate(8, 8, 16, 1024, 3, /*blocks_per_sm=*/0,
                           std::min(kTwoBlocksSharedBytes, smem_limit), spec,
                           shape);
  }
  const int64_t k_limit = !eight_bit ? 8192 : long_k_eight_bit ? 16384 : 4096;
  if (shape.k > k_limit) return std::nullopt;
  if (at_16_tokens && fp16_activations && shape.n % 16 == 0 &&
      rows16 > two_per_sm && rows16 <= 3 * int64_t{sm_count}) {
    return KSplitCandidate(16, 8, 16, 512, 3, /*blocks_per_sm=*/3,
                           std::min(kThreeBlocksSharedBytes, smem_limit), spec,
                           shape);
  }
  if (long_k_eight_bit && shape.k > 4096 && shape.k <= 8192 &&
      shape.n % 16 == 0 && rows16 > 3 * int64_t{sm_count} &&
      rows16 <= 2 * two_per_sm) {
    return KSplitCandidate(8, 8, 16, 512, 3, /*blocks_per_sm=*/4,
                           std::min(kFourBlocksSharedBytes, smem_limit), spec,
                           shape);
  }
  for (const int block_n : {16, 32}) {
    if (shape.n % block_n != 0 || shape.n / block_n > two_per_sm) continue;
    if (3 * (shape.n / block_n) < 2 * two_per_sm) return std::nullopt;
    const bool wide_block = block_n == 32;
    // Past K = 4096: 4-bit weights in 32-row blocks, 8-bit ones in 16-row.
    const bool long_k_block = eight_bit ? !wide_block : wide_block;
    if ((shape.k > 4096 && !long_k_block) || (at_16_tokens && wide_block)) {
      return std::nullopt;
    }
    // The measured k-tiles and stages (a 96 KB ring per block): at 8
    // tokens 4-bit weights BK 1024 with 4 stages of 16 rows or 3 of 32,
    // 8-bit ones 3 stages of BK 1024 (16 rows) or 4 of BK 512 (32 rows); at
    // 16 tokens 4 stages of BK 512.
    const int block_k = at_16_tokens || (eight_bit && wide_block) ? 512 : 1024;
    const int stages = at_16_tokens || eight_bit == wide_block ? 4 : 3;
    return KSplitCandidate(
        tokens, 8, block_n, block_k, stages, /*blocks_per_sm=*/0,
        std::min(kTwoBlocksSharedBytes, smem_limit), spec, shape);
  }
  return std::nullopt;
}

}  // namespace hummingd
