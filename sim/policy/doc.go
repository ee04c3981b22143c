// Package policy holds whole-queue research schedulers (FIFO, FIFO with EASY backfill, SJF and
// SRTF with oracle durations, Tiresias's least-attained-service by GPU time or by time, its
// Gittins-index policy and starvation guard, DRF, per-user quotas) and the placement
// strategies they share (pack, spread, consolidated, first-fit), kept separate from the
// ordering so any order can be combined with any placement. Policies rank jobs: a gang is one.
package policy
