// Package policy holds whole-queue research schedulers (FIFO, FIFO with EASY backfill, SJF and
// SRTF with oracle durations, Tiresias-style least-attained-service, DRF, per-user quotas) and
// the placement strategies they share (spread, pack, consolidated), kept separate from the
// ordering so any order can be combined with any placement.
package policy
