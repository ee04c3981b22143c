// Package remote is the RPC boundary for schedulers and submitters written in other
// languages: the simulator POSTs a JSON snapshot to an HTTP endpoint and applies the JSON
// answer. The protocol is documented in docs/sim.md.
package remote
