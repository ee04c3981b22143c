// Package kube holds JSON-compatible subsets of the Kubernetes Pod and Node objects and their
// conversion to and from the simulator's compact types. The structs keep the field names and
// JSON layout of k8s.io/api/core/v1, so manifests and extender payloads read and write as the
// real API does, without the build cost of the Kubernetes modules.
package kube
