// The stream-K work division (schedule/stream_k.cuh), compiled by the host
// compiler: walking every worker's run the way the wgmma skeleton does
// (gemm/wgmma_gemm.cuh: a segment per n-block, the next one from k-tile 0)
// must cover every (n-block, k-tile) of the layer exactly once, with
// segments of whole units, and the workers the skeleton counts in an
// n-block (stream_k_worker_of) must be exactly those that computed part of
// it, never more than the workspace's stream_k_slots.

#include "schedule/stream_k.cuh"

#include <map>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace hummingd {
namespace {

namespace hd = device;

struct Layer {
  long long n_blocks;
  int k_tiles;
  int lead;  // the copy ring's lead
};

void ExpectDivisionCovers(const Layer& layer, int workers) {
  SCOPED_TRACE(testing::Message()
               << layer.n_blocks << " n-blocks x " << layer.k_tiles
               << " k-tiles, lead " << layer.lead << ", " << workers
               << " workers");
  const int unit_tiles = hd::stream_k_unit_tiles(layer.k_tiles, layer.lead);
  ASSERT_GE(unit_tiles, layer.lead);
  ASSERT_EQ(layer.k_tiles % unit_tiles, 0);
  const int tile_units = layer.k_tiles / unit_tiles;
  const long long units = layer.n_blocks * tile_units;
  ASSERT_LE(workers, units);
  std::vector<std::vector<int>> owner(layer.n_blocks,
                                      std::vector<int>(layer.k_tiles, -1));
  std::map<long long, std::set<int>> sharers;
  const long long least = units / workers;
  for (int w = 0; w < workers; ++w) {
    const hd::StreamKRun run =
        hd::stream_k_run(units, workers, w, tile_units, unit_tiles);
    // floor or ceil of U / W units each.
    ASSERT_TRUE(run.tiles == least * unit_tiles ||
                run.tiles == (least + 1) * unit_tiles)
        << "worker " << w << " has " << run.tiles << " tiles";
    long long n_block = run.n_block;
    int k_tile = run.k_tile0;
    int done = 0;
    while (done < run.tiles) {
      const int segment = std::min(run.tiles - done, layer.k_tiles - k_tile);
      ASSERT_EQ(segment % unit_tiles, 0) << "worker " << w;
      ASSERT_GE(segment, layer.lead) << "worker " << w;
      ASSERT_LT(n_block, layer.n_blocks) << "worker " << w;
      for (int t = k_tile; t < k_tile + segment; ++t) {
        ASSERT_EQ(owner[n_block][t], -1)
            << "n-block " << n_block << " k-tile " << t << " twice";
        owner[n_block][t] = w;
      }
      sharers[n_block].insert(w);
      done += segment;
      ++n_block;
      k_tile = 0;
    }
  }
  const int slots = hd::stream_k_slots(tile_units, units, workers);
  for (long long b = 0; b < layer.n_blocks; ++b) {
    for (int t = 0; t < layer.k_tiles; ++t) {
      ASSERT_NE(owner[b][t], -1) << "n-block " << b << " k-tile " << t;
      // The skeleton finds the owner of every unit.
      EXPECT_EQ(hd::stream_k_worker_of(b * tile_units + t / unit_tiles, units,
                                       workers),
                owner[b][t]);
    }
    const int first = hd::stream_k_worker_of(b * tile_units, units, workers);
    const int last =
        hd::stream_k_worker_of((b + 1) * tile_units - 1, units, workers);
    // Contributors first .. last, every one of them present (an absent one
    // would never arrive and the n-block's sum would never be stored).
    ASSERT_EQ(static_cast<int>(sharers[b].size()), last - first + 1)
        << "n-block " << b;
    EXPECT_EQ(*sharers[b].begin(), first);
    EXPECT_EQ(*sharers[b].rbegin(), last);
    EXPECT_LE(last - first + 1, slots) << "n-block " << b;
  }
}

TEST(StreamK, UnitsAreTheSmallestDivisorAtLeastTheLead) {
  EXPECT_EQ(hd::stream_k_unit_tiles(32, 2), 2);
  EXPECT_EQ(hd::stream_k_unit_tiles(32, 3), 4);
  EXPECT_EQ(hd::stream_k_unit_tiles(28, 3), 4);
  EXPECT_EQ(hd::stream_k_unit_tiles(56, 5), 7);
  EXPECT_EQ(hd::stream_k_unit_tiles(7, 2), 7);  // prime: the whole row
  EXPECT_EQ(hd::stream_k_unit_tiles(64, 1), 1);
  EXPECT_EQ(hd::stream_k_unit_tiles(64, 0), 1);
}

TEST(StreamK, WorkerOfInvertsTheUnitBegins) {
  for (long long units : {1LL, 7LL, 264LL, 1792LL, 4097LL}) {
    for (int workers : {1, 2, 3, 132, 264}) {
      if (workers > units) continue;
      for (int w = 0; w < workers; ++w) {
        const long long begin = hd::stream_k_unit_begin(units, workers, w);
        const long long end = hd::stream_k_unit_begin(units, workers, w + 1);
        ASSERT_LT(begin, end);
        EXPECT_EQ(hd::stream_k_worker_of(begin, units, workers), w);
        EXPECT_EQ(hd::stream_k_worker_of(end - 1, units, workers), w);
      }
    }
  }
}

TEST(StreamK, LayersOfIssueFiveAndOddShapes) {
  // 28672 x 8192 in 128-row blocks of 256 / 128 columns, lead 2; 8192 x
  // 8192; 4096 x 14336; 6144 x 4096; 14336 x 4096; a prime k-tile count.
  for (const Layer& layer :
       {Layer{224, 32, 2}, Layer{224, 64, 2}, Layer{64, 64, 2},
        Layer{32, 112, 2}, Layer{48, 32, 2}, Layer{112, 32, 2},
        Layer{224, 32, 3}, Layer{5, 7, 2}, Layer{1, 64, 2}}) {
    const long long units =
        layer.n_blocks *
        (layer.k_tiles / hd::stream_k_unit_tiles(layer.k_tiles, layer.lead));
    for (int workers : {2, 3, 131, 132, 264, 396, 528}) {
      if (workers > units) continue;
      ExpectDivisionCovers(layer, workers);
    }
    ExpectDivisionCovers(layer, static_cast<int>(units));  // a unit each
  }
}

TEST(StreamK, SlotsBoundTheSharers) {
  // 224 n-blocks of 16 units on 264 workers, 13 or 14 units each: an
  // n-block holds the end of one run, at most one whole run and the start
  // of another.
  EXPECT_EQ(hd::stream_k_slots(16, 224 * 16, 264), 3);
  // One unit per n-block: never shared.
  EXPECT_EQ(hd::stream_k_slots(1, 100, 50), 1);
  // At most every worker.
  EXPECT_EQ(hd::stream_k_slots(64, 64, 2), 2);
}

}  // namespace
}  // namespace hummingd
