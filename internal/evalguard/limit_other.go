//go:build !linux

package evalguard

// limitAddressSpace does nothing where an address-space limit is not enforced (macOS) or does
// not exist (Windows): the heap check alone bounds the evaluation.
func limitAddressSpace(int64) {}
