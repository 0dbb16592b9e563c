// Package metrics records what a run measures: per-worker latency histograms
// per operation, request/row/byte counters and errors by class, merged into
// interval snapshots without taking a lock on the hot path.
//
// Concurrency contract: a Recorder is owned by one worker goroutine, which is
// the only caller of its Record* methods. Registry.Tick may run concurrently
// from one other goroutine (the run's ticker); it flips each recorder to its
// other buffer with an atomic epoch and waits only for a record that is in
// progress at that instant, which is a few tens of nanoseconds.
package metrics
